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
