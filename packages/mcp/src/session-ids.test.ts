import { MAX_POSITION } from '@mem01/engine/binding-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientSessionId, scopeTag, statementPosition, statementSessionId } from './session-ids.js';

const alice = { userId: 'alice', namespace: '' };
const at = new Date('2026-05-01T10:23:45.000Z');

describe('session ids and positions of what clients remember', () => {
  it('session ids carry a digest of the scope and the ten-minute window', () => {
    expect(statementSessionId(alice, at)).toBe(`mcp:${scopeTag(alice)}:20260501T1020Z`);
    expect(statementSessionId(alice, new Date('2026-05-01T10:29:59.999Z'))).toBe(
      statementSessionId(alice, at),
    );
    expect(statementSessionId(alice, new Date('2026-05-01T10:30:00.000Z'))).not.toBe(
      statementSessionId(alice, at),
    );
    expect(scopeTag(alice)).toMatch(/^[0-9a-f]{24}$/);
    expect(scopeTag({ userId: 'alice', namespace: 'x' })).not.toBe(scopeTag(alice));
    expect(scopeTag({ userId: 'alice\u0000', namespace: '' })).not.toBe(
      scopeTag({ userId: 'alice', namespace: '\u0000' }),
    );
    expect(clientSessionId(alice, 'chat-1')).toBe(`mcp:${scopeTag(alice)}:c:chat-1`);
  });

  it('property: positions are 31-bit, stable for a text and a time, distinct across texts and times', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 4e12 }), (text, ms) => {
        const p = statementPosition(text, new Date(ms));
        expect(Number.isInteger(p) && p >= 0 && p <= MAX_POSITION).toBe(true);
        expect(statementPosition(text, new Date(ms))).toBe(p);
      }),
    );
    const texts = new Set(Array.from({ length: 2000 }, (_, i) => statementPosition(`statement ${i}`, at)));
    expect(texts.size).toBe(2000);
    const times = new Set(
      Array.from({ length: 2000 }, (_, i) =>
        statementPosition('I live in Lisbon.', new Date(at.getTime() + i)),
      ),
    );
    expect(times.size).toBe(2000);
  });
});
