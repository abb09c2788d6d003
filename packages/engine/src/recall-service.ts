/**
 * Recall as the engine runs it: fetch lexical and vector candidates of one scope from the store, keep what may be
 * recalled, rank with the policy of `recall.ts`, and collapse results that add no evidence.
 */
import type { EngineCore } from './engine-core.js';
import { InvalidInputError } from './errors.js';
import { collapseCovered, rankHits, rankProfile } from './recall.js';
import { type ContextBlock, renderContextBlock } from './render.js';
import { contentWords } from './text.js';
import type { Belief, BeliefKind, Scope, ScoredBelief } from './types.js';
import { assertText, sameScope } from './util.js';

export interface RecallOptions {
  /** At most this many beliefs. Default `config.recallLimit`. */
  readonly limit?: number | undefined;
  /** Return per-signal scores (always computed; this only keeps them). */
  readonly explain?: boolean | undefined;
  /** Include these kinds only. */
  readonly kinds?: readonly BeliefKind[] | undefined;
  /** Use vector similarity when an embedder is configured. Default true. */
  readonly vector?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Checks recall arguments before any waiting, so bad input fails fast. Returns the limit to use. */
export function checkRecall(core: EngineCore, query: unknown, options: RecallOptions): number {
  assertText(query, 'query', core.config.maxTextBytes, true);
  const limit = options.limit ?? core.config.recallLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new InvalidInputError('limit', 'must be an integer between 1 and 1000');
  }
  return limit;
}

/**
 * The active beliefs of `scope` (canonical) most relevant to `query` (a profile of the newest when the query is
 * empty). Never returns other scopes, pending, superseded, retracted or forgotten beliefs.
 */
export async function recallBeliefs(
  core: EngineCore,
  scope: Scope,
  query: string,
  options: RecallOptions,
): Promise<ScoredBelief[]> {
  const limit = checkRecall(core, query, options);
  const started = performance.now();
  const kinds = options.kinds ? new Set(options.kinds) : null;
  const keep = (b: Belief): boolean =>
    b.status === 'active' &&
    sameScope(b.scope, scope) &&
    (kinds ? kinds.has(b.kind) : core.config.episodic || b.kind !== 'episode');
  const now = core.clock().getTime();
  let ranked: ScoredBelief[];
  if (query.trim() === '') {
    const page = await core.store.list(scope, { statuses: ['active'], limit: Math.min(1000, limit * 4) });
    ranked = rankProfile(page.items.filter(keep), { now, limit, config: core.config.ranking });
  } else {
    const candidateLimit = Math.max(core.config.candidateLimit, limit);
    // Only content words reach the lexical index: "what is my" must not make a belief relevant.
    const terms = contentWords(query);
    const lexicalP =
      terms.length > 0
        ? core.store.searchLexical(scope, terms.join(' '), { limit: candidateLimit })
        : Promise.resolve([]);
    const vectorP =
      core.vectors && options.vector !== false
        ? core
            .embedQuery(query, scope, options.signal)
            .then((v) => core.store.searchVector(scope, v, { limit: candidateLimit }))
        : Promise.resolve([]);
    const [lexical, vector] = await Promise.all([lexicalP, vectorP]);
    // Rank a wider list, then drop what adds no evidence (an episode and the belief distilled from it).
    ranked = collapseCovered(
      rankHits(
        lexical.filter((h) => keep(h.belief)),
        vector.filter((h) => keep(h.belief)),
        { now, limit: limit * 4, config: core.config.ranking },
      ),
      limit,
    );
  }
  core.stats.recalls++;
  core.emit({ type: 'recall', scope, returned: ranked.length, ms: performance.now() - started });
  return options.explain ? ranked : ranked.map(({ belief, score }) => ({ belief, score }));
}

/** Recalled beliefs rendered as the bounded context block. */
export function contextOf(
  core: EngineCore,
  recalled: readonly ScoredBelief[],
  query: string,
  budgetBytes: number | undefined,
): ContextBlock & { readonly recalled: readonly ScoredBelief[] } {
  const block = renderContextBlock(
    recalled.map((r) => r.belief),
    budgetBytes ?? core.config.budgetBytes,
    { query },
  );
  return { ...block, recalled };
}
