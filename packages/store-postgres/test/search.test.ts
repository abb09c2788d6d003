import { type Belief, createBelief, type Scope } from '@mem01/engine';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreFactory, TARGETS, usesHnsw } from './helpers.js';

const DIMS = 4;
const AT = '2025-01-01T00:00:00.000Z';

function belief(scope: Scope, attribute: string, statement: string, value = 'yes'): Belief {
  return createBelief({
    scope,
    kind: 'fact',
    subject: 'user',
    attribute,
    value,
    statement,
    confidence: 0.9,
    source: 'manual',
    at: AT,
  });
}

/** Lucene's BM25 idf of a word held by n of N beliefs. */
const idf = (n: number, N: number) => Math.log(1 + (N - n + 0.5) / (n + 0.5));

describe.each(TARGETS)('search on %s', (target) => {
  const factory = new StoreFactory(target);
  afterEach(async () => {
    await factory.cleanup();
  });

  it('scores the query words a belief holds, each by its BM25 idf among the scope’s beliefs, plus ts_rank_cd', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const s = { userId: 'ranker' };
    const all = belief(s, 'a1', 'The user buys dark roast coffee.');
    const two = belief(s, 'a2', 'The user grinds dark coffee.');
    const repeated = belief(s, 'a3', 'The user drinks coffee, coffee, coffee and coffee.');
    const once = belief(s, 'a4', 'The user sells coffee.');
    const none = belief(s, 'a5', 'The user drinks tea.');
    await store.importBeliefs([all, two, repeated, once, none].map((b) => ({ belief: b })));

    const hits = await store.searchLexical(s, 'dark roast coffee', { limit: 10 });
    // A word repeated four times does not outrank a belief holding two of the query's words, but it does outrank
    // the same word once (ts_rank_cd, below 1, breaks the tie between one-word matches).
    expect(hits.map((h) => h.belief.id)).toEqual([all.id, two.id, repeated.id, once.id]);
    // Of the scope's 5 beliefs, 4 hold "coffee", 2 "dark" and 1 "roast": each word adds its idf, and ts_rank_cd
    // (in [0, 1)) stands in for frequency and proximity.
    const [s3, s2, s1a, s1b] = hits.map((h) => h.score);
    const rank = (score: number | undefined, words: number) => {
      expect(score! - words).toBeGreaterThan(0);
      expect(score! - words).toBeLessThan(1);
    };
    rank(s3, idf(4, 5) + idf(2, 5) + idf(1, 5));
    rank(s2, idf(4, 5) + idf(2, 5));
    rank(s1a, idf(4, 5));
    rank(s1b, idf(4, 5));
    expect(s1a).toBeGreaterThan(s1b!);

    // Enough beliefs with two or more of the words: the one-word matches are not needed.
    expect((await store.searchLexical(s, 'dark roast coffee', { limit: 2 })).map((h) => h.belief.id)).toEqual(
      [all.id, two.id],
    );
    // Two words that stem to one lexeme count once.
    const stems = await store.searchLexical(s, 'drinks drinking', { limit: 10 });
    expect(stems.map((h) => h.belief.id)).toEqual([none.id, repeated.id]);
    expect(stems[0]!.score - idf(2, 5)).toBeLessThan(1);
    expect(stems[0]!.score).toBe(stems[1]!.score);
    // Ties (same text apart from the attribute) are ordered by id descending.
    const twins = [
      belief(s, 'b1', 'The user likes marmalade.'),
      belief(s, 'b2', 'The user likes marmalade.'),
    ];
    await store.importBeliefs(twins.map((b) => ({ belief: b })));
    const tied = await store.searchLexical(s, 'marmalade', { limit: 10 });
    expect(tied.map((h) => h.belief.id)).toEqual(
      twins
        .map((b) => b.id)
        .sort()
        .reverse(),
    );
  });

  it('ranks every match by the words’ idf and ts_rank_cd for queries of more than 16 words', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const s = { userId: 'long' };
    const two = belief(s, 'l1', 'The user keeps an otter and a walrus.');
    const one = belief(s, 'l2', 'The user saw a heron, a heron and a heron.');
    await store.importBeliefs([two, one].map((b) => ({ belief: b })));
    const words =
      'otter walrus heron apple banana cherry damson elder fig grape hazel iris juniper kale lime mango nutmeg';
    const hits = await store.searchLexical(s, words, { limit: 10 });
    expect(hits.map((h) => h.belief.id)).toEqual([two.id, one.id]);
    // Each of the three words is in 1 of the scope's 2 beliefs.
    expect(hits[0]!.score - 2 * idf(1, 2)).toBeGreaterThan(0);
    expect(hits[0]!.score - 2 * idf(1, 2)).toBeLessThan(1);
    expect(hits[1]!.score - idf(1, 2)).toBeGreaterThan(0);
    expect(hits[1]!.score - idf(1, 2)).toBeLessThan(1);
  });

  it('weighs a word by how rare it is in the user’s own beliefs, not across every user of the table', async () => {
    const store = await factory.open({ dimensions: DIMS });
    // "kayak" is in most of one user's beliefs and in no other user's; "paddle" is in one of hers and in many of the
    // other users'. The paddle belief is the oldest, so a tie would put it last.
    const a = { userId: 'idf-a' };
    const paddle = belief(a, 'p', 'The user lost a paddle.');
    const kayaks = ['owns', 'rents', 'paints', 'stores'].map((verb, i) =>
      belief(a, `k${i}`, `The user ${verb} a kayak.`),
    );
    const others = Array.from({ length: 40 }, (_, i) => ({
      belief: belief({ userId: `idf-other-${i}` }, 'x', `The user has a paddle number ${i}.`),
    }));
    await store.importBeliefs([paddle, ...kayaks].map((b) => ({ belief: b })));
    await store.importBeliefs(others);
    const hits = await store.searchLexical(a, 'kayak paddle', { limit: 10 });
    // Within her 5 beliefs "paddle" (1 of 5) outweighs "kayak" (4 of 5), whatever the other users hold.
    expect(hits.map((h) => h.belief.id)).toEqual([paddle.id, ...kayaks.map((k) => k.id).reverse()]);
    expect(hits[0]!.score - idf(1, 5)).toBeGreaterThan(0);
    expect(hits[0]!.score - idf(1, 5)).toBeLessThan(1);
    expect(hits[1]!.score - idf(4, 5)).toBeLessThan(1);
  });

  it('finds one-word matches older than the newest-first window through the index', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const s = { userId: 'window' };
    const old = [belief(s, 'o1', 'The user once saw an ibex.'), belief(s, 'o2', 'The user fed an ibex.')];
    const newer = Array.from({ length: 700 }, (_, i) => ({ belief: belief(s, `n${i}`, `Entry ${i}.`) }));
    await store.importBeliefs(old.map((b) => ({ belief: b })));
    await store.importBeliefs(newer);
    // The 500 newest beliefs hold no "ibex": the search still returns both, newest first.
    const hits = await store.searchLexical(s, 'ibex', { limit: 5 });
    expect(hits.map((h) => h.belief.id)).toEqual([old[1]!.id, old[0]!.id]);
    // With enough matches inside the window, the newest ones are returned.
    const recent = await store.searchLexical(s, 'entry', { limit: 3 });
    expect(recent.map((h) => h.belief.attribute)).toEqual(['n699', 'n698', 'n697']);
  });

  it('drops query words found in more than half of all beliefs once the planner statistics know them', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const s = { userId: 'many' };
    const filler = Array.from({ length: 1100 }, (_, i) => ({
      belief: belief(s, `f${i}`, `The user owns thing number ${i}.`, `v${i}`),
    }));
    const kayak = belief(s, 'boat', 'The user owns a kayak.', 'kayak');
    for (let i = 0; i < filler.length; i += 500) await store.importBeliefs(filler.slice(i, i + 500));
    await store.importBeliefs([{ belief: kayak }]);

    // Without statistics every word counts: "user" and "owns" match every belief.
    const before = await store.searchLexical(s, 'user owns kayak', { limit: 5 });
    expect(before).toHaveLength(5);
    expect(before[0]!.belief.id).toBe(kayak.id);

    await sql`analyze ${sql.id(store.schema, 'beliefs')}`.execute(store.db);
    // A store opened after ANALYZE reads the statistics on its first search (they are cached for a minute).
    const fresh = await factory.open({ dimensions: DIMS, schema: store.schema });
    const after = await fresh.searchLexical(s, 'user owns kayak', { limit: 5 });
    expect(after.map((h) => h.belief.id)).toEqual([kayak.id]);
    expect(await fresh.searchLexical(s, 'user owns', { limit: 5 })).toEqual([]);
    expect((await fresh.searchLexical(s, 'number 7', { limit: 5 })).map((h) => h.belief.attribute)).toEqual([
      'f7',
    ]);
  }, 60_000);

  it('weights query words by rarity once analyze() has gathered statistics (a rare word outranks a common one)', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const s = { userId: 'idf' };
    const rare = belief(s, 'trip', 'The user visited Zanzibar.', 'zanzibar');
    await store.importBeliefs([{ belief: rare }]);
    const filler = Array.from({ length: 1100 }, (_, i) => ({
      belief: belief(s, `f${i}`, `Entry ${i} is ${i % 3 === 0 ? 'coffee' : 'tea'}.`, `v${i}`),
    }));
    for (let i = 0; i < filler.length; i += 550) await store.importBeliefs(filler.slice(i, i + 550));

    // Without statistics both words weigh 1: one-word matches among the newest beliefs fill the page, and the
    // old Zanzibar belief is not among them.
    const before = await store.searchLexical(s, 'coffee zanzibar', { limit: 5 });
    expect(before).toHaveLength(5);
    expect(before.map((h) => h.belief.id)).not.toContain(rare.id);
    expect(before.every((h) => h.score < 2)).toBe(true);

    await store.analyze();
    const after = await store.searchLexical(s, 'coffee zanzibar', { limit: 5 });
    expect(after).toHaveLength(5);
    expect(after[0]!.belief.id).toBe(rare.id);
    // Zanzibar is in one belief of 1101, coffee in a third of them: ln(1 + (1 - f) / f) ≈ 7 against ≈ 1.1.
    expect(after[0]!.score).toBeGreaterThan(5);
    for (const h of after.slice(1)) {
      expect(h.belief.statement).toContain('coffee');
      expect(h.score).toBeGreaterThan(0.9);
      expect(h.score).toBeLessThan(2);
    }
    await store.close();
    await expect(store.analyze()).rejects.toMatchObject({ name: 'ClosedError' });
  }, 60_000);

  it('ranks a small user of a large table the same way (scope index instead of GIN once statistics exist)', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const big = { userId: 'big' };
    const filler = Array.from({ length: 1500 }, (_, i) => ({
      belief: belief(big, `f${i}`, i % 10 === 0 ? `Dark coffee ${i}.` : `Filler ${i}.`, `v${i}`),
    }));
    for (let i = 0; i < filler.length; i += 500) await store.importBeliefs(filler.slice(i, i + 500));
    const s = { userId: 'small' };
    const all = belief(s, 'a1', 'The user buys dark roast coffee.');
    const two = belief(s, 'a2', 'The user grinds dark coffee.');
    const once = belief(s, 'a4', 'The user sells coffee.');
    await store.importBeliefs([all, two, once].map((b) => ({ belief: b })));
    await sql`analyze ${sql.id(store.schema, 'beliefs')}`.execute(store.db);
    const fresh = await factory.open({ dimensions: DIMS, schema: store.schema });
    for (const limit of [1, 2, 10]) {
      const hits = await fresh.searchLexical(s, 'dark roast coffee', { limit });
      expect(hits.map((h) => h.belief.id)).toEqual([all.id, two.id, once.id].slice(0, limit));
      expect(hits.every((h) => h.belief.scope.userId === 'small')).toBe(true);
    }
    expect((await fresh.searchLexical(big, 'coffee', { limit: 2 })).map((h) => h.belief.attribute)).toEqual([
      'f1490',
      'f1480',
    ]);
  }, 60_000);

  it.runIf(usesHnsw(target))('HNSW scan settings last for the search statement only', async () => {
    const store = await factory.open({ dimensions: DIMS, maxConnections: 1 });
    const s = { userId: 'vec' };
    const rows = Array.from({ length: 30 }, (_, i) => ({
      belief: belief(s, `v${i}`, `Vector ${i}.`),
      embedding: new Float32Array([1, i / 30, (i % 7) / 7, 0.5]),
    }));
    await store.importBeliefs(rows);
    const hits = await store.searchVector(s, new Float32Array([1, 0, 0, 0.5]), { limit: 25 });
    expect(hits).toHaveLength(25);
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    // The pool has one connection, so this runs where the search ran: nothing was left set there.
    const r = await sql<{ ef: string; it: string }>`
        select current_setting('hnsw.ef_search') as ef, current_setting('hnsw.iterative_scan') as it`.execute(
      store.db,
    );
    expect(r.rows[0]).toEqual({ ef: '40', it: 'off' });
  });
});
