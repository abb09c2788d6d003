import { cosineSimilarity } from '@mem01/engine/store-kit';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { numberedFact, StoreFactory, TARGETS, usesHnsw } from './helpers.js';

const DIMS = 8;
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff - 0.5;
};
const vec = () => Float32Array.from({ length: DIMS }, rand);
/** `n` beliefs of one user, each with a random embedding. */
const make = (userId: string, n: number) => {
  const at = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => ({
    belief: numberedFact({ userId }, i, at, 'import'),
    embedding: vec(),
  }));
};

describe.each(TARGETS)('vector search with a large neighbour on %s', (target) => {
  const factory = new StoreFactory(target);
  afterAll(() => factory.cleanup());

  it('is always scope-filtered, best first, with exact scores, and finds nearly all true neighbours', async () => {
    const store = await factory.open({ dimensions: DIMS });
    const big = make('big', 1200);
    const small = make('small', 25);
    for (let i = 0; i < big.length; i += 400) await store.importBeliefs(big.slice(i, i + 400));
    await store.importBeliefs(small);
    for (const [userId, data] of [
      ['small', small],
      ['big', big],
    ] as const) {
      let found = 0;
      for (let q = 0; q < 8; q++) {
        const query = vec();
        const hits = await store.searchVector({ userId }, query, { limit: 10 });
        expect(hits).toHaveLength(10);
        const byId = new Map(data.map((r) => [r.belief.id, r.embedding]));
        for (const [i, h] of hits.entries()) {
          expect(h.belief.scope.userId).toBe(userId);
          expect(h.score).toBeCloseTo(cosineSimilarity(query, byId.get(h.belief.id)!), 4);
          if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1]!.score + 1e-9);
        }
        const truth = data
          .map((r) => ({ id: r.belief.id, s: cosineSimilarity(query, r.embedding) }))
          .sort((a, b) => b.s - a.s)
          .slice(0, 10);
        const got = new Set(hits.map((h) => h.belief.id));
        found += truth.filter((t) => got.has(t.id)).length;
      }
      // Exact mode must be exact; HNSW is approximate but should find nearly all of the true top 10.
      expect(found / 80).toBeGreaterThanOrEqual(usesHnsw(target) ? 0.9 : 1);
    }
  }, 60_000);
});

describe('vector search plan on pglite (HNSW)', () => {
  const factory = new StoreFactory('pglite');
  afterAll(() => factory.cleanup());

  it('scans a small scope exactly and sends a big one to the HNSW index, from the planner statistics', async () => {
    // A lower small-scope threshold than the default (5000) keeps the HNSW build small: PGlite is single-threaded
    // WebAssembly, and 12,000 vectors took over a minute on a loaded 2-core machine.
    const store = await factory.open({ dimensions: DIMS, smallScopeRows: 600 });
    const schema = store.schema;
    const big = make('big', 1500);
    await store.importBeliefs(big);
    for (let u = 0; u < 4; u++) await store.importBeliefs(make(`small-${u}`, 300));
    await store.analyze();
    // PGlite has one backend: forcing its next stats flush makes the counters current for the next statement.
    const indexScans = async () => {
      await sql`select pg_stat_force_next_flush()`.execute(store.db);
      const r = await sql<{ n: string }>`select idx_scan::text as n from pg_stat_user_indexes
        where schemaname = ${schema} and indexrelname = 'beliefs_embedding_hnsw'`.execute(store.db);
      return Number(r.rows[0]?.n);
    };
    const before = await indexScans();
    expect(Number.isFinite(before)).toBe(true);
    const small = await store.searchVector({ userId: 'small-3' }, vec(), { limit: 10 });
    expect(small).toHaveLength(10);
    expect(small.every((h) => h.belief.scope.userId === 'small-3')).toBe(true);
    expect(await indexScans()).toBe(before);
    const bigHits = await store.searchVector({ userId: 'big' }, vec(), { limit: 10 });
    expect(bigHits).toHaveLength(10);
    expect(await indexScans()).toBeGreaterThan(before);
  }, 180_000);
});
