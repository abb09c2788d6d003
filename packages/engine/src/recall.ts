/**
 * Recall ranking: fuses lexical and vector relevance with recency, confidence and a weight per kind.
 * Pure; the engine fetches the hits from the store.
 */
import { InvalidInputError } from './errors.js';
import type { LexicalHit, VectorHit } from './ports.js';
import { contentStems, contentWords, stem } from './text.js';
import {
  BELIEF_KINDS,
  type Belief,
  type BeliefKind,
  isConversational,
  isVerbatim,
  type RecallSignals,
  type RecallTier,
  type ScoredBelief,
} from './types.js';

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
  /**
   * Conversational context: a result gains this fraction of the best score among the other results on the turns
   * next to its own (same session, one position away; half as much from two positions away). In a dialogue the
   * turn that answers is often the one after the turn that matches the words of a question ("What did you read?"
   * / "Sapiens."). 0 turns it off. Measured on LoCoMo (apps/eval), before session coverage and feedback: recall@10
   * excluding adversarial 64.3 → 67.7 with 0.3 (0.2: 66.6, 0.4: 68.2 with a window of 2); with them, 0.4 (72.2)
   * over 0.3 (71.7).
   */
  readonly contextWeight: number;
  /**
   * In conversational context, the turn right after one that asks a question (holds a `?`) gains this multiple of
   * the context: in a dialogue the answer follows the question, often with none of its words ("How long have you
   * been married?" / "5 years already!"). Measured on LoCoMo (apps/eval, SQLite): 71.8 → 73.0 with 2. 1 turns it off.
   */
  readonly answerBoost: number;
  /**
   * The relevance floor. A belief holding query words is relevant only when they carry at least this share of the
   * query's weight, each word weighted by how rare it is among the candidates (a word no candidate holds weighs
   * most). So "What is my sister's name?" recalls nothing from "My name is Alex" alone: "sister" is the informative
   * word and nothing holds it. 0 turns the floor off.
   */
  readonly minCoverage: number;
  /** Below the floor of the query, each result must still hold this share of the query's word weight. */
  readonly itemCoverage: number;
  /** Weight of the session's coverage of the query (see `addSessionCoverage`). 0 turns it off. */
  readonly sessionWeight: number;
  /** Pseudo-relevance feedback: weight of the expanded query's lexical matches. 0 turns it off. */
  readonly feedbackWeight: number;
  /** How many of the best results feedback reads. */
  readonly feedbackDocs: number;
  /** How many expansion words feedback adds. */
  readonly feedbackTerms: number;
  /**
   * A vector match alone (no shared word) makes a belief relevant: true for semantic embedders; false for
   * lexical-fuzzy ones, whose similarity mostly repeats the words already weighed by the floor.
   */
  readonly vectorAlone: boolean;
}

/** Weights for a semantic embedder (the default). */
export const SEMANTIC_WEIGHTS: RecallWeights = { lexical: 0.5, vector: 0.3, recency: 0.1, confidence: 0.1 };

/**
 * Weights for a lexical-fuzzy embedder (feature hashing): its similarity mostly repeats the lexical signal, so
 * lexical relevance leads. Measured on LoCoMo (apps/eval): recall@10 excluding adversarial 62.9 → 64.0 against the
 * semantic weights; recency and confidence were neutral there.
 */
export const LEXICAL_EMBEDDER_WEIGHTS: RecallWeights = {
  lexical: 0.8,
  vector: 0.2,
  recency: 0,
  confidence: 0,
};

export const DEFAULT_RANKING: RankingConfig = {
  weights: SEMANTIC_WEIGHTS,
  kindWeights: {
    identity: 1,
    preference: 1,
    goal: 1,
    decision: 1,
    fact: 1,
    relationship: 1,
    event: 0.95,
    episode: 0.9,
    reply: 0.9,
    summary: 0.9,
    note: 1,
  },
  halfLifeDays: 180,
  minSimilarity: 0.3,
  contextWeight: 0.4,
  answerBoost: 2,
  minCoverage: 0.5,
  itemCoverage: 0,
  sessionWeight: 0.5,
  feedbackWeight: 0.3,
  feedbackDocs: 5,
  feedbackTerms: 5,
  vectorAlone: true,
};

/** How many positions away a neighbouring turn still lends context (its share halves with each step). */
export const CONTEXT_WINDOW = 2;

/** 0..1: 1 for a belief stored now, 0.5 after one half-life. */
export function recencyScore(storedAt: string, now: number, halfLifeDays: number): number {
  const ageDays = Math.max(0, now - Date.parse(storedAt)) / 86_400_000;
  return 0.5 ** (ageDays / halfLifeDays);
}

/**
 * The kinds recall searches for a query: every kind but the assistant's replies (unless the question asks what the
 * assistant said) and the conversation summaries (unless it asks about an earlier conversation as a whole).
 */
export function recalledKinds(query: string): readonly BeliefKind[] | undefined {
  const replies = asksAboutReplies(query);
  const summaries = asksAboutConversations(query);
  if (replies && summaries) return undefined;
  return BELIEF_KINDS.filter((k) => (replies || k !== 'reply') && (summaries || k !== 'summary'));
}

// A question about an earlier conversation as a whole: what was talked about, a recap.
const CONVERSATION_QUESTION: readonly RegExp[] = [
  /\bwhat\s+(?:did|have|were)\s+we\s+(?:talk(?:ing)?|chat(?:ting)?|discuss(?:ing)?|speak(?:ing)?|cover(?:ing)?)\b/i,
  /\b(?:recap|summari[sz]e|summary\s+of)\b[^?.!]*\b(?:chats?|conversations?|discussions?|sessions?|talks?)\b/i,
  /\b(?:remind\s+me|tell\s+me)\s+what\s+we\s+(?:talked|chatted|discussed|spoke)\b/i,
  /\bwhat\s+(?:was|were)\s+(?:our|the|that)\s+(?:(?:previous|last|earlier|past|prior|other|first)\s+)?(?:chats?|conversations?|discussions?)\s+about\b/i,
  /\b(?:chats?|conversations?|discussions?)\b[^?.!]*\bcovered\b/i,
];

/**
 * Whether `query` asks about an earlier conversation as a whole ("what did we talk about last week?", "recap our
 * last chat"): only then are the conversation summaries recalled.
 */
export function asksAboutConversations(query: string): boolean {
  return CONVERSATION_QUESTION.some((re) => re.test(query));
}

// A question about what the assistant said: a past conversation named as such, or the assistant's own past words.
const REPLY_QUESTION: readonly RegExp[] = [
  /\b(?:our|the|my|that|this)\s+(?:previous|last|earlier|past|prior|other)\s+(?:chats?|conversations?|discussions?|exchanges?)\b/i,
  /\byou(?:\s+(?:had|have|once|just|already))?\s+(?:said|told|suggested|recommended|mentioned|made|created|wrote|written|gave|given|listed|provided|proposed|shared|explained|outlined|described|advised|named|picked|chose|came\s+up\s+with|answered|replied|offered|generated|drafted|composed)\b/i,
  /\bdid\s+you\s+(?:say|tell|suggest|recommend|mention|make|create|write|give|list|provide|propose|share|explain|outline|describe|advise|name|pick|choose|come\s+up\s+with|answer|reply|offer|generate|draft|compose)\b/i,
  /\byour\s+(?:previous|last|earlier|past)\s+(?:answers?|replies|reply|responses?|suggestions?|recommendations?|advice|messages?)\b/i,
];

/**
 * Whether `query` asks about what the assistant said in an earlier conversation ("what did you recommend last
 * time?", "in our previous chat you mentioned …"): only then are the assistant's replies recalled.
 */
export function asksAboutReplies(query: string): boolean {
  return REPLY_QUESTION.some((re) => re.test(query));
}

/**
 * The tier a belief is recalled from: an episode is a turn kept verbatim (the user's, or a reply of the assistant's);
 * everything else is a belief.
 */
export function tierOf(belief: Belief): RecallTier {
  if (belief.kind === 'summary') return 'summary';
  return isVerbatim(belief.kind) ? 'episode' : 'belief';
}

const positive = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0);

/**
 * The highest total {@link rankHits} (or, with `profile`, {@link rankProfile}) can give under `config`: every
 * weighted signal at 1 (a best lexical match, a similarity of 1, stored now, full confidence) times the largest kind
 * weight, plus full session coverage, plus the largest conversational context (a neighbour as strong, right after a
 * question). Recall divides every total by it: a positive constant per configuration, so the order never changes and
 * a score of one configuration means the same in every query. A profile ranks by recency and confidence only, so
 * its highest total counts only those (0 when both weigh 0, as with a lexical-fuzzy embedder).
 */
export function maxRecallTotal(config: RankingConfig, profile = false): number {
  const w = config.weights;
  // A kind the configuration leaves out weighs 1, as in the ranking.
  const kind = Math.max(0, ...BELIEF_KINDS.map((k) => positive(config.kindWeights[k] ?? 1)));
  if (profile) return (positive(w.recency) + positive(w.confidence)) * kind;
  const base =
    (positive(w.lexical) + positive(w.vector) + positive(w.recency) + positive(w.confidence)) * kind;
  // Session coverage is added only where the relevance floor computes the query's coverage.
  const session = config.minCoverage > 0 ? positive(config.sessionWeight) : 0;
  const context = 1 + positive(config.contextWeight) * Math.max(1, config.answerBoost);
  return (base + session) * context;
}

/** A fused total as recall's score: `total / max`, held to 0..1 (0 when nothing can score). */
export function scaledScore(total: number, max: number): number {
  if (!(max > 0) || !(total > 0)) return 0;
  return Math.min(1, total / max);
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
 * Beliefs with neither signal are not returned. Then each result gains the context of its neighbouring turns
 * ({@link RankingConfig.contextWeight}). Scores are the fused totals; recall scales them to 0..1
 * ({@link maxRecallTotal}) after ranking.
 */
export function rankHits(
  lexical: readonly LexicalHit[],
  vector: readonly VectorHit[],
  options: {
    readonly now: number;
    readonly limit: number;
    readonly config: RankingConfig;
    /** The query: with it, the relevance floor ({@link RankingConfig.minCoverage}) applies. */
    readonly query?: string | undefined;
  },
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
  const coverage =
    options.query !== undefined && config.minCoverage > 0
      ? queryCoverage(
          options.query,
          [...byId.values()].map((c) => c.belief),
        )
      : null;

  // The floor: when the candidates together hold too little of the query's informative words (and, with a semantic
  // embedder, none is close enough in meaning), the memory knows nothing about what was asked: nothing is recalled.
  if (coverage) {
    const vecRelevant = [...byId.values()].some(
      (c) => config.vectorAlone && c.vec !== null && c.vec >= config.minSimilarity,
    );
    if (!vecRelevant && coverage.held < config.minCoverage / coverage.terms) return [];
  }

  const out: ScoredBelief[] = [];
  const w = config.weights;
  const maxTotal = maxRecallTotal(config);
  for (const c of byId.values()) {
    const vecRelevant = c.vec !== null && c.vec >= config.minSimilarity;
    // A lexical-fuzzy embedder's match that shares no query word is a spelling accident, not relevance.
    if (
      coverage &&
      !(config.vectorAlone && vecRelevant) &&
      (coverage.byId.get(c.belief.id) ?? 0) <= config.itemCoverage
    )
      continue;
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
      maxTotal,
    };
    out.push({ belief: c.belief, score: total, tier: tierOf(c.belief), signals });
  }
  if (coverage && config.sessionWeight > 0) addSessionCoverage(out, coverage, config.sessionWeight);
  const withContext = addContext(out, config.contextWeight, config.answerBoost);
  withContext.sort(compareScored);
  return withContext.slice(0, options.limit);
}

export interface QueryCoverage {
  /** Per candidate, the share of the query's word weight it holds. */
  readonly byId: Map<string, number>;
  /** The share of the query's word weight that some candidate holds. */
  readonly held: number;
  /** How many distinct content words the query has. */
  readonly terms: number;
  readonly stems: readonly string[];
  readonly weights: readonly number[];
  readonly total: number;
}

/**
 * Adds to each result `weight ×` the share of the query's word weight that its conversation session holds across
 * all candidates. A session is about one topic: when its turns together hold the question's words, its turn that
 * answers (often in other words) is more likely relevant than a stray turn elsewhere holding one of them.
 */
function addSessionCoverage(results: ScoredBelief[], coverage: QueryCoverage, weight: number): void {
  if (coverage.total <= 0) return;
  const held = new Map<string, Set<number>>();
  for (const r of results) {
    const stems = stemsOf(r.belief);
    for (const e of r.belief.evidence) {
      let set = held.get(e.sessionId);
      if (!set) {
        set = new Set();
        held.set(e.sessionId, set);
      }
      for (const [j, t] of coverage.stems.entries()) if (stems.has(t)) set.add(j);
    }
  }
  const share = new Map<string, number>();
  for (const [session, set] of held) {
    let w = 0;
    for (const j of set) w += coverage.weights[j]!;
    share.set(session, w / coverage.total);
  }
  results.forEach((r, i) => {
    let best = 0;
    for (const e of r.belief.evidence) best = Math.max(best, share.get(e.sessionId) ?? 0);
    if (best === 0) return;
    const total = r.score + weight * best;
    results[i] = { ...r, score: total, signals: r.signals ? { ...r.signals, total } : undefined };
  });
}

/** The fewest candidates word rarity is estimated as if from (see {@link queryCoverage}). */
const MIN_COVERAGE_SAMPLE = 20;

/** Stems of belief texts by id (content never changes, so the cache needs no invalidation). */
const stemCache = new Map<string, ReadonlySet<string>>();
/** Content words of belief statements by id, in order (feedback reads them). */
const wordCache = new Map<string, readonly string[]>();
const STEM_CACHE_SIZE = 50_000;

function remember<T>(cache: Map<string, T>, id: string, value: T): T {
  if (cache.size >= STEM_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(id, value);
  return value;
}

/**
 * The content words of a belief's statement, in order, cached by id: recall reads the statements of its best
 * candidates on every query (feedback), and an episode's statement is a whole turn.
 */
export function statementWords(b: Belief): readonly string[] {
  return wordCache.get(b.id) ?? remember(wordCache, b.id, contentWords(b.statement));
}

function stemsOf(b: Belief): ReadonlySet<string> {
  let stems = stemCache.get(b.id);
  if (!stems) {
    // What the lexical index holds: statement, value, and a belief's key words (not an episode's turn key). An
    // episode's value is its statement: the same words, read once.
    const key = isConversational(b.kind) ? '' : `${b.subject} ${b.attribute}`.replace(/[_:.-]+/g, ' ');
    const words = [...statementWords(b)];
    if (b.value !== b.statement) words.push(...contentWords(b.value));
    if (key !== '') words.push(...contentWords(key));
    stems = remember(stemCache, b.id, new Set(words.map(stem)));
  }
  return stems;
}

/**
 * For each candidate, the share of the query's word weight it holds. A query word weighs by its rarity among the
 * candidates (`ln(1 + (n + 1) / (df + 0.5))²`), so a word that no candidate holds weighs most and a word most of
 * them hold weighs least: the candidates are what the store found for these words, so their document frequency is
 * the evidence at hand of how specific each word is here.
 */
export function queryCoverage(query: string, candidates: readonly Belief[]): QueryCoverage {
  const terms = [...new Set(contentStems(query))];
  const byId = new Map<string, number>();
  if (terms.length === 0) return { byId, held: 1, terms: 1, stems: [], weights: [], total: 0 };
  const sets = candidates.map((b) => stemsOf(b));
  // A small memory is read as a sample of a larger one: with two candidates, one of them holding a word says little
  // about how specific the word is.
  const n = Math.max(candidates.length, MIN_COVERAGE_SAMPLE);
  const dfs = terms.map((t) => {
    let df = 0;
    for (const s of sets) if (s.has(t)) df++;
    return df;
  });
  // Squared: with few candidates a plain idf barely tells a word most of them hold from one none holds.
  const weights = dfs.map((df) => Math.log(1 + (n + 1) / (df + 0.5)) ** 2);
  const total = weights.reduce((a, b) => a + b, 0);
  let heldByAny = 0;
  dfs.forEach((df, j) => {
    if (df > 0) heldByAny += weights[j]!;
  });
  candidates.forEach((b, i) => {
    let held = 0;
    terms.forEach((t, j) => {
      if (sets[i]!.has(t)) held += weights[j]!;
    });
    byId.set(b.id, total > 0 ? held / total : 0);
  });
  return { byId, held: total > 0 ? heldByAny / total : 0, terms: terms.length, stems: terms, weights, total };
}

const turnKey = (sessionId: string, position: number): string => `${sessionId}\u0000${position}`;

/**
 * Adds to each result `weight / d` times the best fused score among the other results covering a turn `d`
 * positions from one of its own (d = 1..{@link CONTEXT_WINDOW}, same session). Scores are read before any bonus,
 * so the order of results does not matter. A weight of 0 returns the results unchanged.
 */
function addContext(results: readonly ScoredBelief[], weight: number, answerBoost: number): ScoredBelief[] {
  if (!(weight >= 0 && weight <= 1)) {
    throw new InvalidInputError('config.ranking.contextWeight', 'must be a number between 0 and 1');
  }
  if (weight === 0 || results.length < 2) return [...results];
  // Per turn, the two best results covering it (by index), so a result never lends context to itself.
  const best = new Map<string, [number, number]>();
  results.forEach((r, i) => {
    for (const e of r.belief.evidence) {
      const key = turnKey(e.sessionId, e.position);
      const cur = best.get(key);
      if (!cur) best.set(key, [i, -1]);
      else if (cur[0] === i || cur[1] === i) continue;
      else if (r.score > results[cur[0]]!.score) best.set(key, [i, cur[0]]);
      else if (cur[1] === -1 || r.score > results[cur[1]]!.score) cur[1] = i;
    }
  });
  return results.map((r, i) => {
    let bonus = 0;
    for (const e of r.belief.evidence) {
      for (let d = 1; d <= CONTEXT_WINDOW; d++) {
        for (const position of [e.position - d, e.position + d]) {
          const cur = best.get(turnKey(e.sessionId, position));
          if (!cur) continue;
          const j = cur[0] !== i ? cur[0] : cur[1];
          if (j === -1) continue;
          // An answer follows its question: the turn right after one that asks gains more of its context.
          const asked = position === e.position - 1 && results[j]!.belief.statement.includes('?');
          bonus = Math.max(bonus, ((weight * (asked ? answerBoost : 1)) / d) * results[j]!.score);
        }
      }
    }
    if (bonus === 0) return r;
    const total = r.score + bonus;
    return { ...r, score: total, signals: r.signals ? { ...r.signals, total } : undefined };
  });
}

/** Ranking without a query (a profile): recency, confidence and kind only. */
export function rankProfile(
  beliefs: readonly Belief[],
  options: { readonly now: number; readonly limit: number; readonly config: RankingConfig },
): ScoredBelief[] {
  const { config, now } = options;
  const maxTotal = maxRecallTotal(config, true);
  const out = beliefs.map((belief): ScoredBelief => {
    const recency = recencyScore(belief.storedAt, now, config.halfLifeDays);
    const kind = config.kindWeights[belief.kind] ?? 1;
    const total = (config.weights.recency * recency + config.weights.confidence * belief.confidence) * kind;
    return {
      belief,
      score: total,
      tier: tierOf(belief),
      signals: {
        lexical: 0,
        lexicalRaw: null,
        vector: null,
        recency,
        confidence: belief.confidence,
        kind,
        total,
        maxTotal,
      },
    };
  });
  out.sort(compareScored);
  return out.slice(0, options.limit);
}

/**
 * Drops results that add no evidence: an episode whose turn a better-ranked result already covers, and a belief
 * whose every evidence turn a better-ranked episode (the verbatim turn) already covers. Order is kept.
 */
export function collapseCovered(ranked: readonly ScoredBelief[], limit: number): ScoredBelief[] {
  const covered = new Set<string>();
  const coveredByEpisode = new Set<string>();
  const out: ScoredBelief[] = [];
  for (const r of ranked) {
    if (out.length >= limit) break;
    const turns = r.belief.evidence.map((e) => `${e.sessionId}\u0000${e.position}`);
    const isEpisode = isVerbatim(r.belief.kind);
    if (turns.length > 0 && turns.every((t) => (isEpisode ? covered : coveredByEpisode).has(t))) continue;
    out.push(r);
    // A summary carries a sentence or two of each turn it cites: the turns themselves still add evidence.
    if (r.belief.kind === 'summary') continue;
    for (const t of turns) {
      covered.add(t);
      if (isEpisode) coveredByEpisode.add(t);
    }
  }
  return out;
}
