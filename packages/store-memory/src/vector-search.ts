/** Vector search of the in-memory store: exact cosine over each scope's unit-length embeddings (`vector-index.ts`). */

import { type Belief, DimensionMismatchError } from '@mem01/engine';
import * as kit from '@mem01/engine/store-kit';
import { cloneBelief, type Method } from './state.js';
import { TopK } from './top-k.js';

export const searchVector: Method<'searchVector'> = (
  state,
  { scope: canonical, vector: query, limit, statuses, excludeGrants },
) => {
  if (state.dimensions !== null && query.length !== state.dimensions) {
    throw new DimensionMismatchError(state.dimensions, query.length, 'query vector');
  }
  const s = state.scope(canonical);
  if (!s?.vectors) return [];
  const wanted = new Set(statuses);
  const excluded = new Set(excludeGrants);
  const top = new TopK<Belief>(limit);
  s.vectors.scan(
    kit.normalizeVector(query),
    (row) =>
      wanted.has(row.belief.status) &&
      (row.belief.grantId === undefined || !excluded.has(row.belief.grantId)),
    (row, score) => top.offer(row.belief, Math.max(-1, Math.min(1, score))),
  );
  return top.sorted().map(({ item, score }) => ({ belief: cloneBelief(item), score }));
};
