import { describe, expect, it } from 'vitest';
import { DuplicateActiveBeliefError, StoreError } from '../errors.js';
import {
  claimBatch,
  decodeProcessIdentity,
  encodeProcessIdentity,
  processHasExited,
  validateProcessIdentity,
} from './outbox.js';
import {
  decodeListCursor,
  encodeListCursor,
  listPage,
  MAX_QUERY_TERMS,
  queryTerms,
  validateListOptions,
} from './reads.js';
import { beliefFromRow, beliefRow } from './rows.js';
import {
  encodeItem,
  MAX_ITEM_BYTES,
  mayUseSession,
  suffixMatches,
  validateAppend,
  validateSessionCall,
} from './transcript.js';
import { validateCommit, validateImport } from './writes.js';

const owner = { userId: 'alice' };
const T = '2025-01-01T00:00:00.000Z';

/** Expects `fn` to throw `InvalidInputError` naming `field`. */
const refuses = (fn: () => unknown, field: string) =>
  expect(fn).toThrow(expect.objectContaining({ name: 'InvalidInputError', field }));

describe('list cursor', () => {
  it('round-trips any id, and refuses what list() did not hand out', () => {
    for (const id of ['01J0000000', 'ü 🙂 "quoted"', 'a'.repeat(256)]) {
      expect(decodeListCursor(encodeListCursor(id))).toBe(id);
    }
    for (const bad of ['', 'not-a-cursor', encodeListCursor('x').slice(0, -2), 42, null]) {
      refuses(() => decodeListCursor(bad), 'cursor');
    }
    expect(validateListOptions({ cursor: encodeListCursor('b') })).toEqual({
      statuses: ['active'],
      limit: 100,
      before: 'b',
      excludeGrants: [],
      kinds: null,
      sessionId: null,
    });
    refuses(() => validateListOptions({ limit: 1001 }), 'limit');
    expect(validateListOptions({ kinds: ['fact', 'episode', 'fact'], sessionId: 's1' })).toMatchObject({
      kinds: ['fact', 'episode'],
      sessionId: 's1',
    });
    refuses(() => validateListOptions({ kinds: [] }), 'kinds');
    refuses(() => validateListOptions({ kinds: ['mood' as never] }), 'kinds');
    refuses(() => validateListOptions({ sessionId: '' }), 'sessionId');
    expect(validateListOptions({ excludeGrants: ['g1', 'g1', 'g2'] }).excludeGrants).toEqual(['g1', 'g2']);
    refuses(() => validateListOptions({ excludeGrants: 'g1' as never }), 'excludeGrants');
    refuses(() => validateListOptions({ excludeGrants: [''] }), 'excludeGrants[0]');
  });

  it('a page has a cursor only when more items follow', () => {
    const items = ['d', 'c', 'b'].map((id) => ({ id }));
    expect(listPage(items, 3)).toEqual({ items, nextCursor: null });
    const page = listPage(items, 2);
    expect(page.items.map((i) => i.id)).toEqual(['d', 'c']);
    expect(decodeListCursor(page.nextCursor)).toBe('c');
  });
});

describe('query terms', () => {
  it('are the distinct content words, at most 64; no character is syntax', () => {
    expect(queryTerms('Where does the user LIVE? live, lives')).toEqual(['user', 'live', 'lives']);
    expect(queryTerms('" OR 1=1 -- NEAR( * \u0000 🎉 user\'s')).toEqual(['1', 'near', 'user']);
    expect(queryTerms('the and of what is my')).toEqual([]);
    const many = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    expect(queryTerms(many)).toHaveLength(MAX_QUERY_TERMS);
    refuses(() => queryTerms(42), 'query');
  });
});

describe('transcript', () => {
  it('one item size cap, checked on the encoded JSON', () => {
    expect(encodeItem({ a: '\u0000' }, 'items[0]')).toBe('{"a":"\\u0000"}');
    refuses(() => encodeItem({ text: 'x'.repeat(MAX_ITEM_BYTES) }, 'items[0]'), 'items[0]');
    refuses(() => encodeItem(undefined, 'items[1]'), 'items[1]');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    refuses(() => encodeItem(cyclic, 'items[2]'), 'items[2]');
  });

  it('append checks the owner first, then every argument', () => {
    refuses(() => validateAppend(undefined, 's', [], {}, 100), 'owner');
    refuses(() => validateAppend({ userId: '' }, 's', [], {}, 100), 'owner.userId');
    refuses(() => validateAppend(owner, '', [], {}, 100), 'sessionId');
    refuses(() => validateAppend(owner, 's', 'x' as never, {}, 100), 'items');
    refuses(() => validateAppend(owner, 's', [{ n: 0 }, 1], {}, 100), 'items[1]');
    refuses(
      () => validateAppend(owner, 's', [{ n: 1 }], { operationFingerprint: '' }, 100),
      'operationFingerprint',
    );
    refuses(
      () => validateAppend(owner, 's', [{ n: 1 }], { replaceSuffix: {} as never }, 100),
      'replaceSuffix',
    );
    const turn = { index: 0, role: 'user' as const, text: 'hello', at: T };
    refuses(
      () => validateAppend(owner, 's', [{ n: 1 }], { enqueue: [{ ...turn, index: 1 }] }, 100),
      'enqueue[0].index',
    );
    refuses(
      () => validateAppend(owner, 's', [{ n: 1 }], { enqueue: [{ ...turn, text: 'x'.repeat(101) }] }, 100),
      'enqueue[0].text',
    );
  });

  it('without a fingerprint, the same append gets the same one and another append another', () => {
    const a = validateAppend(owner, 's', [{ n: 1 }], { operationId: 'op' }, 100);
    expect(validateAppend(owner, 's', [{ n: 1 }], { operationId: 'op' }, 100).fingerprint).toBe(
      a.fingerprint,
    );
    expect(validateAppend(owner, 's', [{ n: 2 }], { operationId: 'op' }, 100).fingerprint).not.toBe(
      a.fingerprint,
    );
    expect(validateAppend({ userId: 'bob' }, 's', [{ n: 1 }], {}, 100).fingerprint).not.toBe(a.fingerprint);
    expect(validateAppend(owner, 's', [], { operationFingerprint: 'f' }, 100).fingerprint).toBe('f');
  });

  it('a suffix matches by value, whatever the key order; ownership by user and namespace', () => {
    const suffix = validateAppend(owner, 's', [], { replaceSuffix: [{ b: 1, a: [2] }] }, 100).replaceSuffix!;
    expect(suffixMatches(['{"a":[2],"b":1}'], suffix)).toBe(true);
    expect(suffixMatches(['{"a":[2],"b":2}'], suffix)).toBe(false);
    expect(suffixMatches([], suffix)).toBe(false);
    const alice = { userId: 'alice', namespace: '' };
    expect(mayUseSession(alice, undefined)).toBe(true);
    expect(mayUseSession(alice, { userId: null, namespace: null })).toBe(true);
    expect(mayUseSession(alice, { userId: 'alice', namespace: null })).toBe(true);
    expect(mayUseSession(alice, { userId: 'alice', namespace: 'work' })).toBe(false);
    expect(mayUseSession(alice, { userId: 'bob', namespace: '' })).toBe(false);
    expect(validateSessionCall(alice, 's', -1).limit).toBe(0);
    expect(validateSessionCall(alice, 's', 2.7).limit).toBe(2);
    refuses(() => validateSessionCall(alice, 's', Number.NaN), 'limit');
  });
});

describe('writes', () => {
  const belief = (id: string, attribute = 'city', status = 'active') => ({
    id,
    scope: owner,
    kind: 'fact',
    subject: 'user',
    attribute,
    value: 'x',
    statement: 'The user x.',
    confidence: 0.9,
    status,
    supersedes: null,
    supersededBy: null,
    version: 1,
    validFrom: null,
    validTo: null,
    storedAt: T,
    updatedAt: T,
    invalidatedAt: null,
    evidence: [],
    source: 'extracted',
  });

  it('a commit with two active beliefs on one key, or a belief of another scope, is refused', () => {
    const request = (inserts: unknown[]) =>
      validateCommit({ scope: owner, inserts, updates: [], audit: [] } as never, 1000);
    expect(() => request([{ belief: belief('a') }, { belief: belief('b') }])).toThrow(
      DuplicateActiveBeliefError,
    );
    expect(
      request([{ belief: belief('a') }, { belief: belief('b', 'city', 'pending') }]).inserts,
    ).toHaveLength(2);
    refuses(
      () => request([{ belief: { ...belief('a'), scope: { userId: 'bob' } } }]),
      'inserts[0].belief.scope',
    );
  });

  it('an import keeps the first record of a repeated id', () => {
    const first = belief('a');
    const valid = validateImport([{ belief: first }, { belief: { ...first, value: 'y' } }], 1000);
    expect(valid.map((r) => r.belief.value)).toEqual(['x']);
  });
});

describe('rows and claims', () => {
  it('a corrupt row is a StoreError', () => {
    expect(() => beliefFromRow({ id: 1 })).toThrow(StoreError);
  });

  it('a belief patch sets the columns it names (null ones too), evidence as JSON, then updated_at', () => {
    expect(beliefRow.patchColumns({ updatedAt: T })).toEqual([['updated_at', T]]);
    const evidence = [{ sessionId: 's', position: 0, role: 'user' as const, quote: 'q', at: T }];
    expect(
      beliefRow.patchColumns({
        status: 'superseded',
        supersededBy: 'b2',
        validTo: null,
        evidence,
        updatedAt: T,
      }),
    ).toEqual([
      ['status', 'superseded'],
      ['superseded_by', 'b2'],
      ['valid_to', null],
      ['evidence', JSON.stringify(evidence)],
      ['updated_at', T],
    ]);
  });

  it('a claim batch stays in the first namespace, within the limits, and stops at an entry that must wait', () => {
    const e = (namespace: string, text: string, wait = false) => ({ namespace, text, wait });
    const pending = [e('', 'aaaa'), e('', 'bbbb'), e('', 'cccc', true), e('', 'dddd')];
    const ok = (x: { wait: boolean }) => !x.wait;
    expect(claimBatch(pending, { maxEntries: 9, maxChars: null }, ok)).toHaveLength(2);
    expect(claimBatch(pending, { maxEntries: 1, maxChars: null }, ok)).toHaveLength(1);
    expect(claimBatch(pending, { maxEntries: 9, maxChars: 6 }, ok)).toHaveLength(1);
    expect(claimBatch(pending, { maxEntries: 9, maxChars: 0 }, ok)).toHaveLength(1);
    expect(claimBatch([e('', 'a'), e('work', 'b')], { maxEntries: 9, maxChars: null })).toHaveLength(1);
    // ... and with the first entry's capture grant (none is a grant of its own).
    const g = (grantId: string | null) => ({ namespace: '', text: 'x', grantId });
    expect(claimBatch([g('g1'), g('g1'), g('g2')], { maxEntries: 9, maxChars: null })).toHaveLength(2);
    expect(claimBatch([g(null), g('g1')], { maxEntries: 9, maxChars: null })).toHaveLength(1);
    expect(claimBatch([g('g1'), g(null)], { maxEntries: 9, maxChars: null })).toHaveLength(1);
  });
});

describe('lease owners', () => {
  const self = { host: 'h1', pid: 100, startedAt: 1_000_000, token: 'me' };
  // On host h1, pid 7 (and this process, 100) run; no other pid does.
  const exists = (pid: number) => pid === 7 || pid === 100;

  it('round-trip through the outbox column; rows of older versions or garbage have no owner', () => {
    expect(decodeProcessIdentity(encodeProcessIdentity(self))).toEqual(self);
    for (const bad of [null, '', 'x', '[1,2]', '["h",1.5,0,"t"]', '{"host":"h"}', 42]) {
      expect(decodeProcessIdentity(bad)).toBeNull();
    }
    expect(() => validateProcessIdentity({ ...self, pid: 0 }, 'leaseOwner')).toThrow(/leaseOwner\.pid/);
    expect(() => validateProcessIdentity({ ...self, host: '' }, 'leaseOwner')).toThrow(/leaseOwner\.host/);
  });

  it('only an exited process of this host, or this pid with an earlier start, counts as exited', () => {
    const other = (o: Partial<typeof self>) => ({ ...self, token: 'other', ...o });
    expect(processHasExited(other({ pid: 8 }), self, exists)).toBe(true);
    expect(processHasExited(other({ pid: 7 }), self, exists)).toBe(false);
    expect(processHasExited(other({ pid: 8, host: 'h2' }), self, exists)).toBe(false);
    expect(processHasExited(other({ startedAt: self.startedAt - 60_000 }), self, exists)).toBe(true);
    // Another thread of this process: same pid, same start (within the tolerance), another token.
    expect(processHasExited(other({ startedAt: self.startedAt + 3 }), self, exists)).toBe(false);
    expect(processHasExited(self, self, () => false)).toBe(false);
    expect(processHasExited(null, self, () => false)).toBe(false);
  });
});
