/**
 * Recall ranking: fuses lexical and vector relevance with recency, confidence and a weight per kind.
 * Pure; the engine fetches the hits from the store.
 */
import type { LexicalHit, VectorHit } from './ports.js';
import type { Belief, BeliefKind, RecallSignals, ScoredBelief } from './types.js';

export interface RecallWeights {
  readonly lexical: number;
  readonly vector: number;
  readonly recency: number;
  readonly confidence: number;
}

export interface RankingConfig {
  readonly weights: RecallWeights;
  /** Multiplier per kind (1 = neutral). */
  readonly kindWeights: Readonly<Record<BeliefKind, number>>;
  /** Recency halves every this many days of `storedAt` age. */
  readonly halfLifeDays: number;
  /**
   * A belief is relevant only with a lexical hit or a vector similarity at or above this floor. Taken from the
   * embedder (`Embedder.minSimilarity`).
   */
  readonly minSimilarity: number;
}

export const DEFAULT_RANKING: RankingConfig = {
  weights: { lexical: 0.5, vector: 0.3, recency: 0.1, confidence: 0.1 },
  kindWeights: {
    identity: 1,
    preference: 1,
    goal: 1,
    decision: 1,
    fact: 1,
    relationship: 1,
    event: 0.95,
    episode: 0.9,
  },
  halfLifeDays: 180,
  minSimilarity: 0.3,
};

/** 0..1: 1 for a belief stored now, 0.5 after one half-life. */
export function recencyScore(storedAt: string, now: number, halfLifeDays: number): number {
  const ageDays = Math.max(0, now - Date.parse(storedAt)) / 86_400_000;
  return 0.5 ** (ageDays / halfLifeDays);
}

/** Deterministic order: score desc, then newer `storedAt`, then id ascending. */
export function compareScored(a: ScoredBelief, b: ScoredBelief): number {
  if (b.score !== a.score) return b.score - a.score;
  if (a.belief.storedAt !== b.belief.storedAt) return a.belief.storedAt < b.belief.storedAt ? 1 : -1;
  return a.belief.id < b.belief.id ? -1 : a.belief.id > b.belief.id ? 1 : 0;
}

/**
 * Fuses store hits into one ranked list. Lexical scores are normalised by the best lexical score of the
 * candidate set (store scales differ); vector similarity counts only at or above `minSimilarity`.
 * Beliefs with neither signal are not returned.
 */
export function rankHits(
  lexical: readonly LexicalHit[],
  vector: readonly VectorHit[],
  options: { readonly now: number; readonly limit: number; readonly config: RankingConfig },
): ScoredBelief[] {
  const { config, now } = options;
  const byId = new Map<string, { belief: Belief; lex: number | null; vec: number | null }>();
  for (const h of lexical) {
    if (!(h.score > 0)) continue;
    const cur = byId.get(h.belief.id);
    if (cur) cur.lex = Math.max(cur.lex ?? 0, h.score);
    else byId.set(h.belief.id, { belief: h.belief, lex: h.score, vec: null });
  }
  for (const h of vector) {
    const cur = byId.get(h.belief.id);
    if (cur) cur.vec = Math.max(cur.vec ?? -1, h.score);
    else byId.set(h.belief.id, { belief: h.belief, lex: null, vec: h.score });
  }
  let maxLex = 0;
  for (const c of byId.values()) if (c.lex !== null && c.lex > maxLex) maxLex = c.lex;

  const out: ScoredBelief[] = [];
  const w = config.weights;
  for (const c of byId.values()) {
    const vecRelevant = c.vec !== null && c.vec >= config.minSimilarity;
    if (c.lex === null && !vecRelevant) continue;
    const lexN = c.lex !== null && maxLex > 0 ? c.lex / maxLex : 0;
    const vec = vecRelevant ? (c.vec as number) : 0;
    const recency = recencyScore(c.belief.storedAt, now, config.halfLifeDays);
    const kind = config.kindWeights[c.belief.kind] ?? 1;
    const total =
      (w.lexical * lexN + w.vector * vec + w.recency * recency + w.confidence * c.belief.confidence) * kind;
    const signals: RecallSignals = {
      lexical: lexN,
      lexicalRaw: c.lex,
      vector: c.vec,
      recency,
      confidence: c.belief.confidence,
      kind,
      total,
    };
    out.push({ belief: c.belief, score: total, signals });
  }
  out.sort(compareScored);
  return out.slice(0, options.limit);
}

/** Ranking without a query (a profile): recency, confidence and kind only. */
export function rankProfile(
  beliefs: readonly Belief[],
  options: { readonly now: number; readonly limit: number; readonly config: RankingConfig },
): ScoredBelief[] {
  const { config, now } = options;
  const out = beliefs.map((belief): ScoredBelief => {
    const recency = recencyScore(belief.storedAt, now, config.halfLifeDays);
    const kind = config.kindWeights[belief.kind] ?? 1;
    const total = (config.weights.recency * recency + config.weights.confidence * belief.confidence) * kind;
    return {
      belief,
      score: total,
      signals: {
        lexical: 0,
        lexicalRaw: null,
        vector: null,
        recency,
        confidence: belief.confidence,
        kind,
        total,
      },
    };
  });
  out.sort(compareScored);
  return out.slice(0, options.limit);
}
