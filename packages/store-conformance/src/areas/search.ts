import { CapabilityError, DimensionMismatchError } from '@mem01/engine';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { belief, hitIds, insertAll, rejects, sortDesc, unique, vec } from '../fixtures.js';

/** Query text that is SQL, FTS5 or tsquery syntax, control characters and emoji, each around a real word. */
const HOSTILE_WITH_WORD: readonly string[] = [
  'zanzibar',
  'ZANZIBAR',
  '"zanzibar',
  'zanzibar"',
  '"zanzibar harbour"',
  'zanzibar*',
  '*zanzibar',
  'NEAR(zanzibar harbour, 2)',
  'NEAR(zanzibar',
  'zanzibar & harbour | !x :*',
  '!zanzibar',
  'zanzibar:*',
  'zanzibar -harbour',
  '-zanzibar',
  'zanzibar AND NOT harbour',
  'zanzibar OR',
  'zanzibar^2',
  '{zanzibar}',
  '(zanzibar',
  'zanzibar)',
  'statement:zanzibar',
  "zanzibar' OR 1=1 --",
  "zanzibar'); DROP TABLE beliefs; --",
  '%zanzibar%',
  'zanzibar_%',
  '\\zanzibar',
  'zanzibar\u0000',
  '\u0000zanzibar\u0000harbour',
  '🎉zanzibar🎉',
  '👩‍👩‍👧 zanzibar',
  'zanzibar\t\n\r',
  '$1 zanzibar ?',
  'zanzibar <-> harbour',
  "'zanzibar'",
];

/** Query text without any word that occurs in the stored beliefs. */
const HOSTILE_WITHOUT_WORD: readonly string[] = [
  "' OR 1=1 --",
  '" OR ""="',
  '*',
  '"',
  "'",
  'NEAR(',
  '&|!:',
  '(((',
  ')',
  '\u0000',
  '\u0000\u0000\u0000',
  '🎉',
  '🎉🎉 👍🏽',
  ':*',
  '%',
  '_',
  '\\',
  ';',
  '--',
  '/*',
  'AND OR NOT',
  '^',
];

export function lexicalTests(ctx: SuiteContext): void {
  ctx.test('searchLexical ranks beliefs with more of the query words first', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const coffee = belief(scope, {
      statement: 'The user drinks dark roast coffee every morning.',
      value: 'dark roast',
    });
    const tea = belief(scope, { statement: 'The user drinks green tea.', value: 'green tea' });
    const grinder = belief(scope, { statement: 'The user owns a coffee grinder.', value: 'grinder' });
    await insertAll(store, scope, [coffee, tea, grinder]);
    const hits = await store.searchLexical(scope, 'dark roast coffee', { limit: 10 });
    expect(hitIds(hits)[0]).toBe(coffee.id);
    expect(hitIds(hits)).toContain(grinder.id);
    expect(hitIds(hits)).not.toContain(tea.id);
    expect(hits[0]!.belief).toEqual(coffee);
    for (const h of hits) expect(h.score).toBeGreaterThan(0);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    expect(await store.searchLexical(scope, 'dark roast coffee', { limit: 1 })).toHaveLength(1);
  });

  ctx.test('searchLexical ORs the query words', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const tea = belief(scope, { statement: 'The user drinks green tea.', value: 'green tea' });
    const grinder = belief(scope, { statement: 'The user owns a coffee grinder.', value: 'grinder' });
    const bike = belief(scope, { statement: 'The user rides a bicycle.', value: 'bicycle' });
    await insertAll(store, scope, [tea, grinder, bike]);
    const hits = await store.searchLexical(scope, 'tea grinder submarine', { limit: 10 });
    expect(hitIds(hits).sort()).toEqual([tea.id, grinder.id].sort());
  });

  ctx.test('searchLexical covers statement, value, subject and attribute', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const cello = belief(scope, {
      attribute: 'favorite_instrument',
      value: 'cello',
      statement: 'The user plays the cello.',
    });
    const sister = belief(scope, {
      subject: 'sister',
      attribute: 'home_city',
      value: 'Quito',
      statement: 'She lives far away.',
    });
    await insertAll(store, scope, [cello, sister]);
    expect(hitIds(await store.searchLexical(scope, 'instrument', { limit: 5 }))).toEqual([cello.id]);
    expect(hitIds(await store.searchLexical(scope, 'quito', { limit: 5 }))).toEqual([sister.id]);
    expect(hitIds(await store.searchLexical(scope, 'sister', { limit: 5 }))).toEqual([sister.id]);
    expect(hitIds(await store.searchLexical(scope, 'cello', { limit: 5 }))).toEqual([cello.id]);
  });

  ctx.test('searchLexical searches active beliefs unless other statuses are asked for', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const active = belief(scope, { statement: 'The user likes kayaking.', value: 'kayaking' });
    const pending = belief(scope, { statement: 'The user likes kayaking at night.', status: 'pending' });
    const retracted = belief(scope, { statement: 'The user hates kayaking.', status: 'retracted' });
    await insertAll(store, scope, [active, pending, retracted]);
    expect(hitIds(await store.searchLexical(scope, 'kayaking', { limit: 10 }))).toEqual([active.id]);
    expect(
      hitIds(await store.searchLexical(scope, 'kayaking', { limit: 10, statuses: ['pending'] })),
    ).toEqual([pending.id]);
    const all = await store.searchLexical(scope, 'kayaking', {
      limit: 10,
      statuses: ['active', 'pending', 'retracted'],
    });
    expect(hitIds(all).sort()).toEqual([active.id, pending.id, retracted.id].sort());
  });

  ctx.test('searchLexical breaks score ties by id descending', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const twins = [0, 1, 2].map((i) =>
      belief(scope, {
        attribute: `twin_${'abc'[i]}`,
        value: 'marmalade',
        statement: 'The user likes marmalade.',
      }),
    );
    await insertAll(store, scope, [twins[1]!, twins[0]!, twins[2]!]);
    const hits = await store.searchLexical(scope, 'marmalade', { limit: 10 });
    expect(hits).toHaveLength(3);
    const scores = hits.map((h) => h.score);
    // Identical text except for the attribute letter: equal scores, so the order must be by id.
    if (Math.abs(scores[0]! - scores[2]!) < 1e-9) expect(hitIds(hits)).toEqual(sortDesc(hitIds(hits)));
  });

  ctx.test('searchLexical returns [] for an empty, blank or all-stop-word query', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    await insertAll(store, scope, [
      belief(scope, { statement: 'The user is at the top of the hill and likes it.', value: 'hill' }),
    ]);
    for (const q of ['', '   ', '\n\t', 'the', 'the and of a', 'The AND of']) {
      expect(await store.searchLexical(scope, q, { limit: 10 }), JSON.stringify(q)).toEqual([]);
    }
    expect(await store.searchLexical({ userId: unique('nobody-') }, 'hill', { limit: 10 })).toEqual([]);
  });

  ctx.test('searchLexical treats hostile query text as plain words', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const zanzibar = belief(scope, {
      attribute: 'home_city',
      value: 'Zanzibar',
      statement: 'The user lives in Zanzibar by the old harbour.',
    });
    const other = belief(scope, { attribute: 'pet', value: 'parrot', statement: 'The user owns a parrot.' });
    await insertAll(store, scope, [zanzibar, other]);
    for (const q of HOSTILE_WITH_WORD) {
      const hits = await store.searchLexical(scope, q, { limit: 10 });
      expect(hitIds(hits), JSON.stringify(q)).toEqual([zanzibar.id]);
    }
    for (const q of HOSTILE_WITHOUT_WORD) {
      const hits = await store.searchLexical(scope, q, { limit: 10 });
      expect(hits, JSON.stringify(q)).toEqual([]);
    }
    // Stored text full of syntax is found by its words too.
    const weird = belief(scope, {
      attribute: 'motto',
      value: 'NEAR("x" AND y*)',
      statement: `The user's motto is "carpe' OR 1=1 -- diem" & NEAR(x) 🎉.`,
    });
    await insertAll(store, scope, [weird]);
    expect(hitIds(await store.searchLexical(scope, 'carpe diem', { limit: 10 }))).toEqual([weird.id]);
  });
}

export function vectorTests(ctx: SuiteContext): void {
  ctx.test('searchVector throws CapabilityError when the store has no vector search', async (c) => {
    const store = await ctx.open();
    if (store.capabilities.vectorSearch !== 'none') return c.skip('the store has vector search');
    await rejects(store.searchVector({ userId: 'u' }, vec(1, 0, 0, 0), { limit: 5 }), CapabilityError);
  });

  ctx.test(
    'searchVector returns the nearest first with cosine scores, skipping beliefs without embeddings',
    async (c) => {
      const store = await ctx.open();
      if (store.capabilities.vectorSearch === 'none') return c.skip('the store has no vector search');
      const scope = { userId: unique('user-') };
      const other = { userId: unique('user-') };
      const exact = belief(scope, { value: 'exact' });
      const near = belief(scope, { value: 'near' });
      const orthogonal = belief(scope, { value: 'orthogonal' });
      const opposite = belief(scope, { value: 'opposite' });
      const bare = belief(scope, { value: 'bare' });
      const pending = belief(scope, { value: 'pending', status: 'pending' });
      const foreign = belief(other, { value: 'foreign' });
      await insertAll(store, scope, [
        { belief: exact, embedding: vec(3, 0, 0, 0) },
        { belief: near, embedding: vec(1, 1, 0, 0) },
        { belief: orthogonal, embedding: vec(0, 0, 2, 0) },
        { belief: opposite, embedding: vec(-1, 0, 0, 0) },
        { belief: bare },
        { belief: pending, embedding: vec(1, 0, 0, 0) },
      ]);
      await insertAll(store, other, [{ belief: foreign, embedding: vec(1, 0, 0, 0) }]);
      const hits = await store.searchVector(scope, vec(0.5, 0, 0, 0), { limit: 10 });
      expect(hitIds(hits)).toEqual([exact.id, near.id, orthogonal.id, opposite.id]);
      expect(hits[0]!.score).toBeCloseTo(1, 3);
      expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 3);
      expect(hits[2]!.score).toBeCloseTo(0, 3);
      expect(hits[3]!.score).toBeCloseTo(-1, 3);
      expect(hits[0]!.belief).toEqual(exact);
      expect(hitIds(await store.searchVector(scope, vec(1, 0, 0, 0), { limit: 2 }))).toEqual([
        exact.id,
        near.id,
      ]);
      const withPending = await store.searchVector(scope, vec(1, 0, 0, 0), {
        limit: 2,
        statuses: ['pending'],
      });
      expect(hitIds(withPending)).toEqual([pending.id]);
      expect(
        hitIds(await store.searchVector({ userId: unique('nobody-') }, vec(1, 0, 0, 0), { limit: 5 })),
      ).toEqual([]);
    },
  );

  ctx.test('searchVector refuses a query vector of the wrong length', async (c) => {
    const store = await ctx.open();
    if (store.capabilities.vectorSearch === 'none') return c.skip('the store has no vector search');
    const scope = { userId: unique('user-') };
    await insertAll(store, scope, [{ belief: belief(scope), embedding: vec(1, 0, 0, 0) }]);
    await rejects(store.searchVector(scope, vec(1, 0, 0), { limit: 5 }), DimensionMismatchError);
    await rejects(store.searchVector(scope, vec(1, 0, 0, 0, 0), { limit: 5 }), DimensionMismatchError);
    expect((await store.info()).dimensions).toBe(4);
  });
}
