/**
 * Lexical search of the SQLite store: BM25 over FTS5 (`porter unicode61`). The query words are the store kit's
 * (`queryTerms`); FTS5 stems them itself, and each is quoted, so nothing of the query is ever FTS5 syntax.
 */

import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { AsyncMethod } from './connection.js';
import { buildMatch, quoteTerm, readVarint } from './fts-query.js';
import { type ReadBatch, type ReadStep, type SearchTarget, scopeFilter, tableRows } from './read-batch.js';

export const searchLexical: AsyncMethod<'searchLexical'> = async (
  c,
  { scope: s, terms, limit, statuses, excludeGrants },
) => {
  return c.search('searchLexical', async (exec) => {
    const scopeId = c.scopeId(s);
    if (scopeId === null || terms.length === 0) return [];
    const target = { scopeId, ...s, limit, statuses, excludeGrants };
    const rows = await searchLexicalRows(exec, target, terms, c.termStats);
    return rows.map((row) => ({ belief: kit.beliefRow.read(row), score: Number(row.score) }));
  });
};

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
 * Document frequencies (of query words and of scope tokens) and the index size they were read at. fts5vocab counts
 * a term's documents by walking its whole posting list, which costs milliseconds for a word in 100k beliefs, so each
 * count is kept for a minute, or until the index has grown or shrunk by more than 2%. The counts only decide which
 * words are too common to search for and how a scope is filtered, so a count that is a little stale is harmless.
 */
export class TermStatsCache {
  readonly #entries = new Map<string, { readonly df: number; readonly at: number }>();
  /** The index size the cached counts were read at. */
  #since = 0;
  /** The index size the last search read, if any. */
  #total: number | undefined;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly maxAgeMs = 60_000,
  ) {}

  /** The index size the last search read (a guess for the next one, which checks it), or undefined. */
  get total(): number | undefined {
    return this.#total;
  }

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
    this.#total = total;
    if (Math.abs(total - this.#since) > this.#since * 0.02) {
      this.#entries.clear();
      this.#since = total;
    }
  }
}

/** What one FTS5 query asks: its MATCH expression and how many candidates it ranks (-1: every match). */
interface FtsQuery {
  readonly match: string;
  readonly k: number;
  /** Common words whose rows alone FTS5 may skip (see {@link looseWords}), and the MATCH of the other words. */
  readonly prune?: { readonly loose: readonly string[]; readonly match: string } | undefined;
}

/** FTS5's bm25() constant k1: no row gains more than `idf * (k1 + 1)` from one phrase. */
const BM25_K1 = 1.2;

/** The first varint of the FTS5 averages record is the number of indexed rows. */
const TOTAL_STEP: ReadStep = { sql: 'SELECT block FROM belief_fts_data WHERE id = 1', params: [] };

/**
 * Lexical search: BM25 over FTS5, best first, ties by id descending, at most `limit` rows (`score` = -bm25).
 *
 * Words found in more than half of all indexed beliefs are dropped (BM25 gives them an IDF of about zero, so the
 * ranking is unchanged, but matching them would make FTS5 score nearly every row). When the scope is a small part of
 * the index, its token is AND-ed into the MATCH so FTS5 ranks only the scope's rows; otherwise the scope is enforced
 * by the join alone. Either way FTS5 returns only its best `k` candidates (among equal scores, the most recently
 * stored), and `k` grows until `limit` rows pass the scope and status filter or every match has been seen.
 *
 * When every count the plan needs is cached, the index size is read in the same batch as the FTS5 query (one read
 * transaction, one round trip to a search worker) and the plan is checked against it; a plan the new size would
 * change is thrown away and the search runs again from fresh counts.
 */
async function searchLexicalRows(
  exec: ReadBatch,
  target: SearchTarget,
  terms: readonly string[],
  cache: TermStatsCache,
  now: number = Date.now(),
): Promise<Row[]> {
  if (terms.length === 0) return [];
  const scopeKey = `\u0000scope:${target.scopeId}`;
  const guessTotal = cache.total;
  if (guessTotal !== undefined) {
    const guess = planQuery(target, terms, cache, guessTotal, scopeKey, now);
    if (guess !== undefined) {
      const [block, ...rest] = await exec(
        guess === null ? [TOTAL_STEP] : [TOTAL_STEP, ...rankSteps(target, guess, guess.k)],
      );
      cache.observeTotal(totalOf(block));
      const actual = planQuery(target, terms, cache, totalOf(block), scopeKey, now);
      if (actual === null && guess === null) return [];
      if (actual && guess && actual.match === guess.match && actual.k === guess.k) {
        return rankRows(exec, target, guess, rest);
      }
    }
  }
  let counts = await readCounts(exec, target, terms, cache, scopeKey, now);
  // The index size moved by more than 2%, so the counts read before are gone: read them at this size.
  if (terms.some((t) => cache.get(t, now) === undefined)) {
    counts = await readCounts(exec, target, terms, cache, scopeKey, now);
  }
  const query = plan(target, terms, (t) => cache.get(t, now) ?? 0, counts.total, counts.scopeDocs);
  return query === null ? [] : rankRows(exec, target, query);
}

/** Reads the index size and the counts the cache lacks (the scope's and the query words'), and caches them. */
async function readCounts(
  exec: ReadBatch,
  target: SearchTarget,
  terms: readonly string[],
  cache: TermStatsCache,
  scopeKey: string,
  now: number,
): Promise<{ total: number; scopeDocs: number }> {
  const missing = terms.filter((t) => cache.get(t, now) === undefined);
  const scopeCached = cache.get(scopeKey, now);
  const steps: ReadStep[] = [TOTAL_STEP];
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
  const total = totalOf(stats[0]);
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
  return { total, scopeDocs };
}

function totalOf(rows: readonly Row[] | undefined): number {
  const block = rows?.[0]?.block;
  return block instanceof Uint8Array ? (readVarint(block) ?? 0) : 0;
}

/** The plan from cached counts only: undefined when one is missing, null when the search finds nothing. */
function planQuery(
  target: SearchTarget,
  terms: readonly string[],
  cache: TermStatsCache,
  total: number,
  scopeKey: string,
  now: number,
): FtsQuery | null | undefined {
  const scopeDocs = cache.get(scopeKey, now);
  if (scopeDocs === undefined || terms.some((t) => cache.get(t, now) === undefined)) return undefined;
  return plan(target, terms, (t) => cache.get(t, now) ?? 0, total, scopeDocs);
}

/** The FTS5 query for these counts, or null when nothing can match. */
function plan(
  target: SearchTarget,
  terms: readonly string[],
  df: (term: string) => number,
  total: number,
  scopeDocs: number,
): FtsQuery | null {
  if (total === 0 || scopeDocs === 0) return null;
  const kept = total >= MIN_STATS_DOCS ? terms.filter((t) => df(t) <= total / 2) : terms;
  const words = buildMatch(kept);
  if (words === null) return null;
  const narrow = scopeDocs * 3 < total;
  const match = narrow
    ? `scope : ${quoteTerm(`s${target.scopeId}`)} AND ${TEXT_COLUMNS} : (${words})`
    : `${TEXT_COLUMNS} : (${words})`;
  // Candidates needed for `limit` rows of this scope: the scope's share of the index when it is not in the MATCH.
  const share = narrow ? 1 : total / Math.max(1, scopeDocs);
  const k = Math.ceil((target.limit + Math.max(16, target.limit)) * share);
  if (k > MAX_FTS_K) return { match, k: -1 };
  // Only where the candidates are counted over the whole index, as the words' counts are.
  const loose = narrow ? [] : looseWords(kept, df, total, k);
  if (loose.length === 0) return { match, k };
  const others = buildMatch(kept.filter((t) => !loose.includes(t)));
  return others === null
    ? { match, k }
    : { match, k, prune: { loose, match: `${TEXT_COLUMNS} : (${others})` } };
}

/** BM25's IDF as FTS5 computes it, for a word in `hits` of `total` rows. */
function idf(hits: number, total: number): number {
  const v = Math.log((total - hits + 0.5) / (hits + 0.5));
  return v > 0 ? v : 1e-6;
}

/**
 * Common words (by the cached counts) that FTS5 may skip the rows of: a row holding only such words scores less than
 * the sum of their `idf * (k1 + 1)`, so when the `k` best rows holding the other words all score at least that much,
 * no row holding only the common ones is among the best `k`, and FTS5 need not score them (most of the cost of a
 * query with a common word). Each one is taken only when the other words still hold at least `2k` rows and the bound
 * stays below the largest IDF among them (a guess that the check after the query mostly confirms). Nothing is left
 * out when a word holds a digit (it could match the scope token, which the counts here do not tell apart).
 */
export function looseWords(
  kept: readonly string[],
  df: (term: string) => number,
  total: number,
  k: number,
): string[] {
  // A repeated word would be two phrases, each adding to a row's score.
  if (kept.some((t) => /\p{N}/u.test(t)) || new Set(kept).size !== kept.length) return [];
  const loose: string[] = [];
  let bound = 0;
  for (const word of [...kept].sort((a, b) => df(b) - df(a))) {
    const others = kept.filter((t) => t !== word && !loose.includes(t));
    if (others.length === 0 || df(word) < 2 * k) break;
    if (Math.max(...others.map(df)) < 2 * k) break;
    const next = bound + idf(df(word), total) * (BM25_K1 + 1);
    if (next > Math.max(...others.map((t) => idf(df(t), total)))) break;
    bound = next;
    loose.push(word);
  }
  return loose;
}

/**
 * One FTS5 query: its best `k` candidates (ties by rowid descending), then, of those in the scope with an allowed
 * status, the best `limit` by score and id descending. Only those are read from the beliefs table. Every row also
 * carries `candidates`, how many candidates FTS5 returned, and `kth`, the lowest score among them; when none passes,
 * one row with no belief carries them. With `prune`, FTS5 scores only the rows matching `prune` (the other words):
 * the unary `+` keeps the rowid test a filter on the MATCH scan rather than one FTS5 query per rowid.
 */
function rankStep(target: SearchTarget, match: string, k: number, prune: string | null): ReadStep {
  const filter = scopeFilter(target, 'b');
  return {
    sql: `WITH f AS MATERIALIZED (
            SELECT rowid, -${BM25} AS score FROM belief_fts WHERE belief_fts MATCH ?${
              prune === null ? '' : ' AND +rowid IN (SELECT rowid FROM belief_fts WHERE belief_fts MATCH ?)'
            }
            ORDER BY score DESC, rowid DESC LIMIT ?
          ), h AS MATERIALIZED (
            SELECT f.rowid AS seq, f.score AS score, b.id AS id FROM f CROSS JOIN beliefs b
              ON b.seq = f.rowid AND ${filter.sql}
            ORDER BY f.score DESC, b.id DESC LIMIT ?
          )
          SELECT c.n AS candidates, c.kth AS kth, h.score AS score, b.* FROM
            (SELECT count(*) AS n, min(score) AS kth FROM f) c
            LEFT JOIN h LEFT JOIN beliefs b ON b.seq = h.seq
          ORDER BY h.score DESC, b.id DESC`,
    params: [match, ...(prune === null ? [] : [prune]), k, ...filter.params, target.limit],
    mode: 'arrays',
  };
}

/**
 * The batch that ranks `query` at `k`. Pruned, it also reads the index size and how many rows hold each left-out
 * word, in the same read transaction as the FTS5 query, for {@link rankedRows} to check the result by.
 */
function rankSteps(target: SearchTarget, query: FtsQuery, k: number): ReadStep[] {
  if (!query.prune || k !== query.k) return [rankStep(target, query.match, k, null)];
  return [
    TOTAL_STEP,
    ...query.prune.loose.map(
      (word): ReadStep => ({
        sql: 'SELECT count(*) AS n FROM belief_fts WHERE belief_fts MATCH ?',
        params: [`${TEXT_COLUMNS} : ${quoteTerm(word)}`],
      }),
    ),
    rankStep(target, query.match, k, query.prune.match),
  ];
}

/**
 * The rows of a {@link rankSteps} batch, or undefined when pruning may have left out one of the best `k`: fewer than
 * `k` rows held the other words, or the `k`-th scores below what a row holding only the left-out words could score
 * (the sum of their `idf * (k1 + 1)`, from the exact counts of that transaction, with a margin for rounding).
 */
function rankedRows(query: FtsQuery, k: number, results: readonly Row[][]): Row[] | undefined {
  const rows = tableRows(results[results.length - 1]);
  if (!query.prune || k !== query.k) return rows;
  const total = totalOf(results[0]);
  let bound = 0;
  for (let i = 0; i < query.prune.loose.length; i++) {
    bound += idf(Number(results[i + 1]?.[0]?.n ?? 0), total) * (BM25_K1 + 1);
  }
  const head = rows[0];
  if (head === undefined || Number(head.candidates) < k) return undefined;
  return Number(head.kth) >= bound * (1 + 1e-9) ? rows : undefined;
}

/** Ranks with `query` (the results of its first {@link rankSteps} batch may be given), asking for 4 times the
 * candidates until `limit` rows pass the filter or every match has been seen. */
async function rankRows(
  exec: ReadBatch,
  target: SearchTarget,
  query: FtsQuery,
  first?: readonly Row[][],
): Promise<Row[]> {
  let k = query.k;
  let results = first;
  for (;;) {
    let rows = rankedRows(query, k, results ?? (await exec(rankSteps(target, query, k))));
    // Pruning could have missed a row: rank every match.
    rows ??= tableRows((await exec([rankStep(target, query.match, k, null)]))[0]);
    results = undefined;
    // With no candidate passing the filter, the one row carries no belief.
    const hits = rows.filter((r) => r.seq !== null && r.seq !== undefined);
    const candidates = Number(rows[0]?.candidates ?? 0);
    if (k === -1 || candidates < k || hits.length >= target.limit) return hits;
    k *= 4;
    if (k > MAX_FTS_K) k = -1; // rank every match
  }
}
