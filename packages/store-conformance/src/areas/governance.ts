/**
 * The governance ports on the store under test: operation keys recorded with their change, capture grants, budget
 * counters (also across two handles), active counts, access counts, host metadata and origins, policy audit fields,
 * and erasing (per user and everything).
 */
import {
  type Belief,
  DuplicateOperationError,
  type FullStore,
  InvalidInputError,
  NotFoundError,
  type Scope,
  StoreError,
} from '@mem01/engine';
import { NOTHING_ERASED, type OperationRecord, type StoreInfo } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import type { CommitRequest } from '../fixtures.js';
import {
  audit,
  belief,
  grant,
  hitIds,
  insertAll,
  listAll,
  rejects,
  snapshot,
  storeAndUser,
  t,
  turn,
  unique,
  vec,
} from '../fixtures.js';

const FP = 'ab'.repeat(32);

function op(key: string, beliefIds: string[], patch: Partial<OperationRecord> = {}): OperationRecord {
  return { key, fingerprint: FP, action: 'remember', beliefIds, outcome: 'belief', at: t(5), ...patch };
}

/** A commit inserting `b` alone (no audit), recorded under operation `key`. */
function insertUnderKey(scope: Scope, b: Belief, key: string): CommitRequest {
  return { scope, inserts: [{ belief: b }], updates: [], audit: [], operation: op(key, [b.id]) };
}

export function governanceTests(ctx: SuiteContext): void {
  ctx.test(
    'commit records its operation key in the same transaction; a recorded key writes nothing',
    async () => {
      const store = await ctx.open();
      const scope = { userId: unique('user-'), namespace: 'p' };
      const a = belief(scope);
      expect(await store.getOperation(scope, 'k1')).toBeNull();
      await store.commit(insertUnderKey(scope, a, 'k1'));
      expect(await store.getOperation(scope, 'k1')).toEqual(op('k1', [a.id]));
      const before = await snapshot(store, scope);
      const b = belief(scope);
      await rejects(
        store.commit({
          scope,
          inserts: [{ belief: b }],
          updates: [],
          audit: [audit(scope, b.id)],
          operation: op('k1', [b.id]),
        }),
        DuplicateOperationError,
      );
      expect(await snapshot(store, scope)).toEqual(before);
      expect(await store.get(scope, b.id)).toBeNull();
      // A commit that fails for another reason records nothing either.
      await rejects(
        store.commit({
          scope,
          inserts: [],
          updates: [{ id: unique('nope-'), expectedVersion: 1, set: { confidence: 0.5, updatedAt: t(6) } }],
          audit: [],
          operation: op('k2', [a.id]),
        }),
        NotFoundError,
      );
      expect(await store.getOperation(scope, 'k2')).toBeNull();
      // Malformed records are refused before anything is written.
      for (const bad of [
        op('k3', [b.id], { fingerprint: 'not hex' }),
        op('k3', [b.id], { action: 'drop' as never }),
        op('k3', [b.id], { outcome: 'Has Text' }),
        op('', [b.id]),
      ]) {
        await rejects(
          store.commit({ scope, inserts: [{ belief: b }], updates: [], audit: [], operation: bad }),
          InvalidInputError,
        );
      }
      expect(await store.get(scope, b.id)).toBeNull();
    },
  );

  ctx.test(
    'operation keys are scoped by user and namespace: one scope never sees or blocks another',
    async () => {
      const [store, alice] = await storeAndUser(ctx, 'alice-');
      const aliceWork = { userId: alice.userId, namespace: 'work' };
      const bob = { userId: unique('bob-') };
      for (const scope of [alice, aliceWork, bob]) {
        const b = belief(scope);
        await store.commit(insertUnderKey(scope, b, 'same-key'));
        expect((await store.getOperation(scope, 'same-key'))?.beliefIds).toEqual([b.id]);
      }
      expect(await store.getOperation({ userId: unique('nobody-') }, 'same-key')).toBeNull();
    },
  );

  ctx.test(
    'forget records its operation, also for a tombstone; a recorded key refuses the forget',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      const a = belief(scope, { value: 'Marrakesh', statement: 'The user lives in Marrakesh.' });
      const b = belief(scope);
      await insertAll(store, scope, [a, b]);
      const forgetOp = op('f1', [a.id], { action: 'forget', outcome: 'forgotten' });
      const tomb = await store.forget(scope, a.id, { at: t(6), operation: forgetOp });
      expect(tomb.status).toBe('forgotten');
      expect(await store.getOperation(scope, 'f1')).toEqual(forgetOp);
      expect(JSON.stringify(await store.getOperation(scope, 'f1'))).not.toContain('Marrakesh');
      await rejects(store.forget(scope, b.id, { at: t(7), operation: forgetOp }), DuplicateOperationError);
      expect((await store.get(scope, b.id))?.status).toBe('active');
      const again = op('f2', [a.id], { action: 'forget', outcome: 'forgotten' });
      expect(await store.forget(scope, a.id, { at: t(8), operation: again })).toEqual(tomb);
      expect(await store.getOperation(scope, 'f2')).toEqual(again);
    },
  );

  ctx.test('capture grants: record, list, validity at a given time, revoke, isolation', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-'), namespace: 'app' };
    const sameUserOtherNs = { userId: scope.userId };
    const other = { userId: unique('user-') };
    expect(await store.activeGrant(scope, t(20))).toBeNull();
    const expiring = grant(scope, { expiresAt: t(30) });
    const later = grant(scope, { grantedAt: t(40) });
    await store.recordGrant(later);
    await store.recordGrant(expiring);
    await rejects(store.recordGrant(expiring), StoreError);
    await rejects(store.recordGrant(grant(scope, { intentDigest: 'the intent text' })), InvalidInputError);
    await rejects(store.recordGrant(grant(scope, { expiresAt: t(5) })), InvalidInputError);
    expect(await store.listGrants(scope)).toEqual([expiring, later]);
    expect(await store.listGrants(sameUserOtherNs)).toEqual([]);
    expect(await store.listGrants(other)).toEqual([]);
    // Valid from grantedAt until expiresAt (exclusive), by the time the caller gives.
    expect(await store.activeGrant(scope, t(9))).toBeNull();
    expect(await store.activeGrant(scope, t(10))).toEqual(expiring);
    expect(await store.activeGrant(scope, t(30))).toBeNull();
    expect(await store.activeGrant(scope, t(45))).toEqual(later);
    expect(await store.activeGrant(other, t(45))).toBeNull();
    // Revoking by id of another scope changes nothing; revoking all of the scope revokes what is not revoked yet.
    expect(await store.revokeGrants(other, { at: t(50), id: later.id })).toBe(0);
    expect(await store.revokeGrants(scope, { at: t(50), id: later.id })).toBe(1);
    expect(await store.activeGrant(scope, t(49))).toEqual({ ...later, revokedAt: t(50) });
    expect(await store.activeGrant(scope, t(50))).toBeNull();
    expect(await store.revokeGrants(scope, { at: t(60) })).toBe(1);
    expect(await store.revokeGrants(scope, { at: t(70) })).toBe(0);
    expect((await store.listGrants(scope)).map((g) => g.revokedAt)).toEqual([t(60), t(50)]);
  });

  ctx.test(
    'chargeBudget: all or nothing, limits, a zero charge checks, windows move forward, per user',
    async () => {
      const store = await ctx.open();
      const user = unique('user-');
      const w1 = t(0);
      const w2 = t(3600);
      const charge = (
        windowStart: string,
        charges: { name: string; amount: number; limit: number | null }[],
      ) => store.chargeBudget({ userId: user, windowStart, charges });
      expect(await charge(w1, [{ name: 'calls', amount: 1, limit: 2 }])).toEqual({
        charged: true,
        used: { calls: 1 },
      });
      expect(
        await charge(w1, [
          { name: 'calls', amount: 1, limit: 2 },
          { name: 'tokens', amount: 500, limit: 400 },
        ]),
      ).toEqual({ charged: false, name: 'tokens', used: 0, limit: 400 });
      // Nothing of the refused charge was added.
      expect(await charge(w1, [{ name: 'calls', amount: 0, limit: 2 }])).toEqual({
        charged: true,
        used: { calls: 1 },
      });
      expect(await charge(w1, [{ name: 'tokens', amount: 900, limit: null }])).toEqual({
        charged: true,
        used: { tokens: 900 },
      });
      expect(await charge(w1, [{ name: 'tokens', amount: 0, limit: 900 }])).toEqual({
        charged: false,
        name: 'tokens',
        used: 900,
        limit: 900,
      });
      expect(
        await store.chargeBudget({
          userId: unique('user-'),
          windowStart: w1,
          charges: [{ name: 'tokens', amount: 0, limit: 900 }],
        }),
      ).toEqual({
        charged: true,
        used: { tokens: 0 },
      });
      // A new window starts from zero.
      expect(await charge(w2, [{ name: 'tokens', amount: 0, limit: 900 }])).toEqual({
        charged: true,
        used: { tokens: 0 },
      });
      for (const bad of [
        { name: 'Tokens', amount: 1, limit: 1 },
        { name: 'tokens', amount: -1, limit: 1 },
        { name: 'tokens', amount: 1, limit: 0 },
      ]) {
        await rejects(charge(w2, [bad]), InvalidInputError);
      }
    },
  );

  ctx.test('chargeBudget: two handles on one database share the counters', async (t0) => {
    const store = await ctx.open();
    const second = await ctx.second();
    if (!second) return t0.skip('no second handle');
    const user = unique('user-');
    const charges = [{ name: 'calls', amount: 1, limit: 10 }];
    const results = await Promise.all(
      Array.from({ length: 14 }, (_, i) =>
        (i % 2 ? store : second).chargeBudget({ userId: user, windowStart: t(0), charges }),
      ),
    );
    expect(results.filter((r) => r.charged)).toHaveLength(10);
    expect(
      await second.chargeBudget({
        userId: user,
        windowStart: t(0),
        charges: [{ name: 'calls', amount: 0, limit: 11 }],
      }),
    ).toEqual({
      charged: true,
      used: { calls: 10 },
    });
  });

  ctx.test(
    'readBudget: a user’s counters of one window as charged, changing nothing; other users and windows apart',
    async () => {
      const store = await ctx.open();
      const user = unique('user-');
      const other = unique('user-');
      const read = (userId: string, windowStart: string) => store.readBudget({ userId, windowStart });
      expect(await read(user, t(0))).toEqual({});
      await store.chargeBudget({
        userId: user,
        windowStart: t(0),
        charges: [
          { name: 'llm_calls', amount: 2, limit: null },
          { name: 'embedding_calls', amount: 0, limit: 5 },
          { name: 'embedding_tokens', amount: 1234, limit: null },
        ],
      });
      await store.chargeBudget({
        userId: other,
        windowStart: t(0),
        charges: [{ name: 'llm_calls', amount: 7, limit: null }],
      });
      // A zero charge that only checked leaves no counter behind.
      expect(await read(user, t(0))).toEqual({ llm_calls: 2, embedding_tokens: 1234 });
      // Reading is no charge: the same again, and a limit check sees the same count.
      expect(await read(user, t(0))).toEqual({ llm_calls: 2, embedding_tokens: 1234 });
      expect(
        await store.chargeBudget({
          userId: user,
          windowStart: t(0),
          charges: [{ name: 'llm_calls', amount: 0, limit: 3 }],
        }),
      ).toEqual({ charged: true, used: { llm_calls: 2 } });
      expect(await read(other, t(0))).toEqual({ llm_calls: 7 });
      // The same instant written another way is the same window; another window has none.
      expect(await read(user, t(0).replace('Z', '+00:00'))).toEqual({ llm_calls: 2, embedding_tokens: 1234 });
      expect(await read(user, t(3600))).toEqual({});
      // A later window's charge deletes the earlier window's counters.
      await store.chargeBudget({
        userId: user,
        windowStart: t(3600),
        charges: [{ name: 'llm_calls', amount: 1, limit: null }],
      });
      expect(await read(user, t(0))).toEqual({});
      expect(await read(user, t(3600))).toEqual({ llm_calls: 1 });
      const second = await ctx.second();
      if (second)
        expect(await second.readBudget({ userId: user, windowStart: t(3600) })).toEqual({ llm_calls: 1 });
      for (const bad of [
        { userId: '', windowStart: t(0) },
        { userId: user, windowStart: 'yesterday' },
        null,
      ]) {
        await rejects(store.readBudget(bad as never), InvalidInputError);
      }
    },
  );

  ctx.test(
    'countActiveBeliefs counts a user’s active beliefs in every namespace, leaving out kinds',
    async () => {
      const store = await ctx.open();
      const user = unique('user-');
      const home = { userId: user };
      const work = { userId: user, namespace: 'work' };
      const other = { userId: unique('user-') };
      await insertAll(store, home, [
        belief(home),
        belief(home, { kind: 'episode' }),
        belief(home, { status: 'pending' }),
      ]);
      await insertAll(store, work, [belief(work), belief(work, { status: 'superseded' })]);
      await insertAll(store, other, [belief(other)]);
      expect(await store.countActiveBeliefs(user)).toBe(3);
      expect(await store.countActiveBeliefs(user, { excludeKinds: ['episode'] })).toBe(2);
      expect(await store.countActiveBeliefs(unique('nobody-'))).toBe(0);
      await rejects(store.countActiveBeliefs(user, { excludeKinds: ['bogus' as never] }), InvalidInputError);
      await rejects(store.countActiveBeliefs(user, { unit: 'tokens' as never }), InvalidInputError);
    },
  );

  ctx.test(
    'countActiveBeliefs in bytes sums the UTF-8 bytes of the active statements, leaving out kinds',
    async () => {
      const store = await ctx.open();
      const user = unique('user-');
      const home = { userId: user };
      const work = { userId: user, namespace: 'work' };
      await insertAll(store, home, [
        belief(home, { statement: 'The user lives in Zürich.' }),
        belief(home, { kind: 'episode', statement: 'I moved to Zürich last spring.' }),
        belief(home, { status: 'pending', statement: 'The user likes fondue.' }),
      ]);
      await insertAll(store, work, [
        belief(work, { statement: 'The user works at a café 😀.' }),
        belief(work, { status: 'superseded', statement: 'The user works at a bank.' }),
      ]);
      const bytes = (s: string) => new TextEncoder().encode(s).length;
      expect(await store.countActiveBeliefs(user, { unit: 'bytes', excludeKinds: ['episode'] })).toBe(
        bytes('The user lives in Zürich.') + bytes('The user works at a café 😀.'),
      );
      expect(await store.countActiveBeliefs(user, { unit: 'bytes' })).toBe(
        bytes('The user lives in Zürich.') +
          bytes('I moved to Zürich last spring.') +
          bytes('The user works at a café 😀.'),
      );
      expect(await store.countActiveBeliefs(unique('nobody-'), { unit: 'bytes' })).toBe(0);
    },
  );

  ctx.test(
    'recordAccess adds counts without a new version; unknown and foreign ids are skipped',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      const other = { userId: unique('user-') };
      const a = belief(scope);
      const b = belief(scope);
      const foreign = belief(other);
      await insertAll(store, scope, [a, b]);
      await insertAll(store, other, [foreign]);
      await store.recordAccess(
        scope,
        [
          { id: a.id, count: 2 },
          { id: foreign.id, count: 5 },
          { id: unique('x-'), count: 1 },
        ],
        t(40),
      );
      await store.recordAccess(
        scope,
        [
          { id: a.id, count: 1 },
          { id: a.id, count: 1 },
        ],
        t(30),
      );
      expect(await store.get(scope, a.id)).toEqual({ ...a, accessCount: 4, lastAccessedAt: t(40) });
      expect(await store.get(scope, b.id)).toEqual(b);
      expect(await store.get(other, foreign.id)).toEqual(foreign);
      expect((await store.list(scope)).items.find((x) => x.id === a.id)?.accessCount).toBe(4);
      await rejects(store.recordAccess(scope, [{ id: a.id, count: 0 }], t(41)), InvalidInputError);
      const tomb = await store.forget(scope, a.id, { at: t(50) });
      expect(tomb.accessCount).toBe(4);
    },
  );

  ctx.test(
    'host metadata and origin are stored and returned on every read path; forget removes them',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      const metadata = { crm: { id: 42, tags: ['vip', null, true] }, note: 'été', score: 1.5 };
      const origin = { label: 'crm', ref: 'ticket-7' };
      const a: Belief = {
        ...belief(scope, { value: 'heron', statement: 'The user watches herons.' }),
        metadata,
        origin,
      };
      const imported: Belief = {
        ...belief(scope, { value: 'kestrel', statement: 'The user watches kestrels.' }),
        metadata: {},
        source: 'import',
      };
      await insertAll(store, scope, [{ belief: a, embedding: vec(1, 0, 0, 0) }]);
      expect(await store.importBeliefs([{ belief: imported }])).toEqual({ inserted: 1, skipped: 0 });
      expect(await store.get(scope, a.id)).toEqual(a);
      expect(await store.get(scope, imported.id)).toEqual(imported);
      expect((await listAll(store, scope)).find((b) => b.id === a.id)).toEqual(a);
      expect((await store.history(scope)).find((b) => b.id === a.id)).toEqual(a);
      const [hit] = await store.searchLexical(scope, 'herons', { limit: 5 });
      expect(hit?.belief).toEqual(a);
      if (store.capabilities.vectorSearch !== 'none') {
        expect((await store.searchVector(scope, vec(1, 0, 0, 0), { limit: 1 }))[0]?.belief).toEqual(a);
      }
      const tomb = await store.forget(scope, a.id, { at: t(9) });
      expect(tomb.metadata).toBeUndefined();
      expect(tomb.origin).toBeUndefined();
      expect(JSON.stringify(await store.get(scope, a.id))).not.toMatch(/crm|ticket-7|vip/);
      // Refused before anything is written: not an object, too big, too deep, not JSON, a bad label.
      const bad: [string, Partial<Belief>][] = [
        ['array', { metadata: [1] as never }],
        ['too big', { metadata: { blob: 'x'.repeat(5000) } }],
        ['too deep', { metadata: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } as never }],
        ['not JSON', { metadata: { n: Number.NaN } }],
        ['a function', { metadata: { f: (() => 1) as never } }],
        ['bad label', { origin: { label: 'has space' } }],
      ];
      for (const [why, patch] of bad) {
        const x = { ...belief(scope), ...patch } as Belief;
        await rejects(
          store.commit({ scope, inserts: [{ belief: x }], updates: [], audit: [] }),
          InvalidInputError,
        ).catch((err: unknown) => {
          throw new Error(`${why}: ${String(err)}`);
        });
        expect(await store.get(scope, x.id)).toBeNull();
      }
    },
  );

  ctx.test('audit records keep a capture policy’s revision and decision', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope);
    const events = [
      { ...audit(scope, a.id, 'add', t(1)), policy: { revision: 'policy-v3', decision: 'pending' as const } },
      {
        ...audit(scope, null, 'reject', t(1)),
        policy: { revision: 'policy-v3', decision: 'reject' as const },
      },
      audit(scope, a.id, 'confirm', t(2)),
    ];
    await store.commit({ scope, inserts: [{ belief: a }], updates: [], audit: events });
    expect(await store.auditLog(scope)).toEqual(
      events.map((e) => ({ ...e, scope: { userId: scope.userId, namespace: '' } })),
    );
    await rejects(
      store.commit({
        scope,
        inserts: [],
        updates: [],
        audit: [{ ...audit(scope, null, 'reject'), policy: { revision: 'v', decision: 'maybe' as never } }],
      }),
      InvalidInputError,
    );
  });

  ctx.test(
    'eraseUser also deletes the user’s operation keys, grants and budget counters, and no one else’s',
    async () => {
      const [store, user] = await storeAndUser(ctx);
      const keeper = { userId: unique('user-') };
      for (const scope of [user, keeper]) {
        const b = belief(scope);
        await store.commit(insertUnderKey(scope, b, 'k'));
        await store.recordGrant(grant(scope));
        await store.chargeBudget({
          userId: scope.userId,
          windowStart: t(0),
          charges: [{ name: 'calls', amount: 3, limit: null }],
        });
      }
      expect(await store.eraseUser(user.userId)).toEqual({
        ...NOTHING_ERASED,
        beliefs: 1,
        operations: 1,
        grants: 1,
      });
      expect(await store.getOperation(user, 'k')).toBeNull();
      expect(await store.listGrants(user)).toEqual([]);
      const zero = [{ name: 'calls', amount: 0, limit: 100 }];
      expect(await store.chargeBudget({ userId: user.userId, windowStart: t(0), charges: zero })).toEqual({
        charged: true,
        used: { calls: 0 },
      });
      expect(await store.getOperation(keeper, 'k')).not.toBeNull();
      expect(await store.listGrants(keeper)).toHaveLength(1);
      expect(await store.chargeBudget({ userId: keeper.userId, windowStart: t(0), charges: zero })).toEqual({
        charged: true,
        used: { calls: 3 },
      });
    },
  );

  ctx.test(
    'eraseScope deletes the scope’s operation keys and grants; other namespaces, other users and budgets stay',
    async () => {
      const [store, home] = await storeAndUser(ctx);
      const work = { userId: home.userId, namespace: 'work' };
      const keeper = { userId: unique('user-') };
      for (const scope of [home, work, keeper]) {
        await store.commit(insertUnderKey(scope, belief(scope), 'k'));
        await store.recordGrant(grant(scope));
      }
      for (const userId of [home.userId, keeper.userId]) {
        await store.chargeBudget({
          userId,
          windowStart: t(0),
          charges: [{ name: 'calls', amount: 3, limit: null }],
        });
      }
      expect(await store.eraseScope(home)).toEqual({
        ...NOTHING_ERASED,
        beliefs: 1,
        operations: 1,
        grants: 1,
      });
      expect(await store.getOperation(home, 'k')).toBeNull();
      expect(await store.listGrants(home)).toEqual([]);
      expect(await store.activeGrant(home, t(20))).toBeNull();
      for (const scope of [work, keeper]) {
        expect(await store.getOperation(scope, 'k')).not.toBeNull();
        expect(await store.listGrants(scope)).toHaveLength(1);
      }
      // Budget counters are the user's across namespaces: erasing one namespace does not refill them.
      const zero = [{ name: 'calls', amount: 0, limit: 100 }];
      for (const userId of [home.userId, keeper.userId]) {
        expect(await store.chargeBudget({ userId, windowStart: t(0), charges: zero })).toEqual({
          charged: true,
          used: { calls: 3 },
        });
      }
      // The erased key can be used again.
      const b = belief(home);
      await store.commit(insertUnderKey(home, b, 'k'));
      expect((await store.getOperation(home, 'k'))?.beliefIds).toEqual([b.id]);
    },
  );

  ctx.test('clearAll erases every user with a receipt, and the store stays usable', async () => {
    const [store, a] = await storeAndUser(ctx);
    const aWork = { userId: a.userId, namespace: 'work' };
    const b = { userId: unique('user-') };
    await insertAll(store, a, [belief(a), belief(a, { status: 'pending' })]);
    await insertAll(store, aWork, [
      { belief: belief(aWork, { value: 'herons' }), embedding: vec(1, 0, 0, 0) },
    ]);
    await insertAll(store, b, [belief(b)]);
    await store.appendItems(b, unique('s-'), [{ role: 'user', content: 'hi' }], {
      enqueue: [{ index: 0, role: 'user', text: 'hi', at: t(0) }],
    });
    await store.enqueue([turn({ userId: unique('only-outbox-') }, unique('s-'), 0, 'queued')]);
    const k = belief(b);
    await store.commit({
      scope: b,
      inserts: [{ belief: k }],
      updates: [],
      audit: [audit(b, k.id)],
      operation: op('k', [k.id]),
    });
    await store.recordGrant(grant(a));
    const receipt = await store.clearAll();
    expect(receipt).toEqual({
      users: 3,
      beliefs: 5,
      outboxEntries: 2,
      transcriptItems: 1,
      auditEvents: 5,
      operations: 1,
      grants: 1,
    });
    expect(await store.listScopes()).toEqual([]);
    expect((await store.info()).outbox).toEqual({
      queued: 0,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: null,
    });
    for (const scope of [a, aWork, b]) {
      expect(await listAll(store, scope)).toEqual([]);
      expect(await store.searchLexical(scope, 'herons blue', { limit: 5 })).toEqual([]);
    }
    expect(await store.getOperation(b, 'k')).toBeNull();
    expect(await store.listGrants(a)).toEqual([]);
    // Still usable: same dimensions, writes and searches work.
    const again = belief(a, { value: 'herons' });
    await insertAll(store, a, [{ belief: again, embedding: vec(1, 0, 0, 0) }]);
    expect(hitIds(await store.searchLexical(a, 'herons', { limit: 5 }))).toEqual([again.id]);
    expect(await store.clearAll()).toEqual({ ...NOTHING_ERASED, users: 1, beliefs: 1, auditEvents: 1 });
    expect(await store.clearAll()).toEqual({ ...NOTHING_ERASED, users: 0 });
  });
}

/** A store's raw view of a scope, for tests that check that nothing was written. */
export async function everything(
  store: FullStore,
  scope: Scope,
): Promise<Awaited<ReturnType<typeof snapshot>> & { backlog: StoreInfo['outbox'] }> {
  return {
    ...(await snapshot(store, scope)),
    backlog: await store.backlog({ now: t(0), userId: scope.userId }),
  };
}
