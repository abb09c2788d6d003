import { ConfigError } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { bearerToken, namedUsers, parseTokenSpecs, TokenTable } from './http-tokens.js';

const A = 'alice-token-0123456789';
const B = 'bob-token-0123456789ab';

describe('per-user token specs', () => {
  it('parses TOKEN:users lines, skipping blanks and comments', () => {
    expect(parseTokenSpecs(`# tokens\n\n${A}:alice\r\n  ${B} : bob, team-* \n`)).toEqual([
      { token: A, users: ['alice'] },
      { token: B, users: ['bob', 'team-*'] },
    ]);
  });

  it('refuses bad lines with the line number and without the token', () => {
    const cases: [string, RegExp][] = [
      [`# c\n${A}\n`, /line 2: expected the token, a colon/],
      [`${A}: , \n`, /line 1: the token names no user/],
      ['short:alice\n', /line 1: .*at least 16 characters/],
      ['# only a comment\n', /holds no token/],
    ];
    for (const [text, message] of cases) {
      let thrown: unknown;
      try {
        parseTokenSpecs(text);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).not.toContain(A);
      expect((thrown as Error).message).not.toContain('short');
    }
  });
});

describe('token table', () => {
  it('finds the grant a token is, and nothing for a near miss', () => {
    const table = new TokenTable([{ token: A }, { token: B, users: ['bob'] }]);
    expect(table.match(A)).toBe(0);
    expect(table.match(B)).toBe(1);
    for (const miss of ['', A.slice(0, -1), `${A}x`, A.toUpperCase(), `${B} `])
      expect(table.match(miss)).toBeUndefined();
  });

  it('refuses no token, a short one, one with spaces and the same one twice', () => {
    expect(() => new TokenTable([])).toThrow(ConfigError);
    expect(() => new TokenTable([{ token: 'short' }])).toThrow(/at least 16/);
    expect(() => new TokenTable([{ token: 'has a space in it 0123' }])).toThrow(/without spaces/);
    expect(() => new TokenTable([{ token: A }, { token: A, users: ['x'] }])).toThrow(/twice/);
  });

  it('reads a Bearer authorization header only', () => {
    expect(bearerToken(`Bearer ${A}`)).toBe(A);
    expect(bearerToken(`bearer ${A}`)).toBe(A);
    expect(bearerToken(`Basic ${A}`)).toBeUndefined();
    expect(bearerToken(`Bearer ${A} extra`)).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

describe('users a JSON-RPC request names', () => {
  it('finds userId of tool calls and prompts and the user of resource reads, in batches too', () => {
    const call = (userId?: unknown) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_memory', arguments: userId === undefined ? {} : { userId } },
    });
    expect(namedUsers(call('bob'))).toEqual(['bob']);
    expect(namedUsers(call())).toEqual([]);
    expect(namedUsers(call(42))).toEqual([]);
    expect(
      namedUsers([
        call('a'),
        { method: 'prompts/get', params: { name: 'with-memory', arguments: { question: 'q', userId: 'b' } } },
        { method: 'resources/read', params: { uri: 'mem01://users/team%2Fx%20y/profile' } },
        { method: 'resources/read', params: { uri: 'mem01://users/%E0%A4%A/profile' } },
        { method: 'tools/list', params: {} },
        null,
        'junk',
      ]),
    ).toEqual(['a', 'b', 'team/x y', '%E0%A4%A']);
  });
});
