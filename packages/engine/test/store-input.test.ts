import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../src/errors.js';
import {
  assertStatuses,
  assertTimestamp,
  validateAuditEvent,
  validateBelief,
  validateEmbedding,
  validateOutboxInput,
  validatePatch,
  validateSearchOptions,
  validateUpdate,
} from '../src/store-kit/validate.js';
import { tombstoneOf } from '../src/store-kit/writes.js';
import { belief, scope, T0 } from './helpers.js';

const MAX = 1024;

function refuses(fn: () => unknown, field: string): void {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(InvalidInputError);
  expect((error as InvalidInputError).message).toContain(field);
}

describe('store input checks', () => {
  it('accepts ISO-8601 date-times only', () => {
    assertTimestamp(T0, 'at');
    assertTimestamp('2026-01-01T10:00:00+02:00', 'at');
    for (const bad of ['2026-01-01', 'Jan 1 2026', 'not a time', '2026-13-01T00:00:00Z', 42, null]) {
      refuses(() => assertTimestamp(bad, 'at'), 'at');
    }
  });

  it('defaults statuses to active and refuses empty or unknown ones', () => {
    expect(assertStatuses(undefined)).toEqual(['active']);
    expect(assertStatuses(['pending', 'active'])).toEqual(['pending', 'active']);
    refuses(() => assertStatuses([]), 'statuses');
    refuses(() => assertStatuses(['archived']), 'statuses');
    refuses(() => assertStatuses('active'), 'statuses');
  });

  it('bounds search limits', () => {
    expect(validateSearchOptions({ limit: 5 })).toEqual({
      limit: 5,
      statuses: ['active'],
      excludeGrants: [],
    });
    expect(validateSearchOptions({ limit: 5, excludeGrants: ['g'] }).excludeGrants).toEqual(['g']);
    refuses(() => validateSearchOptions({ limit: 5, excludeGrants: [42] }), 'excludeGrants[0]');
    for (const limit of [0, -1, 2.5, Number.NaN, 10_001])
      refuses(() => validateSearchOptions({ limit }), 'limit');
    refuses(() => validateSearchOptions({ limit: 1001 }, 1000), 'limit');
    refuses(() => validateSearchOptions(null), 'options');
  });

  it('returns a detached canonical copy of a valid belief and names the bad field otherwise', () => {
    const good = { ...belief('city', 'Oslo'), scope: { userId: 'u1' }, extra: 'dropped' };
    const copy = validateBelief(good, 'b', MAX);
    expect(copy.scope).toEqual(scope);
    expect(copy).not.toHaveProperty('extra');
    expect(copy.evidence).not.toBe(good.evidence);
    refuses(() => validateBelief({ ...good, value: '' }, 'b', MAX), 'b.value');
    refuses(() => validateBelief({ ...good, statement: 'x'.repeat(MAX + 1) }, 'b', MAX), 'b.statement');
    refuses(() => validateBelief({ ...good, subject: 's'.repeat(257) }, 'b', MAX), 'b.subject');
    refuses(() => validateBelief({ ...good, version: 0 }, 'b', MAX), 'b.version');
    refuses(
      () => validateBelief({ ...good, evidence: [{ sessionId: 's', position: -1 }] }, 'b', MAX),
      'b.evidence[0].position',
    );
    // A forgotten tombstone carries no content.
    const tomb = tombstoneOf(good, T0);
    expect(validateBelief(tomb, 'b', MAX).status).toBe('forgotten');
  });

  it('refuses patches that forget, and non-positive expected versions', () => {
    expect(validatePatch({ updatedAt: T0, confidence: 0.5 }, 'set', MAX)).toEqual({
      updatedAt: T0,
      confidence: 0.5,
    });
    refuses(() => validatePatch({ updatedAt: T0, status: 'forgotten' }, 'set', MAX), 'set.status');
    refuses(() => validatePatch({ updatedAt: T0, confidence: Number.NaN }, 'set', MAX), 'set.confidence');
    refuses(
      () => validateUpdate({ id: 'b1', expectedVersion: 0, set: { updatedAt: T0 } }, 'u', MAX),
      'u.expectedVersion',
    );
  });

  it('keeps only known audit fields and refuses unknown actions', () => {
    const event = validateAuditEvent({ at: T0, scope, action: 'add', actor: 'engine', text: 'secret' }, 'a');
    expect(event).toEqual({ at: T0, scope, beliefId: null, action: 'add', actor: 'engine' });
    refuses(
      () => validateAuditEvent({ at: T0, scope, beliefId: null, action: 'drop', actor: 'x' }, 'a'),
      'a.action',
    );
  });

  it('checks embeddings and outbox turns', () => {
    expect(validateEmbedding(undefined, 'e')).toBeNull();
    refuses(() => validateEmbedding(new Float32Array(0), 'e'), 'e');
    refuses(() => validateEmbedding(new Float32Array([1, Number.NaN]), 'e'), 'e');
    refuses(() => validateEmbedding([1, 2], 'e'), 'e');
    const turn = { scope, sessionId: 's', position: 0, role: 'user', text: 'hi', at: T0 };
    expect(validateOutboxInput(turn, 'entry', MAX)).toEqual(turn);
    refuses(() => validateOutboxInput({ ...turn, role: 'system' }, 'entry', MAX), 'entry.role');
    refuses(() => validateOutboxInput({ ...turn, text: ' ' }, 'entry', MAX), 'entry.text');
  });
});
