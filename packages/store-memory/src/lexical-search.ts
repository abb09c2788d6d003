/**
 * Lexical search of the in-memory store: BM25 over each scope's inverted index (see `lexical-index.ts`), on the
 * store kit's query terms.
 */

import type { Belief } from '@mem01/engine';
import { cloneBelief, type Method } from './state.js';
import { TopK } from './top-k.js';

export const searchLexical: Method<'searchLexical'> = (
  state,
  { scope, terms, limit, statuses, excludeGrants },
) => {
  const s = state.scope(scope);
  if (!s || terms.length === 0) return [];
  const wanted = new Set(statuses);
  const excluded = new Set(excludeGrants);
  const top = new TopK<Belief>(limit);
  s.lexical.score(
    terms,
    limit,
    (row) =>
      wanted.has(row.belief.status) &&
      (row.belief.grantId === undefined || !excluded.has(row.belief.grantId)),
    (row, score) => top.offer(row.belief, score),
  );
  return top.sorted().map(({ item, score }) => ({ belief: cloneBelief(item), score }));
};
