/**
 * The PostgreSQL planner's statistics the searches use (kept by ANALYZE and autovacuum): how common each lexeme
 * is, for the lexical weights, and how the rows spread over users, to tell a small user from a large one.
 */
import { sql } from 'kysely';
import type { PgConnection } from './connection.js';

/** How long the lexeme and user statistics are reused. */
const STATS_TTL_MS = 60_000;

export interface SearchStats {
  readonly at: number;
  /** Lexemes in more than half of all beliefs (from 1000 beliefs on). */
  readonly lexemes: string[];
  /**
   * Share of beliefs holding each of the table's most common lexemes (`most_common_elems`, from 1000 beliefs on),
   * for inverse document frequency; empty without statistics.
   */
  readonly lexemeShares: Map<string, number>;
  /** Share assumed for a lexeme that is not among the most common: the smallest share listed. */
  readonly rareShare: number;
  /** `reltuples` of the beliefs table. */
  readonly rows: number;
  /** Most common user ids with their share of the rows. */
  readonly users: Map<string, number>;
  /** `n_distinct` of user_id (negative: a fraction of the rows). 0: no statistics. */
  readonly distinct: number;
}

/** From this many beliefs on, the lexeme statistics are used (dropping common words, weighting by rarity). */
const MIN_STATS_ROWS = 1000;

/**
 * The planner's statistics the searches use (kept by ANALYZE/autovacuum), re-read once a minute:
 * - lexemes found in more than half of all beliefs (`pg_stats.most_common_elems` of `tsv`), from 1000 beliefs
 *   on. Such a word says nothing about which belief is meant (every statement reads "The user ..."), but
 *   matching it would make the search rank most of the user's beliefs;
 * - the `user_id` distribution, to tell a user holding a few of the table's rows from one holding most of them
 *   (the estimate the planner makes).
 */
export async function searchStats(c: PgConnection): Promise<SearchStats> {
  const now = Date.now();
  const cached = c.stats;
  if (cached && now - cached.at < STATS_TTL_MS) return cached;
  const schema = c.options.schema;
  const r = await sql<{
    elems: string[] | null;
    elemFreqs: number[] | null;
    rows: number | null;
    users: string[] | null;
    freqs: number[] | null;
    distinct: number | null;
  }>`
    select
      s.most_common_elems::text::text[] as elems, s.most_common_elem_freqs::float8[] as "elemFreqs",
      (select c.reltuples::float8 from pg_class c where c.oid = to_regclass(${`${schema}.beliefs`})) as rows,
      u.most_common_vals::text::text[] as users, u.most_common_freqs::float8[] as freqs, u.n_distinct::float8 as distinct
    from (select 1) one
    left join pg_stats s on s.schemaname = ${schema} and s.tablename = 'beliefs' and s.attname = 'tsv'
    left join pg_stats u on u.schemaname = ${schema} and u.tablename = 'beliefs' and u.attname = 'user_id'`.execute(
    c.db,
  );
  const row = r.rows[0];
  const rows = Number(row?.rows ?? 0);
  // most_common_elem_freqs lists one share per element, then the smallest and largest of those and the share
  // of null elements.
  const elems = rows >= MIN_STATS_ROWS ? (row?.elems ?? []) : [];
  const elemFreqs = row?.elemFreqs ?? [];
  const lexemeShares = new Map<string, number>();
  elems.forEach((e, i) => {
    const f = Number(elemFreqs[i]);
    if (typeof e === 'string' && Number.isFinite(f) && f > 0) lexemeShares.set(e, f);
  });
  const smallest = Number(elemFreqs[elems.length]);
  const stats: SearchStats = {
    at: now,
    lexemes: [...lexemeShares].filter(([, f]) => f > 0.5).map(([e]) => e),
    lexemeShares,
    rareShare: Number.isFinite(smallest) && smallest > 0 ? smallest : 0,
    rows,
    users: new Map((row?.users ?? []).map((u, i) => [u, Number(row?.freqs?.[i] ?? 0)])),
    distinct: Number(row?.distinct ?? 0),
  };
  c.stats = stats;
  return stats;
}

/** Whether the statistics put the user at no more than `smallScopeRows` rows. */
export function smallScope(c: PgConnection, stats: SearchStats, userId: string): boolean {
  const share = userShare(stats, userId);
  return share !== null && share * stats.rows <= c.options.smallScopeRows;
}

/** The planner's estimate of a user's share of all beliefs, or null without statistics. */
function userShare(stats: SearchStats, userId: string): number | null {
  if (stats.rows <= 0 || stats.distinct === 0) return null;
  const mcv = stats.users.get(userId);
  if (mcv !== undefined) return mcv;
  const distinct = stats.distinct > 0 ? stats.distinct : -stats.distinct * stats.rows;
  const rest = 1 - [...stats.users.values()].reduce((a, b) => a + b, 0);
  return Math.max(0, rest) / Math.max(1, distinct - stats.users.size);
}

/** Beliefs counted at most per lexeme when weighing a search's words. */
const MAX_COUNTED = 1000;
/** Beliefs of the scope counted at most; above, the planner's estimate of the user's rows stands in. */
const MAX_SCOPE_COUNTED = 2000;
/** Per-scope frequencies kept in {@link PgConnection.frequencyCache}. */
const FREQUENCY_CACHE_SIZE = 20_000;
/** A lexeme's count is reused while the scope's size stays within this share of the size it was counted at. */
const FREQUENCY_DRIFT = 0.1;

/**
 * How many of the scope's beliefs (in the searched statuses) hold each lexeme, and how many it has: the document
 * frequencies of BM25's idf, per user, as the memory store's index keeps them. A word's weight is how rare it is
 * among this user's memories, not across every user of the table (a name in every turn of one user's conversations
 * says little to that user, however rare it is elsewhere). One round trip per search counts the scope (up to
 * {@link MAX_SCOPE_COUNTED} beliefs; the planner's estimate above) and the lexemes whose counts are not cached; a count
 * stops at {@link MAX_COUNTED} (the planner's share of the table stands in above it: the word is common for this user
 * anyway) and is reused while the scope's size stays within {@link FREQUENCY_DRIFT} of the size it was counted at.
 */
export async function scopeFrequencies(
  c: PgConnection,
  stats: SearchStats,
  scope: { readonly userId: string; readonly namespace: string },
  statuses: readonly string[],
  operands: ReadonlyMap<string, string>,
): Promise<{ readonly size: number; readonly counts: ReadonlyMap<string, number> }> {
  const prefix = `${scope.userId}\u0000${scope.namespace}\u0000${[...statuses].sort().join(',')}\u0000`;
  const fresh = (l: string, size: number) => {
    const hit = c.frequencyCache.get(prefix + l);
    return hit && Math.abs(size - hit.size) <= FREQUENCY_DRIFT * hit.size ? hit.n : undefined;
  };
  // The lexemes to count: those without a count that still fits the scope's size at its previous search (the size
  // now is read in the same statement).
  const lastSize = c.frequencyCache.get(prefix)?.size;
  const missing = [...operands.keys()].filter(
    (l) => lastSize === undefined || fresh(l, lastSize) === undefined,
  );
  const beliefs = c.t('beliefs');
  const scoped = sql`b.user_id = ${scope.userId} and b.namespace = ${scope.namespace} and b.status = any(${statuses}::text[])`;
  const r = await sql<{ i: number; n: number }>`
    select i, (select count(*)::float8 from (
      select 1 from ${beliefs} b where ${scoped} and (o is null or b.tsv @@ o::tsquery)
      limit case when o is null then ${MAX_SCOPE_COUNTED}::int else ${MAX_COUNTED}::int end) x) as n
    from unnest(${[null, ...missing.map((l) => operands.get(l) ?? '')]}::text[]) with ordinality as u(o, i)`.execute(
    c.db,
  );
  const counted = new Map<number, number>(r.rows.map((row) => [Number(row.i) - 1, Number(row.n)]));
  let size = counted.get(0) ?? 0;
  if (size >= MAX_SCOPE_COUNTED) size = Math.max(size, (userShare(stats, scope.userId) ?? 0) * stats.rows);
  const remember = (key: string, n: number) => {
    if (c.frequencyCache.size >= FREQUENCY_CACHE_SIZE) {
      const oldest = c.frequencyCache.keys().next().value;
      if (oldest !== undefined) c.frequencyCache.delete(oldest);
    }
    c.frequencyCache.delete(prefix + key);
    c.frequencyCache.set(prefix + key, { n, size });
  };
  remember('', size);
  for (const [i, l] of missing.entries()) remember(l, counted.get(i + 1) ?? 0);
  const counts = new Map<string, number>();
  for (const l of operands.keys()) {
    // A count that drifted since the previous search is scaled to the size now, and counted again by the next one.
    const hit = c.frequencyCache.get(prefix + l);
    let n = fresh(l, size) ?? (hit && hit.size > 0 ? (hit.n * size) / hit.size : 0);
    if (n >= MAX_COUNTED) n = Math.max(n, (stats.lexemeShares.get(l) ?? 0) * size);
    counts.set(l, Math.min(n, size));
  }
  return { size, counts };
}
