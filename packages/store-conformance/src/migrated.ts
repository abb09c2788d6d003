/**
 * What a store's migration test checks after opening a database an earlier schema wrote: the features of the current
 * schema work on the old rows. Each store writes its old databases its own way; the checks after opening are these.
 */
import {
  type CaptureGrant,
  DuplicateOperationError,
  type FullStore,
  MemoryEngine,
  type Scope,
} from '@mem01/engine';
import { normalizeScope } from '@mem01/engine/store-kit';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { expect } from 'vitest';
import { belief, rejects, t, turn, unique } from './fixtures.js';

/**
 * Checks, on a store just migrated from an earlier schema, that the current schema's features work for `scope`, whose
 * belief `oldId` the earlier schema wrote: access counts, host metadata, operation keys, capture grants (with keys and
 * host ids, and bound to what they capture) and budgets.
 */
export async function expectCurrentFeatures(store: FullStore, scope: Scope, oldId: string): Promise<void> {
  await store.recordAccess(scope, [{ id: oldId, count: 2 }], t(3));
  expect((await store.get(scope, oldId))?.accessCount).toBe(2);
  const tagged = { ...belief(scope, { attribute: 'pet', value: 'cat' }), metadata: { tag: 'x' } };
  const record = {
    key: 'k',
    fingerprint: 'ab'.repeat(32),
    action: 'remember' as const,
    beliefIds: [tagged.id],
    outcome: 'belief',
    at: t(4),
  };
  await store.commit({ scope, inserts: [{ belief: tagged }], updates: [], audit: [], operation: record });
  expect(await store.get(scope, tagged.id)).toEqual(tagged);
  expect(await store.getOperation(scope, 'k')).toEqual(record);
  const grant = {
    id: 'g1',
    scope,
    intentDigest: 'cd'.repeat(32),
    grantedAt: t(1),
    expiresAt: null,
    revokedAt: null,
  };
  await store.recordGrant(grant);
  expect(await store.activeGrant(scope, t(2))).toEqual({ ...grant, scope: normalizeScope(scope) });
  const charge = {
    userId: scope.userId,
    windowStart: t(0),
    charges: [{ name: 'calls', amount: 1, limit: 1 }],
  };
  expect((await store.chargeBudget(charge)).charged).toBe(true);
  expect((await store.chargeBudget(charge)).charged).toBe(false);
  // Grants with a key and host ids; beliefs and turns bound to a grant; reads that leave a grant's beliefs out.
  const keyed = { ...grant, id: 'g2', key: 'consent', policyId: 'p', principalId: 'u', decisionId: 'd' };
  await store.recordGrant(keyed);
  await rejects(store.recordGrant({ ...keyed, id: 'g3' }), DuplicateOperationError);
  expect((await store.listGrants(scope)).map((g) => g.key)).toEqual([undefined, 'consent']);
  const bound = { ...belief(scope, { attribute: 'diet', value: 'vegan' }), grantId: 'g2' };
  await store.commit({ scope, inserts: [{ belief: bound }], updates: [], audit: [] });
  expect(await store.get(scope, bound.id)).toEqual(bound);
  expect((await store.list(scope, { excludeGrants: ['g2'] })).items.map((b) => b.id)).not.toContain(bound.id);
  const newcomer = { userId: unique('migrated-') };
  await store.enqueue([{ ...turn(newcomer, 's', 0, 'x'), grantId: 'g2' }]);
  const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: t(5), userId: newcomer.userId });
  expect(claim?.entries.map((e) => e.grantId)).toEqual(['g2']);
  await store.drop(claim!, { reason: 'capture grant g2 was revoked' });
  expect((await store.backlog({ now: t(6), userId: newcomer.userId })).dead).toBe(1);
}

/**
 * Checks that a grant an earlier schema recorded (`old`, as the test wrote it: no key or host ids) keeps working once
 * migrated: it reads back as it was, an engine requiring grants captures under it (binding what it captures to it),
 * and revoking it hides what it captured.
 */
export async function expectOldGrantWorks(store: FullStore, old: CaptureGrant): Promise<void> {
  const scope = normalizeScope(old.scope);
  expect(await store.listGrants(scope)).toEqual([{ ...old, scope }]);
  const e = new MemoryEngine({
    store,
    extractor: new KeyValueExtractor(),
    embedder: null,
    config: { requireCaptureGrant: true, episodic: false },
  });
  expect((await e.activeCaptureGrant(scope))?.id).toBe(old.id);
  await e.accept([turn(scope, unique('s-'), 0, 'garden=roses', new Date().toISOString())]);
  await e.flush(scope);
  const [roses] = await e.recall(scope, 'garden roses');
  expect([roses?.belief.value, roses?.belief.grantId]).toEqual(['roses', old.id]);
  expect(await e.revokeCapture(scope)).toBe(1);
  expect(await e.recall(scope, 'garden roses')).toEqual([]);
  await e.close();
}
