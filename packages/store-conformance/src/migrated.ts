/**
 * What a store's migration test checks after opening a database an earlier schema wrote: the features of the current
 * schema work on the old rows. Each store writes its old databases its own way; the checks after opening are these.
 */
import { type FullStore, normalizeScope, type Scope } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import { belief, t } from './fixtures.js';

/**
 * Checks, on a store just migrated from an earlier schema, that the current schema's features work for `scope`, whose
 * belief `oldId` the earlier schema wrote: access counts, host metadata, operation keys, capture grants and budgets.
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
}
