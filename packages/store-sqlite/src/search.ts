/**
 * The store's read-only searches (FTS5 lexical, sqlite-vec KNN, exact cosine), written against a batch executor:
 * the same SQL runs on the store's own connection or on a search worker's connection (see `search-pool.ts`).
 * Nothing here writes to the database file; the only writes are to per-connection temp tables.
 */
import type { BeliefStatus } from '@mem01/engine';
import { buildMatch, quoteTerm, readVarint } from './fts-query.js';
import type { Row } from './rows.js';

export type SqlValue = string | number | bigint | null | Uint8Array;

/**
 * One statement of a batch. `all` (default) returns its rows; `run` returns none; `topCosine` reads rows with
 * `seq`, `id` and an `embedding` blob and returns the `limit` best as `{ seq, id, score }` (cosine to the unit
 * `query`, ties by id descending) without sending every embedding back.
 */
export interface ReadStep {
  readonly sql: string;
  readonly params: readonly SqlValue[];
  readonly mode?: 'all' | 'run' | 'topCosine';
  readonly query?: Uint8Array;
  readonly limit?: number;
}

/** Runs the steps in order on one connection, inside one read transaction, and returns the rows of each step. */
export type ReadBatch = (steps: readonly ReadStep[]) => Promise<Row[][]>;

/** The statement interface `runSteps` needs (node:sqlite's `StatementSync`). */
interface Statement {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): unknown;
  iterate(...params: SqlValue[]): Iterable<unknown>;
}

/**
 * Executes a batch on one connection. Self-contained (its source is also sent to the search workers): it may use
 * only its arguments.
 */
export function runSteps(
  db: { exec(sql: string): void; readonly isTransaction: boolean },
  prepare: (sql: string) => Statement,
  cosine: (query: Uint8Array, stored: Uint8Array) => number,
  steps: readonly ReadStep[],
): Record<string, unknown>[][] {
  const outer = db.isTransaction;
  if (!outer) db.exec('BEGIN');
  try {
    const out = steps.map((step) => {
      const stmt = prepare(step.sql);
      const params = step.params as SqlValue[];
      if (step.mode === 'run') {
        stmt.run(...params);
        return [];
      }
      if (step.mode === 'topCosine') {
        const limit = step.limit ?? 1;
        const query = step.query as Uint8Array;
        const best: { seq: unknown; id: string; score: number }[] = [];
        const worse = (a: { id: string; score: number }, b: { id: string; score: number }) =>
          a.score < b.score || (a.score === b.score && a.id < b.id);
        for (const raw of stmt.iterate(...params)) {
          const row = raw as { seq: unknown; id: string; embedding: Uint8Array };
          const hit = { seq: row.seq, id: row.id, score: cosine(query, row.embedding) };
          if (best.length >= limit && !worse(best[best.length - 1] as typeof hit, hit)) continue;
          let i = best.length;
          while (i > 0 && worse(best[i - 1] as typeof hit, hit)) i--;
          best.splice(i, 0, hit);
          if (best.length > limit) best.pop();
        }
        return best;
      }
      return stmt.all(...params) as Record<string, unknown>[];
    });
    if (!outer) db.exec('COMMIT');
    return out;
  } catch (err) {
    if (!outer && db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** What every search needs: the scope (its id and, for the join that enforces it, its keys), a limit, statuses. */
export interface SearchTarget {
  readonly scopeId: number;
  readonly userId: string;
  readonly namespace: string;
  readonly limit: number;
  readonly statuses: readonly BeliefStatus[];
}

export const VEC_TABLE = 'vec_beliefs';
/** The largest KNN `k` sqlite-vec accepts. */
export const MAX_VEC_K = 4096;
/** Above this many FTS candidates the lexical search stops over-fetching and ranks every match. */
const MAX_FTS_K = 16_384;
/** Below this many indexed beliefs, term statistics are too thin to drop common words. */
const MIN_STATS_DOCS = 1000;
const TEXT_COLUMNS = '{statement value subject attribute}';
/** Column weights: statement and value count fully, subject and attribute half, the scope token not at all. */
const BM25 = 'bm25(belief_fts, 1.0, 1.0, 0.5, 0.5, 0.0)';

/** Per-connection setup: term statistics over the FTS index and a scratch FTS table that stems query words. Temp
 * objects live in the connection, never in the file. */
export const SEARCH_SETUP_SQL = `
CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem01_belief_vocab USING fts5vocab(main, belief_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem01_query_terms USING fts5(x, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem01_query_terms_vocab USING fts5vocab(temp, mem01_query_terms, 'instance');
`;

/**
 * Cosine similarity of a unit-length query and a stored embedding, both Float32 little-endian blobs; 0 for a zero
 * vector. Self-contained (its source is also sent to the search workers): it must not reference anything outside
 * its body.
 */
export function unitCosine(query: Uint8Array, stored: Uint8Array): number {
  const view = (b: Uint8Array): Float32Array =>
    b.byteOffset % 4 === 0
      ? new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2)
      : new Float32Array(b.slice().buffer, 0, b.byteLength >> 2);
  const q = view(query);
  const v = view(stored);
  let dot = 0;
  let norm = 0;
  const n = Math.min(q.length, v.length);
  for (let i = 0; i < n; i++) {
    const x = v[i] as number;
    dot += (q[i] as number) * x;
    norm += x * x;
  }
  return norm === 0 ? 0 : dot / Math.sqrt(norm);
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/** The scope filter of a join, with its parameters. */
function scopeFilter(t: SearchTarget, alias: string): { sql: string; params: SqlValue[] } {
  return {
    sql: `${alias}.user_id = ? AND ${alias}.namespace = ? AND ${alias}.status IN (${placeholders(t.statuses.length)})`,
    params: [t.userId, t.namespace, ...t.statuses],
  };
}

/**
 * Document frequencies (of query words and of scope tokens) and the index size they were read at. fts5vocab counts
 * a term's documents by walking its whole posting list, which costs milliseconds for a word in 100k beliefs, so each
 * count is kept for a minute, or until the index has grown or shrunk by more than 2%. The counts only decide which
 * words are too common to search for and how a scope is filtered, so a count that is a little stale is harmless.
 */
export class TermStatsCache {
  readonly #entries = new Map<string, { readonly df: number; readonly at: number }>();
  /** The index size the cached counts were read at. */
  #since = 0;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly maxAgeMs = 60_000,
  ) {}

  /** The cached count, or undefined when it is missing or too old. */
  get(key: string, now: number): number | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (now - e.at > this.maxAgeMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.df;
  }

  set(key: string, df: number, now: number): void {
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { df, at: now });
  }

  /** Records the index size of this search; forgets every count when it moved by more than 2%. */
  observeTotal(total: number): void {
    if (Math.abs(total - this.#since) > this.#since * 0.02) {
      this.#entries.clear();
      this.#since = total;
    }
  }
}

/**
 * Lexical search: BM25 over FTS5, best first, ties by id descending, at most `limit` rows (`score` = -bm25).
 *
 * Words found in more than half of all indexed beliefs are dropped (BM25 gives them an IDF of about zero, so the
 * ranking is unchanged, but matching them would make FTS5 score nearly every row). When the scope is a small part of
 * the index, its token is AND-ed into the MATCH so FTS5 ranks only the scope's rows; otherwise the scope is enforced
 * by the join alone. Either way FTS5 returns only its best `k` candidates (among equal scores, the most recently
 * stored), and `k` grows until `limit` rows pass the scope and status filter or every match has been seen.
 */
export async function searchLexicalRows(
  exec: ReadBatch,
  target: SearchTarget,
  terms: readonly string[],
  cache: TermStatsCache,
  now: number = Date.now(),
): Promise<Row[]> {
  if (terms.length === 0) return [];
  const scopeKey = `\u0000scope:${target.scopeId}`;
  const missing = terms.filter((t) => cache.get(t, now) === undefined);
  const scopeCached = cache.get(scopeKey, now);
  const steps: ReadStep[] = [{ sql: 'SELECT block FROM belief_fts_data WHERE id = 1', params: [] }];
  if (scopeCached === undefined) {
    // Rows holding the scope token (in any column: text that happens to hold it only makes the count larger,
    // which only steers the plan below, never the result).
    steps.push({
      sql: 'SELECT doc FROM temp.mem01_belief_vocab WHERE term = ?',
      params: [`s${target.scopeId}`],
    });
  }
  if (missing.length > 0) {
    // Query words are stemmed by FTS5 itself (a scratch FTS table), then looked up in the index's vocabulary.
    steps.push(
      { sql: 'DELETE FROM temp.mem01_query_terms', params: [], mode: 'run' },
      ...missing.map(
        (term, i): ReadStep => ({
          sql: 'INSERT INTO temp.mem01_query_terms (rowid, x) VALUES (?, ?)',
          params: [i + 1, term],
          mode: 'run',
        }),
      ),
      {
        sql: `SELECT q.doc AS i, max(coalesce(v.doc, 0)) AS df FROM temp.mem01_query_terms_vocab q
                LEFT JOIN temp.mem01_belief_vocab v ON v.term = q.term GROUP BY q.doc`,
        params: [],
      },
    );
  }
  const stats = await exec(steps);
  const block = stats[0]?.[0]?.block;
  const total = block instanceof Uint8Array ? (readVarint(block) ?? 0) : 0;
  cache.observeTotal(total);
  const scopeDocs = scopeCached ?? Number(stats[1]?.[0]?.doc ?? 0);
  if (scopeCached === undefined) cache.set(scopeKey, scopeDocs, now);
  if (missing.length > 0) {
    const found = new Map<number, number>();
    for (const r of stats[stats.length - 1] ?? []) found.set(Number(r.i), Number(r.df));
    missing.forEach((term, i) => {
      cache.set(term, found.get(i + 1) ?? 0, now);
    });
  }
  if (total === 0 || scopeDocs === 0) return [];
  const kept = total >= MIN_STATS_DOCS ? terms.filter((t) => (cache.get(t, now) ?? 0) <= total / 2) : terms;
  const words = buildMatch(kept);
  if (words === null) return [];
  const narrow = scopeDocs * 3 < total;
  const match = narrow
    ? `scope : ${quoteTerm(`s${target.scopeId}`)} AND ${TEXT_COLUMNS} : (${words})`
    : `${TEXT_COLUMNS} : (${words})`;
  // Candidates needed for `limit` rows of this scope: the scope's share of the index when it is not in the MATCH.
  const share = narrow ? 1 : total / Math.max(1, scopeDocs);
  let k = Math.ceil((target.limit + Math.max(16, target.limit)) * share);
  const filter = scopeFilter(target, 'b');
  for (;;) {
    if (k > MAX_FTS_K) k = -1; // rank every match
    const [rows = []] = await exec([
      {
        sql: `WITH f AS MATERIALIZED (
                SELECT rowid, -${BM25} AS score FROM belief_fts WHERE belief_fts MATCH ?
                ORDER BY score DESC, rowid DESC LIMIT ?
              )
              SELECT f.score AS score, b.* FROM f LEFT JOIN beliefs b ON b.seq = f.rowid AND ${filter.sql}
              ORDER BY f.score DESC, b.id DESC`,
        params: [match, k, ...filter.params],
      },
    ]);
    // Candidates of other scopes or statuses come back without a belief row.
    const hits = rows.filter((r) => r.seq !== null && r.seq !== undefined);
    if (k === -1 || rows.length < k || hits.length >= target.limit) return hits.slice(0, target.limit);
    k *= 4;
  }
}

/**
 * The sqlite-vec index splits each scope into this many shards (by `seq`), each its own partition, so the KNN of
 * one search runs as that many scans that the search workers run in parallel.
 */
export const VEC_SHARDS = 2;

/** The shard of a belief in the sqlite-vec index. */
export function vecShard(beliefSeq: number): number {
  return beliefSeq % VEC_SHARDS;
}

/**
 * KNN through sqlite-vec within the scope's partitions (one scan per shard, run concurrently), over the
 * unit-normalised embeddings with L2 distance (`score` = cosine = 1 - d²/2), best first, ties by id descending.
 * Each shard over-fetches to make room for the status filter until it holds `limit` rows that pass or has no more;
 * returns null when even the largest allowed `k` cannot get there (then the exact search answers).
 */
export async function searchVecRows(
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
export async function searchExactRows(
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
