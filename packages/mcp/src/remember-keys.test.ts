import { MAX_POSITION } from '@mem01/engine/store-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  conversationSessionId,
  StatementKeys,
  scopeTag,
  statementPosition,
  statementSessionId,
  type TurnKey,
} from './remember-keys.js';

const alice = { userId: 'alice', namespace: '' };
const at = new Date('2026-05-01T10:23:45.000Z');

/** An outbox as the stores keep it: one entry per session id + position + text. */
function outbox() {
  const keys = new Set<string>();
  return {
    keys,
    enqueue: (text: string) => async (k: TurnKey) => {
      const id = `${k.sessionId}:${k.position}:${text}`;
      if (keys.has(id)) return false;
      keys.add(id);
      return true;
    },
  };
}

describe('remember keys', () => {
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
    expect(conversationSessionId(alice, 'chat-1')).toBe(`mcp:${scopeTag(alice)}:c:chat-1`);
  });

  it('property: positions are 31-bit, stable for a text and distinct across texts and attempts', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat({ max: 63 }), (text, attempt) => {
        const p = statementPosition(text, attempt);
        expect(Number.isInteger(p) && p >= 0 && p <= MAX_POSITION).toBe(true);
        expect(statementPosition(text, attempt)).toBe(p);
      }),
    );
    const seen = new Set(Array.from({ length: 2000 }, (_, i) => statementPosition(`statement ${i}`)));
    expect(seen.size).toBe(2000);
  });

  it('a retry is skipped; a statement said again after another is accepted anew; distinct ones always are', async () => {
    const keys = new StatementKeys();
    const box = outbox();
    const say = (text: string) => keys.run(alice, text, at, box.enqueue(text));
    const a1 = await say('I live in Lisbon.');
    expect(a1.duplicate).toBe(false);
    expect(await say('I live in Lisbon.')).toEqual({ key: a1.key, duplicate: true });
    expect((await say('I live in Porto.')).duplicate).toBe(false);
    const a2 = await say('I live in Lisbon.');
    expect(a2.duplicate).toBe(false);
    expect(a2.key.position).not.toBe(a1.key.position);
    expect(await say('I live in Lisbon.')).toEqual({ key: a1.key, duplicate: true });
    expect(box.keys.size).toBe(3);
  });

  it('a statement another server accepted first is a retry here', async () => {
    const box = outbox();
    const text = 'I live in Lisbon.';
    const first = await new StatementKeys().run(alice, text, at, box.enqueue(text));
    const second = new StatementKeys();
    await second.run(alice, 'I live in Porto.', at, box.enqueue('I live in Porto.'));
    expect(await second.run(alice, text, at, box.enqueue(text))).toEqual({ key: first.key, duplicate: true });
  });

  it('serialises the calls of one scope, so concurrent repeats of one statement store it once', async () => {
    const keys = new StatementKeys();
    const box = outbox();
    const text = 'My favorite color is teal.';
    const results = await Promise.all(
      Array.from({ length: 8 }, () => keys.run(alice, text, at, box.enqueue(text))),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(box.keys.size).toBe(1);
  });
});
