/**
 * Lexical search of the PostgreSQL store, over the generated `tsv` column (`to_tsvector('english', …)` of statement,
 * value, subject and attribute) and its GIN index.
 *
 * How it approximates BM25. PostgreSQL has no BM25: `ts_rank_cd` knows neither how rare a word is nor how long the
 * other documents are. So the score is built from the parts BM25 weighs most:
 * - each distinct query lexeme a belief holds adds its inverse document frequency, Lucene's
 *   ln(1 + (N - n + 0.5) / (n + 0.5)) for the n of the scope's N beliefs holding it: counted per user, as the memory
 *   store's index does (`scopeFrequencies` in `search-stats.ts`, bounded and cached), since a word's worth is how rare
 *   it is among this user's memories (measured on LoCoMo: 71.4 with the table's shares, 72.8 per user; memory 73.0);
 * - plus `ts_rank_cd(tsv, query, 32)`, normalised to [0, 1), which stands in for term frequency and proximity;
 * - lexemes in more than half of all beliefs are dropped (their idf is about zero, as the SQLite store does).
 * What it leaves out: term frequency saturation (k1) and length normalisation (b), so a one-word match in a long
 * statement ranks like one in a short statement, which `ts_rank_cd` separates only a little. Without statistics
 * (fewer than 1000 beliefs, or before ANALYZE) no word is dropped as common.
 * Ties go to the newer belief (higher id). The parity area of the conformance suite bounds how far this may rank
 * differently from the other stores.
 *
 * Cost: ranking needs each candidate's row, and a few query words can match thousands of one user's beliefs. So,
 * inside one statement: (1) the beliefs holding at least two of the lexemes or one rare lexeme (an OR of pairs and
 * rare lexemes, answered by the GIN index) are ranked; (2) only if those are fewer than `limit`, one-word matches are
 * taken from the scope's newest beliefs (an ordered walk of the scope index over a bounded window), and (3) only if
 * that window holds too few, through the GIN index. With more than {@link MAX_PAIR_WORDS} lexemes every match is
 * scored. The lexemes come from PostgreSQL's stemmer (`stems`, cached), so the statement holds them as constants:
 * each weight is a cheap `@@` test per row.
 */

import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql } from 'kysely';
import { COLUMNS_B, grantFilter } from './beliefs.js';
import type { Method, PgConnection } from './connection.js';
import { scopeFrequencies, searchStats, smallScope } from './search-stats.js';

/** Search words are cut to this many characters. */
const MAX_TERM_CHARS = 100;
/** Up to this many query words, lexical search first ranks the beliefs holding two of them (an OR of pairs). */
const MAX_PAIR_WORDS = 16;
/**
 * Beliefs holding exactly one of the query's words rank newest first. They are looked for among the scope's newest
 * max(MIN, FACTOR × limit) beliefs first (an ordered walk of the scope index), and through the GIN index only when
 * that window holds too few.
 */
const ONE_WORD_WALK_MIN = 500;
const ONE_WORD_WALK_FACTOR = 20;
/**
 * A query word the statistics put in at most this many beliefs of the table is rare: its GIN posting list is short,
 * so beliefs holding it alone are ranked with those holding two query words.
 */
const RARE_LEXEME_ROWS = 250;
/** Search words whose lexemes are remembered (see `#stems`). */
const STEM_CACHE_SIZE = 10_000;
export const searchLexical: Method<'searchLexical'> = async (
  c,
  { scope: s, limit, statuses, excludeGrants, ...words },
) => {
  // The kit's words; longer ones are cut, as `to_tsvector` would not index a word of thousands of characters.
  const terms = words.terms.map((t) => t.slice(0, MAX_TERM_CHARS));
  if (terms.length === 0) return [];
  return c.run(
    'searchLexical',
    async () => {
      const stats = await searchStats(c);
      const common = new Set(stats.lexemes);
      const lexemes = [...new Set((await stems(c, terms)).flat())].filter((l) => !common.has(l)).sort();
      if (lexemes.length === 0) return [];
      const withStats = stats.lexemeShares.size > 0;
      const shareOf = (l: string) => (withStats ? (stats.lexemeShares.get(l) ?? stats.rareShare) : undefined);
      // Each lexeme is a quoted tsquery operand, bound as a parameter: nothing is parsed as syntax.
      const operand = (l: string) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
      // Each word weighs its BM25 idf among the scope's beliefs (see `scopeFrequencies`).
      const frequencies = await scopeFrequencies(
        c,
        stats,
        s,
        statuses,
        new Map(lexemes.map((l) => [l, operand(l)])),
      );
      const weightOf = (l: string): number => {
        const n = frequencies.counts.get(l) ?? 0;
        return Math.log(1 + (frequencies.size - n + 0.5) / (n + 0.5));
      };
      const q = lexemes.map(operand).join(' | ');
      // Queries of many words (unusual) score every match; their OR of pairs would be too large.
      const tiered = lexemes.length <= MAX_PAIR_WORDS;
      // Stage 1 holds the beliefs with two of the lexemes, or with one rare lexeme (in at most RARE_LEXEME_ROWS
      // beliefs of the table): its GIN posting list is short, so its one-word matches are cheap to find.
      const stage1: string[] = [];
      for (const [i, a] of tiered ? lexemes.entries() : []) {
        for (const b of lexemes.slice(i + 1)) stage1.push(`${operand(a)} & ${operand(b)}`);
        const f = shareOf(a);
        if (f !== undefined && f * stats.rows <= RARE_LEXEME_ROWS) stage1.push(operand(a));
      }
      const q2 = stage1.join(' | ');
      // A user holding few of the table's rows: their rows, found through the scope index, are fewer than
      // the GIN posting lists of common words across all users, so the GIN index is kept out of stage 1.
      const tsv = smallScope(c, stats, s.userId) ? sql`coalesce(b.tsv, ''::tsvector)` : sql`b.tsv`;
      const inStage1 = q2 === '' ? sql`false` : sql`${tsv} @@ ${q2}::tsquery`;
      const oneWord = sql`${tsv} @@ ${q}::tsquery and not (${inStage1})`;
      const beliefs = c.t('beliefs');
      // One status as an equality, so the scope index (user_id, namespace, status, id desc) yields id order.
      const statusFilter =
        statuses.length === 1 ? sql`b.status = ${statuses[0]}` : sql`b.status = any(${statuses}::text[])`;
      const scoped = sql`b.user_id = ${s.userId} and b.namespace = ${s.namespace} and ${statusFilter} ${grantFilter(excludeGrants, 'b')}`;
      // The weights of the query lexemes the belief holds, summed, plus ts_rank_cd (normalised to [0, 1)).
      const weights = lexemes.map(
        (l) => sql`(case when b.tsv @@ ${operand(l)}::tsquery then ${weightOf(l)}::float8 else 0 end)`,
      );
      const score = sql`${sql.join(weights, sql` + `)} + ts_rank_cd(b.tsv, ${q}::tsquery, 32)`;
      const walk = Math.max(ONE_WORD_WALK_MIN, ONE_WORD_WALK_FACTOR * limit);
      const r = !tiered
        ? await sql<Row & { score: number }>`
        select ${COLUMNS_B}, ${score} as score from ${beliefs} b
        where ${scoped} and ${tsv} @@ ${q}::tsquery
        order by score desc, b.id desc limit ${limit}`.execute(c.db)
        : await sql<Row & { score: number }>`
        with s1 as materialized (
          select ${COLUMNS_B}, ${score} as score from ${beliefs} b
          where ${scoped} and ${inStage1}
          order by score desc, b.id desc limit ${limit}
        ), w as materialized (
          select ${COLUMNS_B}, ${score} as score from (
            select ${COLUMNS_B}, b.tsv from ${beliefs} b
            where (select count(*) from s1) < ${limit} and ${scoped}
            order by b.id desc limit ${walk}) b
          where ${oneWord}
          order by score desc, b.id desc limit ${limit}
        ), enough as materialized (
          select (select count(*) from s1) + (select count(*) from w) >= ${limit} as v
        )
        select * from s1
        union all
        select * from w where (select v from enough)
        union all
        (select ${COLUMNS_B}, ${score} as score from ${beliefs} b
          where not (select v from enough) and ${scoped} and ${oneWord}
          order by score desc, b.id desc limit ${limit})`.execute(c.db);
      return r.rows
        .map((row) => ({ belief: kit.beliefRow.read(row), score: Number(row.score) }))
        .sort(
          (a, b) => b.score - a.score || (a.belief.id < b.belief.id ? 1 : a.belief.id > b.belief.id ? -1 : 0),
        )
        .slice(0, limit);
    },
    { idempotent: true },
  );
};

/**
 * The `english` lexemes of each search word (none for a stop word), from PostgreSQL's own parser and stemmer so
 * they match the `tsv` column exactly. Stemming never changes, so results are kept (up to
 * {@link STEM_CACHE_SIZE} words, oldest dropped first) and a repeated word costs no round trip.
 */
async function stems(c: PgConnection, terms: readonly string[]): Promise<string[][]> {
  const missing = terms.filter((t) => !c.stemCache.has(t));
  if (missing.length > 0) {
    const r = await sql<{ t: string; l: string[] | null }>`
      select t, tsvector_to_array(to_tsvector('english'::regconfig, t)) as l from unnest(${missing}::text[]) as t`.execute(
      c.db,
    );
    for (const row of r.rows) {
      if (c.stemCache.size >= STEM_CACHE_SIZE) {
        const oldest = c.stemCache.keys().next().value;
        if (oldest !== undefined) c.stemCache.delete(oldest);
      }
      c.stemCache.set(row.t, row.l ?? []);
    }
  }
  return terms.map((t) => c.stemCache.get(t) ?? []);
}
