import {
  type Belief,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  InvalidInputError,
  LeaseLostError,
} from '@mem01/engine';
import { type BeliefInsert, cosineSimilarity, NOTHING_ERASED } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import {
  audit,
  belief,
  completeOnly,
  FAR_FUTURE,
  hitIds,
  ids,
  insertAll,
  listAll,
  rejects,
  snapshot,
  sortDesc,
  storeAndUser,
  supersede,
  t,
  turn,
  unique,
  vec,
} from '../fixtures.js';

/** An exported-looking belief: later version, lifecycle links, evidence, source `import`. */
function exported(b: Belief, patch: Partial<Belief>): Belief {
  return { ...b, source: 'import', ...patch };
}

export function importTests(ctx: SuiteContext): void {
  ctx.test('getEmbeddings returns stored vectors of the scope only, never of forgotten beliefs', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const other = { userId: unique('user-') };
    const a = belief(scope);
    const b = belief(scope);
    const bare = belief(scope);
    const foreign = belief(other);
    const va = vec(3, 0, 4, 0);
    await insertAll(store, scope, [
      { belief: a, embedding: va },
      { belief: b, embedding: vec(0, 1, 0, 0) },
      bare,
    ]);
    await insertAll(store, other, [{ belief: foreign, embedding: vec(1, 1, 1, 1) }]);
    const got = await store.getEmbeddings(scope, [a.id, b.id, bare.id, foreign.id, unique('nope-')]);
    expect([...got.keys()].sort()).toEqual([a.id, b.id].sort());
    const back = got.get(a.id)!;
    expect(back).toBeInstanceOf(Float32Array);
    expect(back).toHaveLength(4);
    // A store may keep unit vectors: the direction is what must survive.
    expect(cosineSimilarity(back, va)).toBeCloseTo(1, 5);
    await store.forget(scope, a.id, { at: t(50) });
    expect([...(await store.getEmbeddings(scope, [a.id, b.id])).keys()]).toEqual([b.id]);
    expect((await store.getEmbeddings(other, [a.id, b.id])).size).toBe(0);
  });

  ctx.test('importBeliefs restores records verbatim and a repeated import is a no-op', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const project = { userId: scope.userId, namespace: 'p' };
    const oldId = belief(scope).id;
    const newer = belief(scope, {
      attribute: 'home_city',
      value: 'Kyoto',
      statement: 'The user lives in Kyoto.',
      supersedes: oldId,
      at: t(20),
      evidence: [
        { sessionId: 'old-session', position: 3, role: 'user', quote: 'Kyoto now', at: t(19), ref: 'd1' },
      ],
    });
    const old = exported(belief(scope, { attribute: 'home_city', value: 'Nara', at: t(1), id: oldId }), {
      status: 'superseded',
      supersededBy: newer.id,
      invalidatedAt: t(20),
      updatedAt: t(20),
      version: 3,
    });
    const tomb = exported(belief(project, { at: t(2) }), {
      subject: '',
      attribute: '',
      value: '',
      statement: '',
      status: 'forgotten',
      version: 2,
      invalidatedAt: t(4),
    });
    const records: BeliefInsert[] = [
      { belief: old },
      { belief: newer, embedding: vec(0, 1, 0, 0) },
      { belief: tomb },
    ];
    expect(await store.importBeliefs(records)).toEqual({ inserted: 3, skipped: 0 });
    expect(await store.get(scope, old.id)).toEqual(old);
    expect(await store.get(scope, newer.id)).toEqual(newer);
    expect(await store.get(project, tomb.id)).toEqual(tomb);
    expect(ids(await store.history(scope, { id: newer.id }))).toEqual([old.id, newer.id]);
    if (store.capabilities.vectorSearch !== 'none') {
      expect(hitIds(await store.searchVector(scope, vec(0, 1, 0, 0), { limit: 5 }))).toEqual([newer.id]);
    }
    expect(hitIds(await store.searchLexical(scope, 'kyoto', { limit: 5 }))).toEqual([newer.id]);
    expect(await store.importBeliefs(records)).toEqual({ inserted: 0, skipped: 3 });
    expect(ids(await listAll(store, scope))).toEqual(sortDesc([old.id, newer.id]));
    const extra = exported(belief(scope, { attribute: 'pet' }), {});
    expect(await store.importBeliefs([...records, { belief: extra }])).toEqual({ inserted: 1, skipped: 3 });
  });

  ctx.test('importBeliefs is all-or-nothing', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const existing = belief(scope, { attribute: 'employer', value: 'Acme' });
    await insertAll(store, scope, [existing]);
    const good = belief(scope, { attribute: 'pet', value: 'cat' });
    const cases: [BeliefInsert[], abstract new (...args: never[]) => Error][] = [
      [[{ belief: good }, { belief: { ...belief(scope), confidence: Number.NaN } }], InvalidInputError],
      [[{ belief: good }, { belief: { ...belief(scope), scope: { userId: '' } } }], InvalidInputError],
      [
        [{ belief: good }, { belief: belief(scope, { attribute: 'employer', value: 'Globex' }) }],
        DuplicateActiveBeliefError,
      ],
      [
        [
          { belief: good },
          { belief: belief(scope, { attribute: 'x' }) },
          { belief: belief(scope, { attribute: 'x' }) },
        ],
        DuplicateActiveBeliefError,
      ],
      [
        [
          { belief: good, embedding: vec(1, 0, 0, 0) },
          { belief: belief(scope), embedding: vec(1, 0) },
        ],
        DimensionMismatchError,
      ],
    ];
    for (const [records, errorClass] of cases) {
      await rejects(store.importBeliefs(records), errorClass as never);
      expect(await store.get(scope, good.id)).toBeNull();
      expect(ids(await listAll(store, scope))).toEqual([existing.id]);
    }
    expect(await store.importBeliefs([{ belief: good }])).toEqual({ inserted: 1, skipped: 0 });
  });
}

export function eraseTests(ctx: SuiteContext): void {
  ctx.test('eraseUser deletes everything of the user in every namespace and nothing else', async () => {
    const store = await ctx.open();
    const user = unique('user-');
    const home = { userId: user };
    const work = { userId: user, namespace: 'work' };
    const keeper = { userId: unique('user-') };
    const b1 = belief(home, { statement: 'The user likes herons.', value: 'herons' });
    const b2 = belief(home, { status: 'pending' });
    const b3 = belief(work);
    await insertAll(store, home, [{ belief: b1, embedding: vec(1, 0, 0, 0) }, b2]);
    await insertAll(store, work, [b3]);
    const kept = belief(keeper, { statement: 'The user likes herons too.', value: 'herons' });
    await insertAll(store, keeper, [{ belief: kept, embedding: vec(1, 0, 0, 0) }]);
    const session = unique('s-');
    const keeperSession = unique('s-');
    await store.appendItems(
      home,
      session,
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      { enqueue: [{ index: 0, role: 'user', text: 'hi', at: t(0) }] },
    );
    await store.appendItems(home, session, [{ role: 'user', content: 'more' }]);
    await store.enqueue([turn(work, unique('s-'), 0, 'work turn')]);
    await store.appendItems(keeper, keeperSession, [{ role: 'user', content: 'mine' }], {
      enqueue: [{ index: 0, role: 'user', text: 'mine', at: t(0) }],
    });

    const receipt = await store.eraseUser(user);
    expect(receipt).toEqual({
      ...NOTHING_ERASED,
      beliefs: 3,
      outboxEntries: 2,
      transcriptItems: 3,
      auditEvents: 3,
    });
    for (const scope of [home, work]) {
      expect(await listAll(store, scope)).toEqual([]);
      expect(await store.history(scope)).toEqual([]);
      expect(await store.auditLog(scope)).toEqual([]);
      expect(await store.searchLexical(scope, 'herons', { limit: 5 })).toEqual([]);
      if (store.capabilities.vectorSearch !== 'none') {
        expect(await store.searchVector(scope, vec(1, 0, 0, 0), { limit: 5 })).toEqual([]);
      }
    }
    expect(await store.get(home, b1.id)).toBeNull();
    expect(await store.getItems(home, session)).toEqual([]);
    expect(await store.backlog({ now: t(1), userId: user })).toEqual({
      queued: 0,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: null,
    });
    expect(await store.claim({ worker: 'w', leaseMs: 1000, now: FAR_FUTURE, userId: user })).toBeNull();
    expect((await store.listScopes()).map((s) => s.scope.userId)).toEqual([keeper.userId]);
    // The other user is intact.
    expect(await store.get(keeper, kept.id)).toEqual(kept);
    expect(hitIds(await store.searchLexical(keeper, 'herons', { limit: 5 }))).toEqual([kept.id]);
    expect(await store.getItems(keeper, keeperSession)).toEqual([{ role: 'user', content: 'mine' }]);
    const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: t(1) });
    expect(claim?.entries.map((e) => e.text)).toEqual(['mine']);
    // Erasing again finds nothing; the erased turns can be accepted again.
    expect(await store.eraseUser(user)).toEqual(NOTHING_ERASED);
    expect(await store.enqueue([turn(work, 'again', 0, 'work turn')])).toEqual({
      accepted: 1,
      duplicates: 0,
    });
  });

  ctx.test(
    'eraseScope deletes one scope in every status with its outbox and audit; transcripts and other scopes stay',
    async () => {
      const store = await ctx.open();
      const user = unique('user-');
      const home = { userId: user };
      const work = { userId: user, namespace: 'work' };
      const keeper = { userId: unique('user-') };
      const active = belief(home, { statement: 'The user likes herons.', value: 'herons' });
      const old = belief(home, {
        attribute: 'home_city',
        value: 'Nara',
        statement: 'The user lives in Nara.',
      });
      const next = belief(home, {
        attribute: 'home_city',
        value: 'Kyoto',
        statement: 'The user lives in Kyoto.',
        supersedes: old.id,
        at: t(1),
      });
      const pending = belief(home, { status: 'pending', value: 'herons at dusk' });
      const retracted = belief(home, { status: 'retracted', value: 'egrets' });
      const tomb = belief(home, { value: 'gone' });
      const episode = belief(home, { kind: 'episode', value: 'I saw herons', statement: 'I saw herons' });
      await insertAll(store, home, [
        { belief: active, embedding: vec(1, 0, 0, 0) },
        { belief: old, embedding: vec(0, 1, 0, 0) },
        pending,
        retracted,
        tomb,
        { belief: episode, embedding: vec(1, 1, 0, 0) },
      ]);
      await store.commit(supersede(home, old, next));
      await store.forget(home, tomb.id, { at: t(2) });
      const worked = belief(work, { statement: 'The user likes herons at work.', value: 'herons' });
      await insertAll(store, work, [{ belief: worked, embedding: vec(1, 0, 0, 0) }]);
      const kept = belief(keeper, { statement: 'The user likes herons too.', value: 'herons' });
      await insertAll(store, keeper, [{ belief: kept, embedding: vec(1, 0, 0, 0) }]);

      // The scope's turns: one extracted (done), one claimed and held by a worker.
      const session = unique('s-');
      await store.appendItems(
        home,
        session,
        [
          { role: 'user', content: 'I saw herons' },
          { role: 'assistant', content: 'Lovely.' },
        ],
        { enqueue: [{ index: 0, role: 'user', text: 'I saw herons', at: t(0) }] },
      );
      const first = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(0), userId: user });
      await store.commit(completeOnly(home, first!));
      await store.appendItems(home, session, [{ role: 'user', content: 'more herons' }], {
        enqueue: [{ index: 0, role: 'user', text: 'more herons', at: t(1) }],
      });
      const held = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(1), userId: user });
      expect(held?.entries.map((e) => e.text)).toEqual(['more herons']);
      const workSession = unique('s-');
      await store.appendItems(work, workSession, [{ role: 'user', content: 'work herons' }], {
        enqueue: [{ index: 0, role: 'user', text: 'work herons', at: t(1) }],
      });
      const keeperSession = unique('s-');
      await store.appendItems(keeper, keeperSession, [{ role: 'user', content: 'mine' }]);

      const before = await snapshot(store, home);
      expect(before.history).toHaveLength(7);
      const transcript = await store.getItems(home, session);
      expect(transcript).toHaveLength(3);
      const others = [await snapshot(store, work), await snapshot(store, keeper)];

      expect(await store.eraseScope(home)).toEqual({
        ...NOTHING_ERASED,
        beliefs: 7,
        outboxEntries: 2,
        auditEvents: before.audit.length,
      });
      expect(await snapshot(store, home)).toEqual({ beliefs: [], audit: [], history: [] });
      for (const b of [active, old, next, pending, retracted, tomb, episode]) {
        expect(await store.get(home, b.id)).toBeNull();
      }
      expect(await store.searchLexical(home, 'herons kyoto', { limit: 10 })).toEqual([]);
      if (store.capabilities.vectorSearch !== 'none') {
        expect(await store.searchVector(home, vec(1, 0, 0, 0), { limit: 10 })).toEqual([]);
      }
      expect((await store.getEmbeddings(home, [active.id, episode.id])).size).toBe(0);
      // The transcript is the user's record of the conversation: untouched, and it goes on where it was.
      expect(await store.getItems(home, session)).toEqual(transcript);
      expect(
        (await store.appendItems(home, session, [{ role: 'user', content: 'again' }])).positions,
      ).toEqual([3]);
      // The held claim is lost; the user's other namespace is not blocked by it.
      await rejects(store.commit(completeOnly(home, held!)), LeaseLostError);
      expect(await store.backlog({ now: t(2), userId: user })).toMatchObject({
        queued: 1,
        claimed: 0,
        dead: 0,
      });
      const again = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(2), userId: user });
      expect(again?.scope).toEqual({ userId: user, namespace: 'work' });
      expect(again?.entries.map((e) => e.text)).toEqual(['work herons']);
      // The user's other namespace and the other user are intact.
      expect([await snapshot(store, work), await snapshot(store, keeper)]).toEqual(others);
      expect(hitIds(await store.searchLexical(work, 'herons', { limit: 5 }))).toEqual([worked.id]);
      expect(hitIds(await store.searchLexical(keeper, 'herons', { limit: 5 }))).toEqual([kept.id]);
      expect(await store.getItems(keeper, keeperSession)).toEqual([{ role: 'user', content: 'mine' }]);
      expect((await store.listScopes()).map((x) => x.scope)).toEqual(
        [
          { userId: keeper.userId, namespace: '' },
          { userId: user, namespace: 'work' },
        ].sort((a, b) => (a.userId < b.userId ? -1 : 1)),
      );
      // Erasing again (or a scope never used) finds nothing; the scope takes new beliefs.
      expect(await store.eraseScope(home)).toEqual(NOTHING_ERASED);
      expect(await store.eraseScope({ userId: unique('user-'), namespace: 'x' })).toEqual(NOTHING_ERASED);
      const fresh = belief(home, { statement: 'The user likes herons again.', value: 'herons' });
      await insertAll(store, home, [{ belief: fresh, embedding: vec(1, 0, 0, 0) }]);
      expect(hitIds(await store.searchLexical(home, 'herons', { limit: 5 }))).toEqual([fresh.id]);
      if (store.capabilities.vectorSearch !== 'none') {
        expect(hitIds(await store.searchVector(home, vec(1, 0, 0, 0), { limit: 5 }))).toEqual([fresh.id]);
      }
    },
  );

  ctx.test('listScopes counts beliefs by status, sorted by userId then namespace', async () => {
    const store = await ctx.open();
    expect(await store.listScopes()).toEqual([]);
    const a = { userId: 'conf-a' };
    const ax = { userId: 'conf-a', namespace: 'x' };
    const b = { userId: 'conf-b' };
    await insertAll(store, b, [belief(b)]);
    await insertAll(store, ax, [belief(ax, { status: 'pending' }), belief(ax, { status: 'retracted' })]);
    const a1 = belief(a, { attribute: 'k' });
    await insertAll(store, a, [a1, belief(a)]);
    await store.forget(a, a1.id, { at: t(3) });
    await store.enqueue([turn({ userId: 'conf-c' }, 'only-outbox', 0, 'no beliefs')]);
    const zero = { active: 0, pending: 0, superseded: 0, retracted: 0, forgotten: 0 };
    const summaries = (await store.listScopes()).map((s) => ({
      scope: { userId: s.scope.userId, namespace: s.scope.namespace ?? '' },
      counts: s.counts,
    }));
    expect(summaries).toEqual([
      { scope: { userId: 'conf-a', namespace: '' }, counts: { ...zero, active: 1, forgotten: 1 } },
      { scope: { userId: 'conf-a', namespace: 'x' }, counts: { ...zero, pending: 1, retracted: 1 } },
      { scope: { userId: 'conf-b', namespace: '' }, counts: { ...zero, active: 1 } },
    ]);
  });

  ctx.test('auditLog is content-free, oldest first, filtered by belief and limited', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, { value: 'Marrakesh', statement: 'The user lives in Marrakesh.' });
    const b = belief(scope, { value: 'Tbilisi', statement: 'The user lives in Tbilisi.' });
    await store.commit({
      scope,
      inserts: [{ belief: a }],
      updates: [],
      audit: [audit(scope, a.id, 'add', t(1))],
    });
    await store.commit({
      scope,
      inserts: [{ belief: b }],
      updates: [],
      audit: [audit(scope, b.id, 'add', t(2))],
    });
    await store.commit({
      scope,
      inserts: [],
      updates: [{ id: a.id, expectedVersion: 1, set: { confidence: 0.9, updatedAt: t(3) } }],
      audit: [
        { ...audit(scope, a.id, 'confirm', t(3)), statement: 'The user lives in Marrakesh.' } as never,
        audit(scope, null, 'correct', t(3)),
      ],
    });
    const log = await store.auditLog(scope);
    expect(log.map((e) => [e.action, e.beliefId])).toEqual([
      ['add', a.id],
      ['add', b.id],
      ['confirm', a.id],
      ['correct', null],
    ]);
    expect(log[0]).toMatchObject({ at: t(1), actor: 'conformance', scope: { userId: scope.userId } });
    const text = JSON.stringify(log).toLowerCase();
    expect(text).not.toContain('marrakesh');
    expect(text).not.toContain('tbilisi');
    expect((await store.auditLog(scope, { beliefId: a.id })).map((e) => e.action)).toEqual([
      'add',
      'confirm',
    ]);
    expect(await store.auditLog(scope, { limit: 2 })).toEqual(log.slice(0, 2));
    expect(await store.auditLog({ userId: unique('user-') })).toEqual([]);
  });

  ctx.test('info reports name, capabilities, dimensions and backlog; close is idempotent', async () => {
    const store = await ctx.open(8);
    const info = await store.info();
    expect(info.name).toBe(store.name);
    expect(info.capabilities).toEqual(store.capabilities);
    expect(['index', 'exact', 'none']).toContain(info.capabilities.vectorSearch);
    expect(typeof info.capabilities.lexicalIndex).toBe('string');
    expect(Number.isInteger(info.schemaVersion)).toBe(true);
    expect(info.dimensions).toBe(8);
    expect(info.outbox).toEqual({ queued: 0, claimed: 0, dead: 0, staleLeases: 0, nextClaimableAt: null });
    const scope = { userId: unique('user-') };
    await rejects(
      store.commit({
        ...{ scope, updates: [], audit: [] },
        inserts: [{ belief: belief(scope), embedding: vec(1, 2, 3, 4) }],
      }),
      DimensionMismatchError,
    );
    await store.enqueue([turn(scope, unique('s-'), 0, 'x')]);
    expect((await store.info()).outbox.queued).toBe(1);
    await store.close();
    await store.close();
  });
}
