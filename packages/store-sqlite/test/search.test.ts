import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { type Belief, ClosedError, InvalidInputError, type Scope } from '@mem01/engine';
import { vectorToBytes } from '@mem01/engine/store-kit';
import { nodeBinary } from '@mem01/test-kit';
import * as sqliteVec from 'sqlite-vec';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/index.js';
import { migrate } from '../src/migrations.js';
import { belief, mulberry32, quiet, t, tempDir } from './helpers.js';

const WORDS = ['apple', 'river', 'violin', 'garden', 'rocket', 'harbour', 'maple', 'copper'];

/** Beliefs with few distinct texts, so BM25 scores tie a lot. */
function corpus(scope: Scope, n: number, seed: number): Belief[] {
  const rand = mulberry32(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const a = pick();
    const b = pick();
    return belief(scope, {
      attribute: `item_${i}`,
      value: a,
      statement: rand() < 0.5 ? `The user likes ${a} and ${b}.` : `The user likes ${a}.`,
    });
  });
}

const ids = (hits: readonly { belief: Belief }[]) => hits.map((h) => h.belief.id);

describe('lexical search over a large index', () => {
  // One scope that is most of the index (the scope is filtered by the join) and one that is a small part of it
  // (the scope token is in the MATCH): a short list must be exactly the head of the exhaustive ranking, ties by id.
  // (Beliefs are stored in id order here; among candidates tied at the cut-off FTS5 keeps the most recently stored.)
  it('returns the head of the exhaustive ranking for a dominant and for a small scope, with heavy ties', async () => {
    const store = openSqliteStore({ path: join(tempDir(), 'l.db'), logger: quiet });
    const big = { userId: 'big' };
    const small = { userId: 'small' };
    const others = Array.from({ length: 6 }, (_, i) => ({ userId: `other-${i}` }));
    const records = [
      ...corpus(big, 1500, 1),
      ...corpus(small, 120, 2),
      ...others.flatMap((s, i) => corpus(s, 400, 10 + i)),
    ].map((b) => ({ belief: b }));
    await store.importBeliefs(records);
    for (const scope of [big, small]) {
      for (const query of ['apple', 'apple violin', 'river harbour copper', 'maple likes']) {
        const all = await store.searchLexical(scope, query, { limit: 1000 });
        expect(all.length).toBeGreaterThan(0);
        for (let i = 1; i < all.length; i++) {
          const [a, b] = [all[i - 1]!, all[i]!];
          expect(a.score > b.score || (a.score === b.score && a.belief.id > b.belief.id)).toBe(true);
        }
        for (const limit of [1, 5, 17, 50]) {
          const head = await store.searchLexical(scope, query, { limit });
          expect(ids(head), `${scope.userId} ${query} ${limit}`).toEqual(ids(all.slice(0, limit)));
        }
        expect(all.every((h) => h.belief.scope.userId === scope.userId)).toBe(true);
      }
    }
    await store.close();
  });

  it('a word in more than half of a large index is dropped, and a query of only such words finds nothing', async () => {
    const store = openSqliteStore({ path: join(tempDir(), 'd.db'), logger: quiet });
    const scope = { userId: 'u' };
    await store.importBeliefs(corpus(scope, 1200, 3).map((b) => ({ belief: b })));
    expect(await store.searchLexical(scope, 'user', { limit: 10 })).toEqual([]);
    const withCommon = await store.searchLexical(scope, 'user apple', { limit: 10 });
    const without = await store.searchLexical(scope, 'apple', { limit: 10 });
    expect(ids(withCommon)).toEqual(ids(without));
    await store.close();
  });
});

describe('search workers', () => {
  it('run the searches off the event loop and give the same answers as the in-thread path', async () => {
    const path = join(tempDir(), 'w.db');
    const pooled = openSqliteStore({ path, logger: quiet, searchWorkers: 2 });
    const scope = { userId: 'u' };
    const beliefs = corpus(scope, 300, 4);
    const vec = (i: number) => Float32Array.from({ length: 8 }, (_, k) => Math.sin(i * 7 + k));
    await pooled.importBeliefs(beliefs.map((b, i) => ({ belief: b, embedding: vec(i) })));
    const inline = openSqliteStore({ path, logger: quiet, searchWorkers: 0 });
    expect(pooled.searchWorkersRunning).toBe(0); // started on first use
    for (const q of ['apple', 'violin copper']) {
      expect(await pooled.searchLexical(scope, q, { limit: 20 })).toEqual(
        await inline.searchLexical(scope, q, { limit: 20 }),
      );
    }
    const [a, b] = await Promise.all([
      pooled.searchVector(scope, vec(5), { limit: 10 }),
      pooled.searchLexical(scope, 'maple', { limit: 10 }),
    ]);
    expect(a).toEqual(await inline.searchVector(scope, vec(5), { limit: 10 }));
    expect(a[0]?.belief.id).toBe(beliefs[5]!.id);
    expect(a[0]?.score).toBeCloseTo(1, 5);
    expect(b).toEqual(await inline.searchLexical(scope, 'maple', { limit: 10 }));
    expect(pooled.searchWorkersRunning).toBe(2);
    expect(inline.searchWorkersRunning).toBe(0);
    // A write is visible to the very next search (the workers read the committed file).
    const fresh = belief(scope, {
      attribute: 'new',
      value: 'zeppelin',
      statement: 'The user flew a zeppelin.',
    });
    await pooled.importBeliefs([{ belief: fresh }]);
    expect(ids(await pooled.searchLexical(scope, 'zeppelin', { limit: 5 }))).toEqual([fresh.id]);
    await inline.close();
    await pooled.close();
    expect(pooled.searchWorkersRunning).toBe(0);
  });

  it('a search in flight when the store closes fails with ClosedError', async () => {
    const store = openSqliteStore({ path: join(tempDir(), 'c.db'), logger: quiet });
    const scope = { userId: 'u' };
    await store.importBeliefs(corpus(scope, 50, 5).map((b) => ({ belief: b })));
    const search = expect(store.searchLexical(scope, 'apple', { limit: 5 })).rejects.toBeInstanceOf(
      ClosedError,
    );
    await store.close();
    await search;
    await expect(store.searchLexical(scope, 'apple', { limit: 5 })).rejects.toBeInstanceOf(ClosedError);
  });

  it('idle workers do not keep a process alive when the store is never closed', () => {
    const dir = tempDir();
    const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
      import { openSqliteStore } from ${JSON.stringify(entry)};
      const store = openSqliteStore({ path: ${JSON.stringify(join(dir, 'p.db'))}, logger: { info() {}, warn() {} } });
      const hits = await store.searchLexical({ userId: 'u' }, 'anything', { limit: 3 });
      console.log('searched', hits.length, store.searchWorkersRunning);`;
    const child = spawnSync(nodeBinary(), ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('searched 0 0');
    expect(child.status).toBe(0);
  });
});

describe('vector index layout', () => {
  it('a file indexed by an older layout (raw vectors, cosine distance) is re-indexed at open', async () => {
    const path = join(tempDir(), 'old-vec.db');
    const raw = new DatabaseSync(path, { allowExtension: true });
    raw.exec('PRAGMA journal_mode = WAL');
    raw.loadExtension(sqliteVec.getLoadablePath());
    migrate(raw, path, 2);
    raw.exec("INSERT INTO scopes (id, user_id, namespace) VALUES (1, 'u', '')");
    raw.exec("INSERT INTO meta (key, value) VALUES ('dimensions', '3')");
    raw.exec(
      'CREATE VIRTUAL TABLE vec_beliefs USING vec0(scope_id integer partition key, embedding float[3] distance_metric=cosine)',
    );
    const vectors = [
      [3, 0, 0],
      [0, 2, 0],
      [1, 1, 0],
    ];
    const made = vectors.map((v, i) => {
      const b = belief({ userId: 'u' }, { attribute: `a${i}`, statement: `Belief ${i}.`, value: `v${i}` });
      raw
        .prepare(
          `INSERT INTO beliefs (seq, id, scope_id, user_id, namespace, kind, subject, attribute, value, statement,
             confidence, status, version, stored_at, updated_at, evidence, source)
           VALUES (?, ?, 1, 'u', '', 'fact', 'user', ?, ?, ?, 0.9, 'active', 1, ?, ?, '[]', 'extracted')`,
        )
        .run(i + 1, b.id, b.attribute, b.value, b.statement, t(i), t(i));
      const bytes = vectorToBytes(Float32Array.from(v));
      raw
        .prepare('INSERT INTO belief_embeddings (belief_seq, scope_id, embedding) VALUES (?, 1, ?)')
        .run(i + 1, bytes);
      raw
        .prepare('INSERT INTO vec_beliefs (rowid, scope_id, embedding) VALUES (?, 1, ?)')
        .run(BigInt(i + 1), bytes);
      return b;
    });
    raw.close();
    const store = openSqliteStore({ path, logger: quiet, searchWorkers: 0 });
    expect(store.vectorMode).toBe('sqlite-vec');
    const hits = await store.searchVector({ userId: 'u' }, Float32Array.from([1, 0, 0]), { limit: 3 });
    expect(ids(hits)).toEqual([made[0]!.id, made[2]!.id, made[1]!.id]);
    expect(hits.map((h) => h.score)).toEqual([
      expect.closeTo(1, 5),
      expect.closeTo(Math.SQRT1_2, 5),
      expect.closeTo(0, 5),
    ]);
    // A zero query has no direction: every belief scores 0 (as with the exact search).
    const zero = await store.searchVector({ userId: 'u' }, new Float32Array(3), { limit: 3 });
    expect(zero.map((h) => h.score)).toEqual([0, 0, 0]);
    await store.close();
  });
});

describe('the sqlite-vec index holds large scopes only', () => {
  const randomVector = (rand: () => number, dims: number) =>
    Float32Array.from({ length: dims }, () => rand() - 0.5);
  const raw = (path: string) => new DatabaseSync(path, { readOnly: true });

  it('many small users do not cost a sqlite-vec chunk each; their search is exact', async () => {
    const path = join(tempDir(), 'small.db');
    const store = openSqliteStore({ path, logger: quiet, dimensions: 384 });
    expect(store.vectorMode).toBe('sqlite-vec');
    const rand = mulberry32(7);
    for (let u = 0; u < 60; u++) {
      const scope = { userId: `small-${u}` };
      await store.importBeliefs(
        [0, 1].map((i) => ({
          belief: belief(scope, { attribute: `a${i}`, statement: `Fact ${i} of ${u}.`, value: `v${i}` }),
          embedding: randomVector(rand, 384),
        })),
      );
    }
    const probe = randomVector(rand, 384);
    const hits = await store.searchVector({ userId: 'small-3' }, probe, { limit: 5 });
    expect(hits).toHaveLength(2);
    store.checkpoint();
    await store.close();
    const db = raw(path);
    expect((db.prepare('SELECT count(*) AS n FROM vec_scopes').get() as { n: number }).n).toBe(0);
    db.close();
    // One 384-dimension sqlite-vec chunk per user would be 1.5 MB each, 90 MB for these 60 users.
    expect(statSync(path).size).toBeLessThan(4_000_000);
  });

  it('a scope enters the index at the threshold, and indexed and exact search agree', async () => {
    const path = join(tempDir(), 'threshold.db');
    const store = openSqliteStore({ path, logger: quiet, dimensions: 16, vectorIndexMinBeliefs: 200 });
    const exact = openSqliteStore({ path, logger: quiet, vector: 'exact', searchWorkers: 0 });
    const scope = { userId: 'grows' };
    const rand = mulberry32(11);
    const indexed = () => {
      const db = raw(path);
      try {
        return {
          scopes: (db.prepare('SELECT count(*) AS n FROM vec_scopes').get() as { n: number }).n,
          rows: (db.prepare('SELECT count(*) AS n FROM vec_beliefs_rowids').get() as { n: number }).n,
        };
      } finally {
        db.close();
      }
    };
    const made: Belief[] = [];
    const add = async (n: number) => {
      const records = Array.from({ length: n }, () => {
        const b = belief(scope, {
          attribute: `k${made.length}`,
          statement: `Fact ${made.length}.`,
          value: 'x',
        });
        made.push(b);
        return { belief: b, embedding: randomVector(rand, 16) };
      });
      // One by one, as the engine writes them.
      for (const r of records) await store.importBeliefs([r]);
    };
    await add(199);
    expect(indexed()).toEqual({ scopes: 0, rows: 0 });
    await add(1);
    expect(indexed()).toEqual({ scopes: 1, rows: 200 });
    await add(50);
    expect(indexed()).toEqual({ scopes: 1, rows: 250 });
    for (let q = 0; q < 5; q++) {
      const probe = randomVector(rand, 16);
      const a = await store.searchVector(scope, probe, { limit: 10 });
      const b = await exact.searchVector(scope, probe, { limit: 10 });
      expect(ids(a)).toEqual(ids(b));
      a.forEach((h, i) => {
        expect(h.score).toBeCloseTo(b[i]!.score, 5);
      });
    }
    // Forgetting removes the row from the index too.
    await store.forget(scope, made[0]!.id, { at: t(50) });
    expect(indexed()).toEqual({ scopes: 1, rows: 249 });
    await exact.close();
    await store.close();
  });
});

describe('search options', () => {
  it('bad searchWorkers or vectorIndexMinBeliefs is refused with InvalidInputError before anything is opened', () => {
    const path = join(tempDir(), 'never.db');
    for (const searchWorkers of [-1, 1.5, 17, '2' as never]) {
      expect(() => openSqliteStore({ path, logger: quiet, searchWorkers }), String(searchWorkers)).toThrow(
        InvalidInputError,
      );
    }
    for (const vectorIndexMinBeliefs of [0, 2.5, Number.NaN, '8' as never]) {
      expect(() => openSqliteStore({ path, logger: quiet, vectorIndexMinBeliefs })).toThrow(
        /vectorIndexMinBeliefs/,
      );
    }
    expect(existsSync(path)).toBe(false);
  });
});
