/**
 * Vector search of the PostgreSQL store: pgvector HNSW (cosine distance) with an exact scan for small scopes and as
 * a fallback, or, without pgvector, exact cosine over unit-length `real[]` embeddings.
 */

import { DimensionMismatchError } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql } from 'kysely';
import pgvector from 'pgvector';
import { COLUMNS, grantFilter } from './beliefs.js';
import type { Method } from './connection.js';
import { searchStats, smallScope } from './search-stats.js';

export const searchVector: Method<'searchVector'> = async (
  c,
  { scope: s, vector, limit, statuses, excludeGrants },
) => {
  const state = c.state();
  if (vector.length !== state.dimensions)
    throw new DimensionMismatchError(state.dimensions, vector.length, 'query vector');
  const scopeFilter = sql`user_id = ${s.userId} and namespace = ${s.namespace} and status = any(${statuses}::text[]) and embedding is not null ${grantFilter(excludeGrants)}`;
  const toHits = (rows: (Row & { score: number | string | null })[]) =>
    rows
      .map((row) => {
        const score = Number(row.score);
        return { belief: kit.beliefRow.read(row), score: Number.isFinite(score) ? score : 0 };
      })
      .sort(kit.hitOrder);

  if (state.mode === 'exact') {
    const q = Array.from(kit.normalizeVector(vector));
    return c.run(
      'searchVector',
      async () => {
        const r = await sql<Row & { score: number }>`
          select ${COLUMNS}, (select sum(x::float8 * y::float8) from unnest(embedding, ${q}::real[]) as u(x, y)) as score
          from ${c.t('beliefs')} where ${scopeFilter}
          order by score desc nulls last, id desc limit ${limit}`.execute(c.db);
        return toHits(r.rows);
      },
      { idempotent: true },
    );
  }

  const ext = sql.id(state.extensionSchema ?? 'public');
  const q = sql`${pgvector.toSql(Array.from(vector))}::${ext}.vector`;
  const distance = sql`embedding OPERATOR(${ext}.<=>) ${q}`;
  // An exact scan over the scope's rows. Ordering by the similarity, not by the `<=>` operator itself, keeps
  // the planner off the HNSW index (an index can only serve ORDER BY column <=> constant); the scope index
  // finds the rows and a top-N sort keeps the best.
  const exact = async () => {
    const r = await sql<Row & { score: number }>`
      select ${COLUMNS}, 1 - (${distance}) as score from ${c.t('beliefs')} where ${scopeFilter}
      order by score desc, id desc limit ${limit}`.execute(c.db);
    return toHits(r.rows);
  };
  return c.run(
    'searchVector',
    async () => {
      // A scope the statistics put at a few thousand rows is scanned exactly: that costs well under a
      // millisecond per thousand rows, its results are exact, and an index scan filtered down to one user's
      // 0.1% of a big table would walk many other users' vectors and still come back short.
      if (smallScope(c, await searchStats(c), s.userId)) return exact();
      // HNSW with a WHERE filter can stop early; iterative scans keep going until `limit` rows pass the filter.
      // The settings are made transaction-local by the statement itself: the lateral join evaluates them
      // before the index scan starts, and they end with the statement. One round trip instead of five
      // (begin, two set_config, select, commit).
      const ef = String(Math.min(1000, Math.max(40, limit * 2)));
      const settings = state.iterativeScan
        ? sql`select set_config('hnsw.ef_search', ${ef}, true) as ef, set_config('hnsw.iterative_scan', 'strict_order', true) as it offset 0`
        : sql`select set_config('hnsw.ef_search', ${ef}, true) as ef, 'off' as it offset 0`;
      const r = await sql<Row & { score: number }>`
        select h.* from (${settings}) as cfg cross join lateral (
          select ${COLUMNS}, 1 - (${distance}) as score
          from ${c.t('beliefs')} where ${scopeFilter} and cfg.ef is not null and cfg.it is not null
          order by ${distance} limit ${limit}) as h`.execute(c.db);
      if (r.rows.length >= limit) return toHits(r.rows);
      // Fewer than asked: either the scope has fewer embedded beliefs or the index scan gave up early. An exact
      // scan settles it.
      return exact();
    },
    { idempotent: true },
  );
};
