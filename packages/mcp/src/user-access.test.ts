import { ConfigError, InvalidInputError } from '@mem01/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globMatcher, parseAllowUsers, UserAccess } from './user-access.js';

describe('user access', () => {
  it('a single-user server resolves only its user, in its namespace', () => {
    const access = new UserAccess({ mode: 'single', userId: 'alice', namespace: 'proj' });
    expect(access.resolve(undefined)).toEqual({ userId: 'alice', namespace: 'proj' });
    expect(access.resolve('alice')).toEqual({ userId: 'alice', namespace: 'proj' });
    for (const other of ['bob', 'Alice', 'alice ', '*', '']) {
      expect(() => access.resolve(other)).toThrow(InvalidInputError);
    }
  });

  it('a multi-user server needs patterns, and takes only matching, valid ids', () => {
    expect(() => new UserAccess({ mode: 'multi', allowUsers: [] })).toThrow(ConfigError);
    expect(() => new UserAccess({ mode: 'multi', allowUsers: ['a-*'], defaultUserId: 'b' })).toThrow(
      ConfigError,
    );
    const access = new UserAccess({ mode: 'multi', allowUsers: parseAllowUsers(['team-*, ops-?', 'dave']) });
    expect(access.allowUsers).toEqual(['team-*', 'ops-?', 'dave']);
    expect(() => access.resolve(undefined)).toThrow(/is required/);
    expect(access.resolve('team-x')).toEqual({ userId: 'team-x', namespace: '' });
    expect(access.resolve('ops-1').userId).toBe('ops-1');
    for (const bad of ['team', 'ops-12', 'davey', 'TEAM-x'])
      expect(() => access.resolve(bad)).toThrow(/not allowed/);
    expect(() => access.resolve('team-\u0000')).toThrow(/control characters/);
  });

  it('globs match whole ids by code point, with * and ? only, in linear-ish time', () => {
    expect(globMatcher('*')('anything at all')).toBe(true);
    expect(globMatcher('a.b')('axb')).toBe(false);
    expect(globMatcher('u[1]')('u[1]')).toBe(true);
    expect(globMatcher('?')('🙂')).toBe(true);
    expect(globMatcher('a*b*c')('a-b-c')).toBe(true);
    expect(globMatcher('a*b*c')('a-b-d')).toBe(false);
    // A pattern that would backtrack exponentially as a regular expression answers at once.
    expect(globMatcher('*a*a*a*a*a*a*a*b')('a'.repeat(256))).toBe(false);
    // Against a reference: the same glob as an anchored regular expression, on a small alphabet.
    const reference = (glob: string) =>
      new RegExp(`^${[...glob].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c)).join('')}$`, 'su');
    const small = fc.string({ unit: fc.constantFrom('a', 'b', '*', '?'), maxLength: 8 });
    fc.assert(
      fc.property(
        small,
        fc.string({ unit: fc.constantFrom('a', 'b', '*', '?'), maxLength: 10 }),
        (glob, id) => {
          expect(globMatcher(glob)(id)).toBe(reference(glob).test(id));
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (prefix, rest) => {
        expect(globMatcher(`${prefix.replace(/[*?]/g, '')}*`)(`${prefix.replace(/[*?]/g, '')}${rest}`)).toBe(
          true,
        );
      }),
    );
  });
});

describe('user access narrowed to a per-user token', () => {
  it('serves only ids both the server and the token allow; the default only when the token names it', () => {
    const server = new UserAccess({ mode: 'multi', allowUsers: ['team-*', 'alice'], defaultUserId: 'alice' });
    const team = server.narrow(['team-a', 'team-b*', 'zed']);
    expect(team.grantedUsers).toEqual(['team-a', 'team-b*', 'zed']);
    expect(team.resolve('team-a').userId).toBe('team-a');
    expect(team.resolve('team-bx').userId).toBe('team-bx');
    for (const bad of ['team-c', 'alice', 'zed']) expect(() => team.resolve(bad)).toThrow(/not allowed/);
    expect(team.defaultUserId).toBeUndefined();
    expect(() => team.resolve(undefined)).toThrow(/is required/);
    expect(server.narrow(['alice']).resolve(undefined).userId).toBe('alice');
    // The server's own policy is unchanged.
    expect(server.resolve('team-c').userId).toBe('team-c');
    expect(() => server.narrow([' ', ''])).toThrow(ConfigError);
  });

  it('a single-user server takes only tokens that name its user', () => {
    const single = new UserAccess({ mode: 'single', userId: 'alice' });
    expect(single.narrow(['ali*']).resolve(undefined).userId).toBe('alice');
    expect(() => single.narrow(['bob'])).toThrow(/does not name the served user/);
  });
});
