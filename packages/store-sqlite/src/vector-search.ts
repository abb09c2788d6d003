/**
 * Vector search of the SQLite store, and the sqlite-vec index it uses. Embeddings live in `belief_embeddings`; a
 * scope with at least `vectorIndexMinBeliefs` of them is also in the vec0 table (`vec_beliefs`, unit vectors with
 * L2 distance, which ranks exactly like cosine), partitioned by scope and shard. Smaller scopes, and every scope
 * without sqlite-vec, are searched by exact cosine.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { DimensionMismatchError } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { AsyncMethod, Connection } from './connection.js';
import { type ReadBatch, type SearchTarget, scopeFilter } from './read-batch.js';

export const VEC_TABLE = 'vec_beliefs';
/** The largest KNN `k` sqlite-vec accepts. */
const MAX_VEC_K = 4096;

export const searchVector: AsyncMethod<'searchVector'> = async (
  c,
  { scope: s, vector: query, limit, statuses, excludeGrants },
) => {
  return c.search('searchVector', async (exec) => {
    const dimensions = c.readDimensions();
    if (dimensions === null) return [];
    if (query.length !== dimensions) throw new DimensionMismatchError(dimensions, query.length, 'vector');
    const scopeId = c.scopeId(s);
    if (scopeId === null) return [];
    const target = { scopeId, ...s, limit, statuses, excludeGrants };
    const unit = unitBytes(query);
    let rows: Row[] | null = null;
    // A zero query has no direction: only the exact search scores it (0 for every belief).
    // Scopes below `vectorIndexMinBeliefs` embeddings are not in the sqlite-vec index: the exact search is as fast.
    const indexed =
      c.vectorMode === 'sqlite-vec' &&
      c.get('SELECT 1 AS x FROM vec_scopes WHERE scope_id = ?', scopeId) !== undefined;
    if (indexed && unit !== null) rows = await searchVecRows(exec, target, unit);
    rows ??= await searchExactRows(
      exec,
      target,
      unit ?? kit.vectorToBytes(query),
      c.vectorMode === 'sqlite-vec',
    );
    return rows.map((row) => ({ belief: kit.beliefRow.read(row), score: Number(row.score) }));
  });
};

/** Checks (inside a write transaction) an embedding's length against the store's dimension, fixing it if unset. */
export function checkDimensions(c: Connection, length: number): void {
  if (c.readDimensions() === null) {
    c.run("INSERT INTO meta (key, value) VALUES ('dimensions', ?)", String(length));
    c.dimensions = length;
    if (c.vectorMode === 'sqlite-vec') createVecTable(c.db, length);
  }
  if (length !== c.dimensions) throw new DimensionMismatchError(c.dimensions!, length);
}

function vecTableExists(c: Connection): boolean {
  return c.get('SELECT 1 AS x FROM sqlite_master WHERE name = ?', VEC_TABLE) !== undefined;
}

/** Stores a belief's embedding, and indexes it (or its whole scope, once large enough) in sqlite-vec. */
export function writeEmbedding(
  c: Connection,
  beliefSeq: number,
  scopeId: number,
  embedding: Float32Array,
): void {
  checkDimensions(c, embedding.length);
  c.run(
    'INSERT OR REPLACE INTO belief_embeddings (belief_seq, scope_id, embedding) VALUES (?, ?, ?)',
    beliefSeq,
    scopeId,
    kit.vectorToBytes(embedding),
  );
  if (c.vectorMode === 'sqlite-vec') {
    if (c.get('SELECT 1 AS x FROM vec_scopes WHERE scope_id = ?', scopeId)) {
      putVec((sql, ...params) => c.run(sql, ...params), beliefSeq, scopeId, embedding);
    } else {
      const n = Number(
        c.get('SELECT count(*) AS n FROM belief_embeddings WHERE scope_id = ?', scopeId)?.n ?? 0,
      );
      if (n >= c.vectorIndexMin) indexScope(c.db, (sql, ...params) => c.run(sql, ...params), scopeId);
    }
  } else if (vecTableExists(c)) {
    markVecStale(c.db);
  }
}

export function deleteEmbedding(c: Connection, beliefSeq: number): void {
  const n = c.run('DELETE FROM belief_embeddings WHERE belief_seq = ?', beliefSeq);
  if (c.vectorMode === 'sqlite-vec') {
    // A file that has never held an embedding has no vec0 table (it is created with the first one's dimension).
    if (vecTableExists(c)) c.run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(beliefSeq));
  } else if (n > 0 && vecTableExists(c)) {
    markVecStale(c.db);
  }
}

/** Removes a user's embeddings from the sqlite-vec index (erase); without sqlite-vec, marks the index stale. */
export function dropUserVectors(c: Connection, userId: string): void {
  if (c.vectorMode === 'sqlite-vec' && vecTableExists(c)) {
    for (const r of c.all(
      'SELECT e.belief_seq AS seq FROM belief_embeddings e JOIN beliefs b ON b.seq = e.belief_seq WHERE b.user_id = ?',
      userId,
    )) {
      c.run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(Number(r.seq)));
    }
  } else if (vecTableExists(c)) {
    markVecStale(c.db);
  }
}

/** Takes one scope's embeddings out of the sqlite-vec index (inside the caller's erase transaction). */
export function dropScopeVectors(c: Connection, scopeId: number): void {
  if (c.vectorMode === 'sqlite-vec' && vecTableExists(c)) {
    for (const r of c.all('SELECT belief_seq AS seq FROM belief_embeddings WHERE scope_id = ?', scopeId)) {
      c.run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(Number(r.seq)));
    }
  } else if (vecTableExists(c)) {
    markVecStale(c.db);
  }
}

/** The unit-length vector as Float32 bytes, or null for a zero vector. */
function unitBytes(v: Float32Array): Uint8Array | null {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  return n === 0 ? null : kit.vectorToBytes(kit.normalizeVector(v));
}

/** How the vec0 table is laid out; a table of another layout is rebuilt from `belief_embeddings` at open. */
const VEC_LAYOUT = 'unit-l2-large-scopes-2-shards';

function createVecTable(db: DatabaseSync, dimensions: number): void {
  // Unit vectors with L2 distance rank exactly like cosine (d² = 2 - 2·cos) and cost sqlite-vec less per row.
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${VEC_TABLE} USING vec0(
       scope_id integer partition key, shard integer partition key, embedding float[${dimensions}])`,
  );
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('vec_layout', ?)").run(VEC_LAYOUT);
}

function markVecStale(db: DatabaseSync): void {
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('vec_stale', '1')").run();
}

type Run = (sql: string, ...params: (string | number | bigint | null | Uint8Array)[]) => unknown;

/** Runs statements prepared once per distinct SQL text (for the loops at open, outside the store's cache). */
function cachedRun(db: DatabaseSync): Run {
  const statements = new Map<string, StatementSync>();
  return (sql, ...params) => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s.run(...params);
  };
}

/** Replaces a belief's row in the sqlite-vec index. A zero vector stays out: it is similar to nothing (the exact
 * search scores it 0). */
function putVec(run: Run, beliefSeq: number, scopeId: number, embedding: Float32Array): void {
  run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(beliefSeq));
  const unit = unitBytes(embedding);
  if (unit === null) return;
  run(
    `INSERT INTO ${VEC_TABLE} (rowid, scope_id, shard, embedding) VALUES (?, ?, ?, ?)`,
    BigInt(beliefSeq),
    BigInt(scopeId),
    BigInt(vecShard(beliefSeq)),
    unit,
  );
}

/** Puts every embedding of a scope into the sqlite-vec index and marks the scope as indexed (inside a write). */
function indexScope(db: DatabaseSync, run: Run, scopeId: number): void {
  for (const r of db
    .prepare('SELECT belief_seq, embedding FROM belief_embeddings WHERE scope_id = ?')
    .iterate(scopeId) as Iterable<Row>) {
    putVec(run, Number(r.belief_seq), scopeId, kit.bytesToVector(r.embedding as Uint8Array));
  }
  run('INSERT OR IGNORE INTO vec_scopes (scope_id) VALUES (?)', scopeId);
}

/** Brings the vec0 index in line with the embeddings table (after writes by a connection without sqlite-vec, or
 * from an older layout): the scopes with at least `minBeliefs` embeddings are indexed. */
export function syncVecTable(db: DatabaseSync, dimensions: number, minBeliefs: number): void {
  const exists = db.prepare('SELECT 1 AS x FROM sqlite_master WHERE name = ?').get(VEC_TABLE) !== undefined;
  const stale = db.prepare("SELECT value FROM meta WHERE key = 'vec_stale'").get() as Row | undefined;
  const layout = db.prepare("SELECT value FROM meta WHERE key = 'vec_layout'").get() as Row | undefined;
  if (exists && !stale && layout?.value === VEC_LAYOUT) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    // Dropping (not emptying) gives the pages of every chunk back, so a smaller index takes less room.
    db.exec(`DROP TABLE IF EXISTS ${VEC_TABLE}`);
    db.exec('DELETE FROM vec_scopes');
    createVecTable(db, dimensions);
    const run = cachedRun(db);
    for (const r of db
      .prepare('SELECT scope_id FROM belief_embeddings GROUP BY scope_id HAVING count(*) >= ?')
      .all(minBeliefs) as Row[]) {
      indexScope(db, run, Number(r.scope_id));
    }
    db.exec("DELETE FROM meta WHERE key = 'vec_stale'");
    db.exec('COMMIT');
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * The sqlite-vec index splits each scope into this many shards (by `seq`), each its own partition, so the KNN of
 * one search runs as that many scans that the search workers run in parallel.
 */
const VEC_SHARDS = 2;

/** The shard of a belief in the sqlite-vec index. */
function vecShard(beliefSeq: number): number {
  return beliefSeq % VEC_SHARDS;
}

/**
 * KNN through sqlite-vec within the scope's partitions (one scan per shard, run concurrently), over the
 * unit-normalised embeddings with L2 distance (`score` = cosine = 1 - d²/2), best first, ties by id descending.
 * Each shard over-fetches to make room for the status filter until it holds `limit` rows that pass or has no more;
 * returns null when even the largest allowed `k` cannot get there (then the exact search answers).
 */
async function searchVecRows(
  exec: ReadBatch,
  target: SearchTarget,
  unitQuery: Uint8Array,
): Promise<Row[] | null> {
  const filter = scopeFilter(target, 'b');
  let k = Math.min(MAX_VEC_K, target.limit + Math.max(8, Math.ceil(target.limit / 4)));
  for (;;) {
    const shards = await Promise.all(
      Array.from({ length: VEC_SHARDS }, (_, shard) =>
        exec([
          {
            sql: `WITH v AS MATERIALIZED (
                    SELECT rowid, distance FROM ${VEC_TABLE}
                     WHERE embedding MATCH ? AND k = ? AND scope_id = ? AND shard = ?
                  )
                  SELECT 1.0 - v.distance * v.distance / 2.0 AS score, b.* FROM v
                    LEFT JOIN beliefs b ON b.seq = v.rowid AND ${filter.sql}
                  ORDER BY v.distance, b.id DESC`,
            params: [unitQuery, k, BigInt(target.scopeId), BigInt(shard), ...filter.params],
          },
        ]).then(([rows = []]) => ({ rows, hits: rows.filter((r) => r.seq !== null && r.seq !== undefined) })),
      ),
    );
    if (shards.every((s) => s.hits.length >= target.limit || s.rows.length < k)) {
      return shards
        .flatMap((s) => s.hits)
        .sort((a, b) => Number(b.score) - Number(a.score) || (String(a.id) < String(b.id) ? 1 : -1))
        .slice(0, target.limit);
    }
    if (k >= MAX_VEC_K) return null;
    k = Math.min(MAX_VEC_K, k * 4);
  }
}

/**
 * Exact cosine over every embedding of the scope, best first, ties by id descending. With sqlite-vec loaded
 * (`inSql`), sqlite-vec's `vec_distance_cosine` scores the blobs inside SQLite; without it they are scored here
 * ({@link runSteps} `topCosine`). A zero vector scores 0 either way.
 */
async function searchExactRows(
  exec: ReadBatch,
  target: SearchTarget,
  unitQuery: Uint8Array,
  inSql: boolean,
): Promise<Row[]> {
  const filter = scopeFilter(target, 'b');
  const from = `FROM belief_embeddings e JOIN beliefs b ON b.seq = e.belief_seq WHERE e.scope_id = ? AND ${filter.sql}`;
  const [best = []] = await exec([
    inSql
      ? {
          sql: `SELECT e.belief_seq AS seq, b.id AS id,
                  1.0 - coalesce(vec_distance_cosine(e.embedding, ?), 1.0) AS score ${from}
                ORDER BY score DESC, b.id DESC LIMIT ?`,
          params: [unitQuery, target.scopeId, ...filter.params, target.limit],
        }
      : {
          sql: `SELECT e.belief_seq AS seq, b.id AS id, e.embedding AS embedding ${from}`,
          params: [target.scopeId, ...filter.params],
          mode: 'topCosine',
          query: unitQuery,
          limit: target.limit,
        },
  ]);
  if (best.length === 0) return [];
  const score = new Map(best.map((r) => [Number(r.seq), Number(r.score)]));
  const [rows = []] = await exec([
    {
      sql: `SELECT * FROM beliefs b WHERE b.seq IN (SELECT value FROM json_each(?)) AND ${filter.sql}`,
      params: [JSON.stringify([...score.keys()]), ...filter.params],
    },
  ]);
  return rows
    .map((row): Row & { score: number } => ({ ...row, score: score.get(Number(row.seq)) ?? 0 }))
    .sort((a, b) => b.score - a.score || (String(a.id) < String(b.id) ? 1 : -1));
}
