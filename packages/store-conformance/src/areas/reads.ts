import { type Belief, InvalidInputError } from '@mem01/engine';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import {
  ALL_STATUSES,
  belief,
  ids,
  insertAll,
  rejects,
  sortDesc,
  storeAndUser,
  supersede,
  t,
  unique,
} from '../fixtures.js';

export function readTests(ctx: SuiteContext): void {
  ctx.test('get returns the belief in any status; other scopes and unknown ids give null', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const project = { userId: scope.userId, namespace: 'work' };
    const other = { userId: unique('user-') };
    const a = belief(scope, { status: 'pending' });
    const b = belief(project);
    await insertAll(store, scope, [a]);
    await insertAll(store, project, [b]);
    expect(await store.get(scope, a.id)).toEqual(a);
    // `namespace` undefined and '' are the same namespace.
    expect(await store.get({ userId: scope.userId, namespace: '' }, a.id)).toEqual(a);
    expect(await store.get(project, a.id)).toBeNull();
    expect(await store.get(scope, b.id)).toBeNull();
    expect(await store.get(other, a.id)).toBeNull();
    expect(await store.get(scope, unique('nope-'))).toBeNull();
  });

  ctx.test('getActiveByKeys returns only active beliefs of the given keys in the scope', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const other = { userId: unique('user-') };
    const city = belief(scope, { attribute: 'home_city', value: 'Rome' });
    const pendingJob = belief(scope, { attribute: 'employer', value: 'Acme', status: 'pending' });
    const sisterJob = belief(scope, { subject: 'sister', attribute: 'employer', value: 'Globex' });
    const diet = belief(scope, { attribute: 'diet', value: 'vegan' });
    const foreign = belief(other, { attribute: 'home_city', value: 'Oslo' });
    await insertAll(store, scope, [city, pendingJob, sisterJob, diet]);
    await insertAll(store, other, [foreign]);
    const found = await store.getActiveByKeys(scope, [
      { subject: 'user', attribute: 'home_city' },
      { subject: 'user', attribute: 'employer' },
      { subject: 'sister', attribute: 'employer' },
      { subject: 'user', attribute: 'unknown_key' },
    ]);
    expect(ids(found).sort()).toEqual([city.id, sisterJob.id].sort());
    expect(found.find((b) => b.id === city.id)).toEqual(city);
    expect(await store.getActiveByKeys(scope, [])).toEqual([]);
    expect(ids(await store.getActiveByKeys(other, [{ subject: 'user', attribute: 'home_city' }]))).toEqual([
      foreign.id,
    ]);
    // After a supersede, the key maps to the new belief only.
    const next = belief(scope, { attribute: 'home_city', value: 'Milan', supersedes: city.id, at: t(5) });
    await store.commit(supersede(scope, city, next));
    expect(ids(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'home_city' }]))).toEqual([
      next.id,
    ]);
  });

  ctx.test('list is newest first (id descending), active by default, filtered by status', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const made: Belief[] = [];
    const statuses = ['active', 'pending', 'active', 'retracted', 'active', 'pending'] as const;
    for (const status of statuses) made.push(belief(scope, { status }));
    // Inserted in shuffled order: the order of list must come from the ids, not from insertion.
    await insertAll(store, scope, [made[3]!, made[0]!, made[5]!, made[1]!]);
    await insertAll(store, scope, [made[4]!, made[2]!]);
    const byStatus = (...s: string[]) => sortDesc(made.filter((b) => s.includes(b.status)).map((b) => b.id));
    expect(ids((await store.list(scope)).items)).toEqual(byStatus('active'));
    expect(ids((await store.list(scope, { statuses: ['pending'] })).items)).toEqual(byStatus('pending'));
    expect(ids((await store.list(scope, { statuses: ['pending', 'retracted'] })).items)).toEqual(
      byStatus('pending', 'retracted'),
    );
    expect((await store.list(scope, { statuses: ['superseded'] })).items).toEqual([]);
    expect((await store.list({ userId: unique('nobody-') })).items).toEqual([]);
    const page = await store.list(scope);
    expect(page.nextCursor).toBeNull();
    expect(page.items.find((b) => b.id === made[0]!.id)).toEqual(made[0]);
  });

  ctx.test('list pages with cursors across statuses without gaps or repeats', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const statuses = [
      'active',
      'pending',
      'superseded',
      'retracted',
      'active',
      'pending',
      'active',
      'retracted',
    ];
    const made = statuses.map((s) => belief(scope, { status: s as Belief['status'] }));
    await insertAll(store, scope, made);
    const wanted = sortDesc(made.filter((b) => b.status !== 'retracted').map((b) => b.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await store.list(scope, {
        statuses: ['active', 'pending', 'superseded'],
        limit: 2,
        cursor,
      });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page.items));
      cursor = page.nextCursor;
      pages += 1;
      expect(pages).toBeLessThan(10);
    } while (cursor !== null);
    expect(seen).toEqual(wanted);
    expect(pages).toBe(3);
    // A page exactly at the end says so.
    const all = await store.list(scope, { statuses: ALL_STATUSES, limit: made.length });
    expect(ids(all.items)).toEqual(sortDesc(ids(made)));
    if (all.nextCursor !== null)
      expect((await store.list(scope, { cursor: all.nextCursor })).items).toEqual([]);
    // A cursor does not widen the scope.
    const first = await store.list(scope, { statuses: ALL_STATUSES, limit: 1 });
    const stranger = await store.list(
      { userId: unique('user-') },
      { statuses: ALL_STATUSES, cursor: first.nextCursor },
    );
    expect(stranger.items).toEqual([]);
  });

  ctx.test(
    'list filters by kind and by evidence session in the store, and pages the filtered beliefs',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      const from = (sessionId: string, position = 0) => ({
        sessionId,
        position,
        role: 'user' as const,
        quote: 'q',
        at: t(0),
      });
      const specs = [
        { kind: 'fact', evidence: [from('s1')] },
        { kind: 'episode', evidence: [from('s1', 1)] },
        { kind: 'fact', evidence: [from('s2')] },
        { kind: 'preference', evidence: [from('s2'), from('s1', 2)] },
        { kind: 'fact', evidence: [] },
        { kind: 'fact', evidence: [from('s1', 3)], status: 'superseded' },
        { kind: 'episode', evidence: [from('s3')] },
        { kind: 'fact', evidence: [from('s1', 4)] },
      ] as const;
      const made = specs.map((spec) =>
        belief(scope, {
          kind: spec.kind,
          evidence: [...spec.evidence],
          status: 'status' in spec ? spec.status : 'active',
        }),
      );
      await insertAll(store, scope, made);
      const expected = (keep: (b: Belief) => boolean) => sortDesc(made.filter(keep).map((b) => b.id));
      const inS1 = (b: Belief) => b.evidence.some((e) => e.sessionId === 's1');
      expect(ids((await store.list(scope, { kinds: ['fact'] })).items)).toEqual(
        expected((b) => b.kind === 'fact' && b.status === 'active'),
      );
      expect(
        ids((await store.list(scope, { kinds: ['fact', 'episode'], statuses: ALL_STATUSES })).items),
      ).toEqual(expected((b) => b.kind === 'fact' || b.kind === 'episode'));
      expect(ids((await store.list(scope, { sessionId: 's1' })).items)).toEqual(
        expected((b) => inS1(b) && b.status === 'active'),
      );
      expect(
        ids((await store.list(scope, { sessionId: 's1', kinds: ['fact'], statuses: ALL_STATUSES })).items),
      ).toEqual(expected((b) => inS1(b) && b.kind === 'fact'));
      expect((await store.list(scope, { sessionId: 'nowhere' })).items).toEqual([]);
      // Another scope's beliefs with the same session stay out.
      const other = { userId: unique('user-') };
      await insertAll(store, other, [belief(other, { kind: 'fact', evidence: [from('s1')] })]);
      // Pages of the filtered beliefs: no gaps, no repeats, a cursor only while more match.
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<typeof store.list>> = await store.list(scope, {
          sessionId: 's1',
          statuses: ALL_STATUSES,
          limit: 2,
          cursor,
        });
        seen.push(...ids(page.items));
        cursor = page.nextCursor;
        pages += 1;
        expect(pages).toBeLessThan(10);
      } while (cursor !== null);
      expect(seen).toEqual(expected(inS1));
      expect(pages).toBe(3);
      // A found belief comes back whole.
      const [newest] = (await store.list(scope, { kinds: ['preference'] })).items;
      expect(newest).toEqual(made[3]);
      for (const bad of [[], ['mood'], 'fact']) {
        await rejects(store.list(scope, { kinds: bad as never }), InvalidInputError);
      }
      await rejects(store.list(scope, { sessionId: '' }), InvalidInputError);
    },
  );

  ctx.test('list refuses a page size outside 1..1000', async () => {
    const [store, scope] = await storeAndUser(ctx);
    for (const limit of [0, -1, 1001, Number.NaN, 2.5]) {
      await rejects(store.list(scope, { limit }), InvalidInputError);
    }
    expect((await store.list(scope, { limit: 1000 })).items).toEqual([]);
  });
}
