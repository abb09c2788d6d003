/**
 * Scoring: pure functions from ranked provenance to recall@k, all-evidence hit@k and MRR, aggregated per
 * category. A returned memory counts as a hit for each evidence turn its provenance covers.
 */

/** The scores of one question. */
export interface QuestionScore {
  readonly category: number;
  /** Per k: the fraction of the question's evidence turns covered by the top k memories. */
  readonly recall: Readonly<Record<number, number>>;
  /** Per k: 1 when the top k cover every evidence turn, else 0. */
  readonly allHit: Readonly<Record<number, number>>;
  /** 1 / rank of the first memory covering any evidence turn (within the largest k), else 0. */
  readonly reciprocalRank: number;
  /** Per k: distinct turns the top k memories cover (beliefs can cover several; a turn-level retriever covers k). */
  readonly turnsCovered: Readonly<Record<number, number>>;
  /**
   * Block recall: the fraction of the evidence turns covered by the memories in the rendered context block (what
   * the model sees). Absent when no block was rendered (the BM25 baseline).
   */
  readonly block?: number | undefined;
  /**
   * The share of the reference answer's words (BM25 tokens: no stop words) that the block's text holds: whether the
   * lines that reached the model still carry the answer, not only which memories did. Absent without a block or an
   * answer.
   */
  readonly answerInBlock?: number | undefined;
}

/**
 * The share of `answer`'s words found among `text`'s, both cut into words by `words`; undefined when the answer has
 * none (a bare stop word).
 */
export function answerWordsIn(
  answer: string,
  text: string,
  words: (s: string) => readonly string[],
): number | undefined {
  const want = new Set(words(answer));
  if (want.size === 0) return undefined;
  const have = new Set(words(text));
  let found = 0;
  for (const w of want) if (have.has(w)) found++;
  return found / want.size;
}

/**
 * The fraction of `evidence` (non-empty) covered by the provenance of `memories`, in any order: an episode covers
 * its turn, a belief the turns of its evidence.
 */
export function coverage(memories: readonly (readonly string[])[], evidence: readonly string[]): number {
  if (evidence.length === 0) throw new RangeError('evidence must not be empty');
  const want = new Set(evidence);
  const found = new Set<string>();
  for (const refs of memories) for (const ref of refs) if (want.has(ref)) found.add(ref);
  return found.size / want.size;
}

/**
 * Scores one question. `ranked` holds, best first, the dialogue ids each returned memory's provenance covers;
 * `evidence` the question's (non-empty) evidence ids. Ranks beyond the largest k are ignored.
 */
export function scoreQuestion(
  ranked: readonly (readonly string[])[],
  evidence: readonly string[],
  ks: readonly number[],
  category: number,
  block?: readonly (readonly string[])[],
): QuestionScore {
  if (evidence.length === 0) throw new RangeError('evidence must not be empty');
  if (ks.length === 0) throw new RangeError('ks must not be empty');
  const want = new Set(evidence);
  const maxK = Math.max(...ks);
  const firstFound = new Map<string, number>();
  const covered = new Set<string>();
  const coveredAt: number[] = [];
  let rr = 0;
  ranked.slice(0, maxK).forEach((refs, i) => {
    let hit = false;
    for (const ref of refs) {
      covered.add(ref);
      if (want.has(ref)) {
        hit = true;
        if (!firstFound.has(ref)) firstFound.set(ref, i + 1);
      }
    }
    if (hit && rr === 0) rr = 1 / (i + 1);
    coveredAt.push(covered.size);
  });
  const recall: Record<number, number> = {};
  const allHit: Record<number, number> = {};
  const turnsCovered: Record<number, number> = {};
  for (const k of ks) {
    let found = 0;
    for (const rank of firstFound.values()) if (rank <= k) found++;
    recall[k] = found / want.size;
    allHit[k] = found === want.size ? 1 : 0;
    turnsCovered[k] = coveredAt[Math.min(k, coveredAt.length) - 1] ?? 0;
  }
  return {
    category,
    recall,
    allHit,
    reciprocalRank: rr,
    turnsCovered,
    ...(block ? { block: coverage(block, evidence) } : {}),
  };
}

/** Averages over a group of questions. */
export interface Aggregate {
  readonly questions: number;
  readonly recall: Readonly<Record<number, number>>;
  readonly allHit: Readonly<Record<number, number>>;
  readonly mrr: number;
  readonly turnsCovered: Readonly<Record<number, number>>;
  /** Mean block recall over the questions that had a block; null when none had one. */
  readonly blockRecall: number | null;
  /** Mean share of the answer's words in the block, over the questions with a block and an answer; else null. */
  readonly answerInBlock: number | null;
}

/** Means of the scores; an empty group has zero questions and zero means. */
export function aggregate(scores: readonly QuestionScore[], ks: readonly number[]): Aggregate {
  const n = scores.length;
  const mean = (f: (s: QuestionScore) => number): number =>
    n === 0 ? 0 : scores.reduce((sum, s) => sum + f(s), 0) / n;
  const perK = (f: (s: QuestionScore, k: number) => number): Record<number, number> =>
    Object.fromEntries(ks.map((k) => [k, mean((s) => f(s, k))]));
  const blocks = scores.flatMap((s) => (s.block === undefined ? [] : [s.block]));
  const answers = scores.flatMap((s) => (s.answerInBlock === undefined ? [] : [s.answerInBlock]));
  return {
    questions: n,
    recall: perK((s, k) => s.recall[k] ?? 0),
    allHit: perK((s, k) => s.allHit[k] ?? 0),
    mrr: mean((s) => s.reciprocalRank),
    turnsCovered: perK((s, k) => s.turnsCovered[k] ?? 0),
    blockRecall: blocks.length === 0 ? null : blocks.reduce((a, b) => a + b, 0) / blocks.length,
    answerInBlock: answers.length === 0 ? null : answers.reduce((a, b) => a + b, 0) / answers.length,
  };
}

/** LoCoMo's category numbers (per its evaluation code and issue 29). */
export const CATEGORY_NAMES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

/** The adversarial category: its answer is not in the conversation (the evidence still is). */
export const ADVERSARIAL = 5;

/** The name of a category: from `names` (the file's scheme) when given, else LoCoMo's. */
export function categoryName(category: number, names?: Readonly<Record<string, string>>): string {
  return (names ? names[String(category)] : CATEGORY_NAMES[category]) ?? `category ${category}`;
}

/** What the category numbers of a breakdown mean (LoCoMo's when absent, as in reports written before it existed). */
export interface CategoryNaming {
  readonly names: Readonly<Record<string, string>>;
  /** The adversarial category, or null when the file has none (then `allButAdversarial` equals `all`). */
  readonly adversarial: number | null;
}

/** Aggregates per category (sorted by number) plus `all` and `allButAdversarial`. */
export interface Breakdown {
  readonly byCategory: Readonly<Record<string, Aggregate>>;
  readonly allButAdversarial: Aggregate;
  readonly all: Aggregate;
  /** The file's category names; absent in LoCoMo reports written before the LongMemEval set. */
  readonly categoryNames?: Readonly<Record<string, string>> | undefined;
}

export function breakdown(
  scores: readonly QuestionScore[],
  ks: readonly number[],
  naming?: CategoryNaming | undefined,
): Breakdown {
  const adversarial = naming ? naming.adversarial : ADVERSARIAL;
  const cats = [...new Set(scores.map((s) => s.category))].sort((a, b) => a - b);
  const byCategory: Record<string, Aggregate> = {};
  for (const c of cats) {
    byCategory[String(c)] = aggregate(
      scores.filter((s) => s.category === c),
      ks,
    );
  }
  return {
    byCategory,
    allButAdversarial: aggregate(
      scores.filter((s) => s.category !== adversarial),
      ks,
    ),
    all: aggregate(scores, ks),
    ...(naming ? { categoryNames: naming.names } : {}),
  };
}

/** Nearest-rank percentile (p in 0..100) of a sample; 0 for an empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}
