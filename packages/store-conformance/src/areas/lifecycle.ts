import { type Belief, NotFoundError, type Scope, VersionConflictError } from '@mem01/engine';
import { FORGOTTEN_MARKER } from '@mem01/engine/store-kit';
import { assistantMessageItem } from '@mem01/engine/testing';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import {
  ALL_STATUSES,
  belief,
  hitIds,
  ids,
  insertAll,
  listAll,
  rejects,
  storeAndUser,
  supersede,
  t,
  turn,
  unique,
  vec,
} from '../fixtures.js';

export function historyTests(ctx: SuiteContext): void {
  ctx.test('history follows the chain both ways, oldest first', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, { attribute: 'home_city', value: 'NYC', at: t(10) });
    await insertAll(store, scope, [a]);
    const b = belief(scope, { attribute: 'home_city', value: 'SF', supersedes: a.id, at: t(20) });
    await store.commit(supersede(scope, a, b));
    const c = belief(scope, { attribute: 'home_city', value: 'LA', supersedes: b.id, at: t(30) });
    await store.commit(supersede(scope, b, c));
    const unrelated = belief(scope, { attribute: 'pet', value: 'dog', at: t(15) });
    await insertAll(store, scope, [unrelated]);
    for (const start of [a, b, c]) {
      const chain = await store.history(scope, { id: start.id });
      expect(ids(chain), `from ${start.value}`).toEqual([a.id, b.id, c.id]);
    }
    const chain = await store.history(scope, { id: c.id });
    expect(chain[0]).toMatchObject({ status: 'superseded', supersededBy: b.id, version: 2 });
    expect(chain[1]).toMatchObject({ status: 'superseded', supersedes: a.id, supersededBy: c.id });
    expect(chain[2]).toEqual(c);
    expect(ids(await store.history(scope, { id: unrelated.id }))).toEqual([unrelated.id]);
  });

  ctx.test('history without id lists every belief of the scope by storedAt, then id', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const late = belief(scope, { at: t(50) });
    const early = belief(scope, { at: t(5), status: 'retracted' });
    const sameA = belief(scope, { at: t(20), status: 'pending' });
    const sameB = belief(scope, { at: t(20) });
    await insertAll(store, scope, [late, sameB, early, sameA]);
    const sameOrder = [sameA.id, sameB.id].sort();
    expect(ids(await store.history(scope))).toEqual([early.id, ...sameOrder, late.id]);
  });

  ctx.test('history of an unknown id, or an id of another scope, is []', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const other = { userId: unique('user-') };
    const mine = belief(scope);
    await insertAll(store, scope, [mine]);
    expect(await store.history(scope, { id: unique('nope-') })).toEqual([]);
    expect(await store.history(other, { id: mine.id })).toEqual([]);
    expect(await store.history(other)).toEqual([]);
  });
}

const SECRET = 'Zanzibar';
const hasSecret = (value: unknown): boolean => JSON.stringify(value).toLowerCase().includes('zanzibar');
/** The value as a whole word, any case (the forget rule): "zanzibari" is another word. */
const carriesSecret = (value: unknown): boolean =>
  /(?<![\p{L}\p{N}])zanzibar(?![\p{L}\p{N}])/iu.test(JSON.stringify(value));

export function forgetTests(ctx: SuiteContext): void {
  ctx.test('forget removes the content from every read path', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-'), namespace: 'travel' };
    const session = unique('s-');
    await store.enqueue([
      turn(scope, session, 0, `I moved to ${SECRET} last spring`),
      turn(scope, session, 1, 'I like green tea'),
    ]);
    const evidence = [
      { sessionId: session, position: 0, role: 'user' as const, quote: `moved to ${SECRET}`, at: t(0) },
    ];
    const z = belief(scope, {
      attribute: 'home_city',
      value: SECRET,
      statement: `The user lives in ${SECRET}.`,
      evidence,
      at: t(1),
    });
    await insertAll(store, scope, [{ belief: z, embedding: vec(0, 0, 1, 0) }]);
    const oslo = belief(scope, {
      attribute: 'home_city',
      value: 'Oslo',
      statement: 'The user lives in Oslo.',
      supersedes: z.id,
      at: t(2),
    });
    await store.commit({
      ...supersede(scope, z, oslo),
      inserts: [{ belief: oslo, embedding: vec(0, 1, 0, 0) }],
    });
    const tea = belief(scope, { attribute: 'drink', value: 'green tea', at: t(3) });
    await insertAll(store, scope, [tea]);
    const beforeForget = (await store.get(scope, z.id))!;

    const tombstone = await store.forget(scope, z.id, { at: t(100) });
    expect(tombstone).toMatchObject({
      id: z.id,
      status: 'forgotten',
      subject: '',
      attribute: '',
      value: '',
      statement: '',
      evidence: [],
      invalidatedAt: t(100),
      updatedAt: t(100),
      version: beforeForget.version + 1,
      supersededBy: oslo.id,
    });
    expect(hasSecret(tombstone)).toBe(false);
    expect(await store.get(scope, z.id)).toEqual(tombstone);

    const all = await listAll(store, scope);
    expect(ids(all)).toContain(z.id);
    expect(hasSecret(all)).toBe(false);
    expect(hasSecret((await store.list(scope, { statuses: ['forgotten'] })).items)).toBe(false);
    for (const q of [SECRET, 'lives', 'home city', `moved to ${SECRET}`]) {
      const hits = await store.searchLexical(scope, q, { limit: 50, statuses: ALL_STATUSES });
      expect(hitIds(hits), q).not.toContain(z.id);
      expect(hasSecret(hits), q).toBe(false);
    }
    if (store.capabilities.vectorSearch !== 'none') {
      const hits = await store.searchVector(scope, vec(0, 0, 1, 0), { limit: 50, statuses: ALL_STATUSES });
      expect(hitIds(hits)).not.toContain(z.id);
      expect(hasSecret(hits)).toBe(false);
    }
    const history = await store.history(scope);
    expect(ids(history)).toContain(z.id);
    expect(hasSecret(history)).toBe(false);
    const chain = await store.history(scope, { id: oslo.id });
    expect(ids(chain)).toEqual([z.id, oslo.id]);
    expect(hasSecret(chain)).toBe(false);
    expect(hasSecret(await store.auditLog(scope))).toBe(false);
    expect(hasSecret(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: 'home_city' }]))).toBe(
      false,
    );
    // The outbox turn the belief came from is erased too; the unrelated turn is kept.
    // (Whether the erased turn stays queued with empty text or is retired is the store's choice.)
    const claim = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(200), maxEntries: 10 });
    expect(hasSecret(claim)).toBe(false);
    expect(claim?.entries.find((e) => e.position === 1)?.text).toBe('I like green tea');
    expect(await store.get(scope, tea.id)).toEqual(tea);
  });

  ctx.test(
    'forget removes the content from the transcript: the evidence turn whole, repeats in the user’s other items',
    async () => {
      const store = await ctx.open();
      const scope = { userId: unique('user-'), namespace: 'travel' };
      const other = { userId: unique('other-') };
      const session = unique('s-');
      const earlier = unique('s-');
      const otherSession = unique('s-');
      const reply = assistantMessageItem;
      await store.appendItems(scope, session, [
        { role: 'user', content: `I moved to ${SECRET} last spring` },
        reply(`${SECRET} is lovely in spring; zanzibari food too.`),
        { role: 'user', content: 'I like green tea' },
      ]);
      // Another session of the same user (another namespace) that repeats the value; and another user's session.
      await store.appendItems({ userId: scope.userId }, earlier, [
        { role: 'user', content: `Flights to ${SECRET.toUpperCase()}?` },
      ]);
      await store.appendItems(other, otherSession, [
        { role: 'user', content: `My cousin lives in ${SECRET}` },
      ]);
      const z = belief(scope, {
        attribute: 'home_city',
        value: SECRET,
        statement: `The user lives in ${SECRET}.`,
        evidence: [{ sessionId: session, position: 0, role: 'user', quote: `moved to ${SECRET}`, at: t(0) }],
      });
      await insertAll(store, scope, [{ belief: z }]);
      await store.forget(scope, z.id, { at: t(100) });

      expect(await store.getItems(scope, session)).toEqual([
        { role: 'user', content: FORGOTTEN_MARKER },
        reply(`${FORGOTTEN_MARKER} is lovely in spring; zanzibari food too.`),
        { role: 'user', content: 'I like green tea' },
      ]);
      expect(await store.getItems({ userId: scope.userId }, earlier)).toEqual([
        { role: 'user', content: `Flights to ${FORGOTTEN_MARKER}?` },
      ]);
      // Another user's transcript is theirs and is not touched.
      expect(await store.getItems(other, otherSession)).toEqual([
        { role: 'user', content: `My cousin lives in ${SECRET}` },
      ]);
      // The session goes on at the next position.
      const next = await store.appendItems(scope, session, [{ role: 'user', content: 'and now?' }]);
      expect(next.positions).toEqual([3]);
    },
  );

  ctx.test(
    'forget forgets every episode of the scope that carries the value, and the transcript turns they keep',
    async () => {
      const store = await ctx.open();
      const scope = { userId: unique('user-'), namespace: 'travel' };
      const other = { userId: unique('other-'), namespace: 'travel' };
      const work = { userId: scope.userId, namespace: 'work' };
      const [s1, s2, s3, theirs, atWork] = [
        unique('s-'),
        unique('s-'),
        unique('s-'),
        unique('s-'),
        unique('s-'),
      ];
      const reply = assistantMessageItem;
      const said = (text: string) => ({ role: 'user', content: text });
      // Session 1 holds the evidence turn; session 2 repeats the value (in another case) beside turns that do not
      // carry it ("zanzibari" is another word); session 3 is one long turn kept as two episodes, one naming it.
      await store.appendItems(scope, s1, [
        said(`I moved to ${SECRET} last spring`),
        reply(`${SECRET} is lovely in spring.`),
        said('I like green tea'),
      ]);
      await store.appendItems(scope, s2, [
        said(`Is the ferry to ${SECRET.toLowerCase()} town cheap?`),
        said('My sister visits in June'),
        said('zanzibari food is spicy'),
        said(`Any news from the ${SECRET} harbour?`),
      ]);
      await store.appendItems(scope, s3, [
        said(`We sailed from Dar es Salaam and landed in ${SECRET} at dawn`),
      ]);
      await store.appendItems(other, theirs, [said(`I moved to ${SECRET} last spring`)]);
      await store.appendItems(work, atWork, [said(`Book a hotel in ${SECRET}`)]);
      // The turns of session 2 are in the outbox too (a retried extraction, say).
      await store.enqueue([
        turn(scope, s2, 0, `Is the ferry to ${SECRET.toLowerCase()} town cheap?`),
        turn(scope, s2, 1, 'My sister visits in June'),
      ]);
      const ep = (
        owner: Scope,
        session: string,
        position: number,
        text: string,
        part = 0,
        status?: 'superseded',
      ) =>
        belief(owner, {
          kind: 'episode',
          attribute: `episode:${session}:${position}${part > 0 ? `#${part}` : ''}`,
          value: text,
          statement: text,
          confidence: 1,
          evidence: [{ sessionId: session, position, role: 'user', quote: text, at: t(position) }],
          ...(status ? { status } : {}),
        });
      const evidenceEp = ep(scope, s1, 0, `I moved to ${SECRET} last spring`);
      const teaEp = ep(scope, s1, 2, 'I like green tea');
      const ferryEp = ep(scope, s2, 0, `Is the ferry to ${SECRET.toLowerCase()} town cheap?`);
      const sisterEp = ep(scope, s2, 1, 'My sister visits in June');
      const foodEp = ep(scope, s2, 2, 'zanzibari food is spicy');
      // A retired episode still shows in history: it carries the value, so it goes too.
      const retiredEp = ep(scope, s2, 3, `Any news from the ${SECRET} harbour?`, 0, 'superseded');
      const sailedEp = ep(scope, s3, 0, 'We sailed from Dar es Salaam');
      const dawnEp = ep(scope, s3, 0, `and landed in ${SECRET} at dawn`, 1);
      const theirEp = ep(other, theirs, 0, `I moved to ${SECRET} last spring`);
      const workEp = ep(work, atWork, 0, `Book a hotel in ${SECRET}`);
      const vectors = new Map<string, Float32Array>([
        [evidenceEp.id, vec(1, 0, 0, 0)],
        [ferryEp.id, vec(0, 1, 0, 0)],
        [sailedEp.id, vec(0, 0, 1, 0)],
        [dawnEp.id, vec(0, 0, 0, 1)],
        [teaEp.id, vec(1, 1, 0, 0)],
        [sisterEp.id, vec(0, 1, 1, 0)],
        [foodEp.id, vec(0, 0, 1, 1)],
        [retiredEp.id, vec(1, 0, 0, 1)],
      ]);
      const mine = [evidenceEp, teaEp, ferryEp, sisterEp, foodEp, retiredEp, sailedEp, dawnEp];
      await insertAll(
        store,
        scope,
        mine.map((b) => ({ belief: b, embedding: vectors.get(b.id)! })),
      );
      await insertAll(store, other, [{ belief: theirEp, embedding: vec(1, 0, 0, 0) }]);
      await insertAll(store, work, [workEp]);
      const z = belief(scope, {
        kind: 'fact',
        attribute: 'home_city',
        value: SECRET,
        statement: `The user lives in ${SECRET}.`,
        evidence: [{ sessionId: s1, position: 0, role: 'user', quote: `moved to ${SECRET}`, at: t(0) }],
      });
      await insertAll(store, scope, [z]);
      // What each forgotten episode is found by, before: its own words besides the value.
      const foundBy: [string, Belief][] = [
        ['ferry town cheap', ferryEp],
        ['sailed Dar es Salaam', sailedEp],
        ['landed dawn', dawnEp],
        ['moved last spring', evidenceEp],
        ['harbour news', retiredEp],
      ];
      for (const [q, e] of foundBy) {
        const hits = await store.searchLexical(scope, q, { limit: 50, statuses: ALL_STATUSES });
        expect(hitIds(hits), q).toEqual([e.id]);
      }

      await store.forget(scope, z.id, { at: t(100) });

      const gone = [evidenceEp, ferryEp, retiredEp, sailedEp, dawnEp];
      const kept = [teaEp, sisterEp, foodEp];
      for (const e of gone) {
        expect(await store.get(scope, e.id), e.value).toMatchObject({
          status: 'forgotten',
          value: '',
          statement: '',
          evidence: [],
          invalidatedAt: t(100),
          version: e.version + 1,
        });
      }
      for (const e of kept) expect(await store.get(scope, e.id)).toEqual(e);
      // No read path returns the value, nor the rest of the forgotten turns; the other episodes are found as before.
      expect(carriesSecret(await listAll(store, scope))).toBe(false);
      expect(carriesSecret(await store.history(scope))).toBe(false);
      for (const q of [SECRET, ...foundBy.map(([q]) => q)]) {
        const hits = await store.searchLexical(scope, q, { limit: 50, statuses: ALL_STATUSES });
        expect(hitIds(hits), q).toEqual([]);
      }
      expect(hitIds(await store.searchLexical(scope, 'sister June', { limit: 50 }))).toEqual([sisterEp.id]);
      expect(hitIds(await store.searchLexical(scope, 'zanzibari food', { limit: 50 }))).toEqual([foodEp.id]);
      if (store.capabilities.vectorSearch !== 'none') {
        for (const e of gone) {
          const hits = await store.searchVector(scope, vectors.get(e.id)!, {
            limit: 50,
            statuses: ALL_STATUSES,
          });
          expect(hitIds(hits), e.value).not.toContain(e.id);
          expect(carriesSecret(hits)).toBe(false);
        }
        const hits = await store.searchVector(scope, vectors.get(sisterEp.id)!, { limit: 50 });
        expect(hitIds(hits)).toContain(sisterEp.id);
      }
      // The transcript agrees: each forgotten episode's turn lost its text as the evidence turn did; the value is cut
      // out of the assistant's reply; the turns whose episodes stay are kept.
      expect(await store.getItems(scope, s1)).toEqual([
        said(FORGOTTEN_MARKER),
        reply(`${FORGOTTEN_MARKER} is lovely in spring.`),
        said('I like green tea'),
      ]);
      expect(await store.getItems(scope, s2)).toEqual([
        said(FORGOTTEN_MARKER),
        said('My sister visits in June'),
        said('zanzibari food is spicy'),
        said(FORGOTTEN_MARKER),
      ]);
      expect(await store.getItems(scope, s3)).toEqual([said(FORGOTTEN_MARKER)]);
      // The outbox copy of the repeated turn is erased; the other turn is kept.
      const claim = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(200), maxEntries: 10 });
      expect(carriesSecret(claim)).toBe(false);
      expect(claim?.entries.find((e) => e.sessionId === s2 && e.position === 1)?.text).toBe(
        'My sister visits in June',
      );
      // Another user's identical turn is theirs: episode, search and transcript untouched.
      expect(await store.get(other, theirEp.id)).toEqual(theirEp);
      expect(hitIds(await store.searchLexical(other, SECRET, { limit: 50 }))).toEqual([theirEp.id]);
      expect(await store.getItems(other, theirs)).toEqual([said(`I moved to ${SECRET} last spring`)]);
      // The user's other namespace is a scope of its own: its episodes stay (the belief is not forgotten there), while
      // the cut of the value from the user's transcript items reaches every session of the user.
      expect(await store.get(work, workEp.id)).toEqual(workEp);
      expect(await store.getItems(work, atWork)).toEqual([said(`Book a hotel in ${FORGOTTEN_MARKER}`)]);
    },
  );

  ctx.test('forget checks expectedVersion, and forgetting twice is a no-op', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = belief(scope, { value: 'secret-ish' });
    await insertAll(store, scope, [a]);
    await rejects(store.forget(scope, a.id, { at: t(5), expectedVersion: 2 }), VersionConflictError);
    expect(await store.get(scope, a.id)).toEqual(a);
    const first = await store.forget(scope, a.id, { at: t(5), expectedVersion: 1 });
    expect(first.version).toBe(2);
    const again = await store.forget(scope, a.id, { at: t(9) });
    expect(again).toEqual(first);
    expect(await store.get(scope, a.id)).toEqual(first);
    // The key is free again.
    const b = belief(scope, { attribute: a.attribute, value: 'new' });
    await insertAll(store, scope, [b]);
    expect(ids(await store.getActiveByKeys(scope, [{ subject: 'user', attribute: a.attribute }]))).toEqual([
      b.id,
    ]);
  });

  ctx.test("forget of an unknown id or another scope's id is NotFoundError and changes nothing", async () => {
    const [store, scope] = await storeAndUser(ctx);
    const other = { userId: unique('user-') };
    const theirs: Belief = belief(other, { value: 'theirs' });
    await insertAll(store, other, [theirs]);
    await rejects(store.forget(scope, unique('nope-'), { at: t(5) }), NotFoundError);
    await rejects(store.forget(scope, theirs.id, { at: t(5) }), NotFoundError);
    expect(await store.get(other, theirs.id)).toEqual(theirs);
    expect(await listAll(store, scope)).toEqual([]);
  });
}
