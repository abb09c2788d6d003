import {
  type Belief,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  type FullStore,
  InvalidInputError,
  LeaseLostError,
  type Mem01Error,
  NotFoundError,
  type Scope,
  StoreError,
  VersionConflictError,
} from '@mem01/engine';
import type { BeliefInsert } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import type { BeliefUpdate, CommitRequest, OutboxClaim } from '../fixtures.js';
import {
  ALL_STATUSES,
  audit,
  belief,
  completing,
  FAR_FUTURE,
  ids,
  insertAll,
  inserts,
  listAll,
  rejects,
  snapshot,
  storeAndUser,
  supersede,
  t,
  turn,
  unique,
  vec,
} from '../fixtures.js';

interface Fixture {
  store: FullStore;
  scope: Scope;
  other: Scope;
  existing: Belief;
  second: Belief;
  foreign: Belief;
  claim: OutboxClaim;
}

async function fixture(ctx: SuiteContext): Promise<Fixture> {
  const store = await ctx.open();
  const scope = { userId: unique('user-'), namespace: 'proj' };
  const other = { userId: unique('user-') };
  const existing = belief(scope, {
    attribute: 'home_city',
    value: 'Lisbon',
    statement: 'The user lives in Lisbon.',
  });
  const second = belief(scope, {
    attribute: 'diet',
    value: 'vegetarian',
    statement: 'The user is vegetarian.',
  });
  const foreign = belief(other, {
    attribute: 'home_city',
    value: 'Oslo',
    statement: 'The user lives in Oslo.',
  });
  await insertAll(store, scope, [{ belief: existing, embedding: vec(1, 0, 0, 0) }, second]);
  await insertAll(store, other, [foreign]);
  await store.enqueue([turn(scope, unique('s-'), 0, 'I am vegetarian now')]);
  const claim = await store.claim({ worker: 'w1', leaseMs: 60_000, now: t(1), userId: scope.userId });
  expect(claim).not.toBeNull();
  return { store, scope, other, existing, second, foreign, claim: claim! };
}

/** A valid request that, on its own, would succeed: one insert, one update, audit and an outbox completion. */
function goodRequest(f: Fixture, fresh: Belief): CommitRequest {
  return {
    scope: f.scope,
    inserts: [{ belief: fresh, embedding: vec(0, 1, 0, 0) }],
    updates: [{ id: f.second.id, expectedVersion: 1, set: { confidence: 0.95, updatedAt: t(2) } }],
    audit: [audit(f.scope, fresh.id, 'add', t(2)), audit(f.scope, f.second.id, 'confirm', t(2))],
    complete: completing(f.claim),
  };
}

type BadPart = (f: Fixture) => { inserts?: BeliefInsert[]; updates?: BeliefUpdate[]; claimId?: string };

const BAD_PARTS: readonly [string, BadPart, abstract new (...args: never[]) => Mem01Error][] = [
  [
    'an update with a stale expectedVersion',
    (f) => ({
      updates: [{ id: f.existing.id, expectedVersion: 7, set: { confidence: 0.1, updatedAt: t(2) } }],
    }),
    VersionConflictError,
  ],
  [
    'an update of an unknown id',
    () => ({
      updates: [{ id: unique('missing-'), expectedVersion: 1, set: { confidence: 0.1, updatedAt: t(2) } }],
    }),
    NotFoundError,
  ],
  [
    "an update of another scope's belief",
    (f) => ({
      updates: [{ id: f.foreign.id, expectedVersion: 1, set: { status: 'retracted', updatedAt: t(2) } }],
    }),
    NotFoundError,
  ],
  [
    'an insert whose id exists',
    (f) => ({ inserts: [{ belief: { ...belief(f.scope), id: f.second.id } }] }),
    StoreError,
  ],
  [
    'an insert whose id exists in another scope',
    (f) => ({ inserts: [{ belief: { ...belief(f.scope), id: f.foreign.id } }] }),
    StoreError,
  ],
  [
    'an insert with a wrong-length embedding',
    (f) => ({ inserts: [{ belief: belief(f.scope), embedding: vec(1, 2, 3) }] }),
    DimensionMismatchError,
  ],
  [
    'a second active belief for an existing key',
    (f) => ({ inserts: [{ belief: belief(f.scope, { attribute: 'home_city', value: 'Porto' }) }] }),
    DuplicateActiveBeliefError,
  ],
  [
    'an insert with NaN confidence',
    (f) => ({ inserts: [{ belief: { ...belief(f.scope), confidence: Number.NaN } }] }),
    InvalidInputError,
  ],
  ['a completion with a lost claim id', () => ({ claimId: unique('claim-') }), LeaseLostError],
];

export function commitTests(ctx: SuiteContext): void {
  ctx.test('inserts, updates and audit apply together; every update bumps version', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const old = belief(scope, { attribute: 'home_city', value: 'NYC', statement: 'The user lives in NYC.' });
    await insertAll(store, scope, [old]);
    const next = belief(scope, {
      attribute: 'home_city',
      value: 'SF',
      statement: 'The user lives in SF.',
      supersedes: old.id,
      at: t(10),
    });
    await store.commit(supersede(scope, old, next, t(10)));
    const gotOld = await store.get(scope, old.id);
    expect(gotOld).toMatchObject({
      status: 'superseded',
      supersededBy: next.id,
      invalidatedAt: t(10),
      updatedAt: t(10),
      version: 2,
      value: 'NYC',
    });
    expect(await store.get(scope, next.id)).toEqual(next);
    expect((await store.auditLog(scope)).map((a) => a.action)).toEqual(['add', 'supersede']);
    // The retired belief freed the key: the new one is the only active one.
    expect(ids(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'home_city' }]))).toEqual([
      next.id,
    ]);
  });

  for (const [what, bad, errorClass] of BAD_PARTS) {
    ctx.test(`a request with ${what} writes nothing (${errorClass.name})`, async () => {
      const f = await fixture(ctx);
      const fresh = belief(f.scope, {
        attribute: 'pet',
        value: 'cat',
        statement: 'The user has a cat.',
        at: t(2),
      });
      const good = goodRequest(f, fresh);
      const part = bad(f);
      const request: CommitRequest = {
        ...good,
        inserts: [...good.inserts, ...(part.inserts ?? [])],
        updates: [...good.updates, ...(part.updates ?? [])],
        complete: { claimId: part.claimId ?? f.claim.claimId, entryIds: good.complete!.entryIds },
      };
      const before = await snapshot(f.store, f.scope);
      const foreignBefore = await snapshot(f.store, f.other);
      await rejects(f.store.commit(request), errorClass);
      expect(await snapshot(f.store, f.scope)).toEqual(before);
      expect(await snapshot(f.store, f.other)).toEqual(foreignBefore);
      expect(await f.store.get(f.scope, fresh.id)).toBeNull();
      expect(await f.store.backlog({ now: t(3) })).toMatchObject({ queued: 0, claimed: 1 });
      // The claim is still held: the good request alone commits.
      await f.store.commit(good);
      expect(await f.store.get(f.scope, fresh.id)).toEqual(fresh);
      expect(await f.store.get(f.scope, f.second.id)).toMatchObject({ version: 2, confidence: 0.95 });
      expect(await f.store.backlog({ now: t(3) })).toMatchObject({ queued: 0, claimed: 0 });
    });
  }

  ctx.test('two active beliefs for one key in one request are refused', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, { attribute: 'employer', value: 'Acme' });
    const b = belief(scope, { attribute: 'employer', value: 'Globex' });
    await rejects(store.commit(inserts(scope, [a, b])), DuplicateActiveBeliefError);
    expect(await listAll(store, scope)).toEqual([]);
    expect(await store.auditLog(scope)).toEqual([]);
  });

  ctx.test('pending beliefs do not count for uniqueness, approving one does', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const active = belief(scope, { attribute: 'employer', value: 'Acme' });
    const p1 = belief(scope, { attribute: 'employer', value: 'Globex', status: 'pending' });
    const p2 = belief(scope, { attribute: 'employer', value: 'Initech', status: 'pending' });
    await insertAll(store, scope, [active, p1, p2]);
    expect(await listAll(store, scope)).toHaveLength(3);
    const approve: BeliefUpdate = {
      id: p1.id,
      expectedVersion: 1,
      set: { status: 'active', updatedAt: t(5) },
    };
    await rejects(
      store.commit({ scope, inserts: [], updates: [approve], audit: [] }),
      DuplicateActiveBeliefError,
    );
    expect(await store.get(scope, p1.id)).toMatchObject({ status: 'pending', version: 1 });
    // Retiring the active one in the same request makes room.
    await store.commit({
      scope,
      inserts: [],
      updates: [
        approve,
        {
          id: active.id,
          expectedVersion: 1,
          set: { status: 'superseded', supersededBy: p1.id, updatedAt: t(5) },
        },
      ],
      audit: [audit(scope, p1.id, 'approve', t(5))],
    });
    expect(ids(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'employer' }]))).toEqual([
      p1.id,
    ]);
  });

  ctx.test('the same key in another scope, subject or attribute is not a duplicate', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const project = { userId: scope.userId, namespace: 'project-x' };
    const other = { userId: unique('user-') };
    await insertAll(store, scope, [
      belief(scope, { attribute: 'employer', value: 'Acme' }),
      belief(scope, { subject: 'sister', attribute: 'employer', value: 'Globex' }),
      belief(scope, { attribute: 'employer_city', value: 'Berlin' }),
    ]);
    await insertAll(store, project, [belief(project, { attribute: 'employer', value: 'Initech' })]);
    await insertAll(store, other, [belief(other, { attribute: 'employer', value: 'Umbrella' })]);
    expect(await listAll(store, scope)).toHaveLength(3);
    expect(await listAll(store, project)).toHaveLength(1);
    expect(await listAll(store, other)).toHaveLength(1);
  });

  ctx.test('retract ends a belief without replacing it and frees the key', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, { attribute: 'employer', value: 'Acme' });
    await insertAll(store, scope, [a]);
    await store.commit({
      scope,
      inserts: [],
      updates: [
        { id: a.id, expectedVersion: 1, set: { status: 'retracted', invalidatedAt: t(3), updatedAt: t(3) } },
      ],
      audit: [audit(scope, a.id, 'retract', t(3))],
    });
    expect(await store.get(scope, a.id)).toMatchObject({
      status: 'retracted',
      version: 2,
      invalidatedAt: t(3),
    });
    const b = belief(scope, { attribute: 'employer', value: 'Globex' });
    await insertAll(store, scope, [b]);
    expect(ids(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'employer' }]))).toEqual([
      b.id,
    ]);
    // A stale version of the retracted belief is refused.
    await rejects(
      store.commit({
        scope,
        inserts: [],
        updates: [{ id: a.id, expectedVersion: 1, set: { confidence: 0.2, updatedAt: t(4) } }],
        audit: [],
      }),
      VersionConflictError,
    );
  });

  ctx.test('stored beliefs are copies: mutating inputs or outputs changes nothing', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, {
      evidence: [{ sessionId: 's', position: 0, role: 'user', quote: 'I like blue', at: t(0) }],
    });
    const original = structuredClone(a);
    const embedding = vec(1, 0, 0, 0);
    await insertAll(store, scope, [{ belief: a, embedding }]);
    (a as { value: string }).value = 'mutated';
    (a.evidence as unknown[]).push({ sessionId: 'x' });
    embedding[0] = -1;
    const got = await store.get(scope, a.id);
    expect(got).toEqual(original);
    (got!.evidence[0] as { quote: string }).quote = 'mutated';
    (got!.scope as { userId: string }).userId = 'mutated';
    expect(await store.get(scope, a.id)).toEqual(original);
    if (store.capabilities.vectorSearch !== 'none') {
      const hits = await store.searchVector(scope, vec(1, 0, 0, 0), { limit: 1 });
      expect(hits[0]?.score).toBeCloseTo(1, 3);
    }
    expect(await listAll(store, scope)).toEqual([original]);
    expect((await store.list(scope, { statuses: ALL_STATUSES })).items).toEqual([original]);
  });

  ctx.test('a completed claim may not complete again', async () => {
    const [store, scope] = await storeAndUser(ctx);
    await store.enqueue([turn(scope, unique('s-'), 0, 'hello')]);
    const claim = (await store.claim({ worker: 'w', leaseMs: 60_000, now: t(0) }))!;
    const complete = { claimId: claim.claimId, entryIds: claim.entries.map((e) => e.id) };
    await store.commit({ scope, inserts: [], updates: [], audit: [], complete });
    const fresh = belief(scope);
    await rejects(store.commit({ ...inserts(scope, [fresh]), complete }), LeaseLostError);
    expect(await store.get(scope, fresh.id)).toBeNull();
    expect(await store.claim({ worker: 'w', leaseMs: 60_000, now: FAR_FUTURE })).toBeNull();
  });
}
