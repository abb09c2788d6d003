import {
  type Belief,
  DuplicateActiveBeliefError,
  type FullStore,
  type Mem01Error,
  VersionConflictError,
} from '@mem01/engine';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { belief, ids, insertAll, inserts, listAll, settle, supersede, t, turn, unique } from '../fixtures.js';

const RACERS = 8;

/** Stores to race on: the one store, or alternately two handles on one database when the harness has them. */
async function handles(ctx: SuiteContext): Promise<{ stores: FullStore[]; label: string }[]> {
  const first = await ctx.open();
  const second = await ctx.second();
  const out = [{ stores: [first], label: 'one handle' }];
  if (second) out.push({ stores: [first, second], label: 'two handles' });
  return out;
}

const on = (stores: FullStore[], i: number): FullStore => stores[i % stores.length]!;

function expectOnly(
  errors: readonly Error[],
  ...classes: (abstract new (
    ...args: never[]
  ) => Mem01Error)[]
): void {
  const names = classes.map((c) => c.name);
  for (const e of errors) expect(names, `${e.name}: ${e.message}`).toContain(e.name);
}

export function concurrencyTests(ctx: SuiteContext): void {
  ctx.test('racing commits of one new key: exactly one active belief', async () => {
    for (const { stores, label } of await handles(ctx)) {
      const scope = { userId: unique('user-') };
      const racers = Array.from({ length: RACERS }, (_, i) =>
        belief(scope, { attribute: 'home_city', value: `City ${i}` }),
      );
      const { fulfilled, rejected } = await settle(
        racers.map((b, i) => on(stores, i).commit(inserts(scope, [b]))),
      );
      expect(fulfilled, label).toHaveLength(1);
      expectOnly(rejected, DuplicateActiveBeliefError);
      for (const store of stores) {
        const active = await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'home_city' }]);
        expect(active, label).toHaveLength(1);
        expect(await listAll(store, scope), label).toHaveLength(1);
        expect(await store.auditLog(scope), label).toHaveLength(1);
      }
    }
  });

  ctx.test('racing supersedes of one belief: exactly one wins', async () => {
    for (const { stores, label } of await handles(ctx)) {
      const scope = { userId: unique('user-') };
      const old = belief(scope, { attribute: 'employer', value: 'Acme' });
      await insertAll(stores[0]!, scope, [old]);
      const next: Belief[] = Array.from({ length: RACERS }, (_, i) =>
        belief(scope, { attribute: 'employer', value: `Co ${i}`, supersedes: old.id, at: t(5) }),
      );
      const { fulfilled, rejected } = await settle(
        next.map((b, i) => on(stores, i).commit(supersede(scope, old, b))),
      );
      expect(fulfilled, label).toHaveLength(1);
      expectOnly(rejected, VersionConflictError, DuplicateActiveBeliefError);
      const store = stores[stores.length - 1]!;
      const gotOld = await store.get(scope, old.id);
      expect(gotOld?.version, label).toBe(2);
      const active = await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'employer' }]);
      expect(ids(active), label).toEqual([gotOld!.supersededBy]);
      expect(await listAll(store, scope), label).toHaveLength(2);
    }
  });

  ctx.test('racing updates on one version: exactly one applies', async () => {
    for (const { stores, label } of await handles(ctx)) {
      const scope = { userId: unique('user-') };
      const b = belief(scope);
      await insertAll(stores[0]!, scope, [b]);
      const { fulfilled, rejected } = await settle(
        Array.from({ length: RACERS }, (_, i) =>
          on(stores, i).commit({
            scope,
            inserts: [],
            updates: [{ id: b.id, expectedVersion: 1, set: { confidence: i / 10, updatedAt: t(i) } }],
            audit: [],
          }),
        ),
      );
      expect(fulfilled, label).toHaveLength(1);
      expectOnly(rejected, VersionConflictError);
      expect((await stores[0]!.get(scope, b.id))?.version, label).toBe(2);
    }
  });

  ctx.test('parallel enqueues of the same batch accept each turn once', async () => {
    for (const { stores, label } of await handles(ctx)) {
      const scope = { userId: unique('user-') };
      const s = unique('s-');
      const batch = [0, 1, 2, 3, 4].map((p) => turn(scope, s, p, `turn ${p}`));
      const results = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => on(stores, i).enqueue(batch)),
      );
      expect(
        results.reduce((n, r) => n + r.accepted, 0),
        label,
      ).toBe(5);
      expect(
        results.reduce((n, r) => n + r.duplicates, 0),
        label,
      ).toBe(5 * (RACERS - 1));
      const claim = await stores[0]!.claim({
        worker: 'w',
        leaseMs: 1000,
        now: t(0),
        userId: scope.userId,
        maxEntries: 50,
      });
      expect(
        claim?.entries.map((e) => e.position),
        label,
      ).toEqual([0, 1, 2, 3, 4]);
    }
  });

  ctx.test('parallel claims for one user: exactly one gets the entries', async () => {
    for (const { stores, label } of await handles(ctx)) {
      const scope = { userId: unique('user-') };
      await stores[0]!.enqueue([turn(scope, unique('s-'), 0, 'a'), turn(scope, unique('s-'), 0, 'b')]);
      const claims = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          on(stores, i).claim({ worker: `w${i}`, leaseMs: 60_000, now: t(0), userId: scope.userId }),
        ),
      );
      expect(
        claims.filter((c) => c !== null),
        label,
      ).toHaveLength(1);
      // Without a user filter too: the in-flight user is not handed out again.
      const general = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          on(stores, i).claim({ worker: `g${i}`, leaseMs: 60_000, now: t(1) }),
        ),
      );
      expect(
        general.filter((c) => c !== null && c.scope.userId === scope.userId),
        label,
      ).toHaveLength(0);
    }
  });

  ctx.test(
    'parallel appends to one session get distinct positions; one operation id applies once',
    async () => {
      for (const { stores, label } of await handles(ctx)) {
        const s = unique('s-');
        const owner = { userId: unique('user-') };
        const results = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            on(stores, i).appendItems(owner, s, [{ n: i }, { n: i, second: true }]),
          ),
        );
        const positions = results.flatMap((r) => r.positions).sort((a, b) => a - b);
        expect(positions, label).toEqual(Array.from({ length: RACERS * 2 }, (_, i) => i));
        for (const r of results) expect(r.positions[1], label).toBe(r.positions[0]! + 1);
        const items = await stores[0]!.getItems(owner, s);
        expect(items, label).toHaveLength(RACERS * 2);
        for (const r of results) expect(items[r.positions[1]!], label).toMatchObject({ second: true });

        const op = unique('s-');
        const scope = { userId: unique('user-') };
        const same = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            on(stores, i).appendItems(scope, op, [{ once: true }], {
              operationId: 'op',
              operationFingerprint: 'fp',
              enqueue: [{ index: 0, role: 'user', text: 'once', at: t(0) }],
            }),
          ),
        );
        expect(
          same.filter((r) => !r.duplicate),
          label,
        ).toHaveLength(1);
        for (const r of same) expect(r.positions, label).toEqual([0]);
        expect(await stores[0]!.getItems(scope, op), label).toEqual([{ once: true }]);
        expect(await stores[0]!.backlog({ now: t(0), userId: scope.userId }), label).toMatchObject({
          queued: 1,
        });
      }
    },
  );

  ctx.test('a second handle sees the first handle’s writes', async (c) => {
    const first = await ctx.open();
    const second = await ctx.second();
    if (!second) return c.skip('the harness has no openSecond');
    const scope = { userId: unique('user-') };
    const b = belief(scope, { statement: 'The user collects stamps.', value: 'stamps' });
    await insertAll(first, scope, [b]);
    expect(await second.get(scope, b.id)).toEqual(b);
    expect((await second.searchLexical(scope, 'stamps', { limit: 5 })).map((h) => h.belief.id)).toEqual([
      b.id,
    ]);
    await second.forget(scope, b.id, { at: t(3) });
    expect((await first.get(scope, b.id))?.status).toBe('forgotten');
    expect(await first.searchLexical(scope, 'stamps', { limit: 5 })).toEqual([]);
  });
}
