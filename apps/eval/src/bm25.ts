/**
 * The eval's own turn-level BM25 baseline, computed on the file it is given: the bar each category of each mem01 row
 * is compared against. It is the thing being measured against, so it is written out here in full (no library):
 *
 * - **document**: one dialogue turn, written as the eval writes it for the engine with the `date-speaker` format
 *   (`[8 May, 2023] Caroline: I went to a support group yesterday.`, a shared photo's caption appended), so the
 *   session date is part of the text, as in LoCoMo's published BM25 reference; the same for every file and every
 *   `--turn-format`;
 * - **corpus**: the turns of one conversation (each conversation is one user's memory);
 * - **tokens**: NFKC, lower case, maximal runs of Unicode letters and digits, English stop words removed
 *   ({@link STOP_WORDS}), no stemming;
 * - **score**: Okapi BM25 with k1 1.2, b 0.75 and the non-negative idf `ln(1 + (N − df + 0.5) / (df + 0.5))`, summed
 *   over the distinct query terms; turns scoring 0 are not returned; ties keep dialogue order.
 */
import type { LocomoData } from './locomo-data.js';
import { turnText } from './locomo-eval.js';
import { type Breakdown, breakdown, type QuestionScore, scoreQuestion } from './metrics.js';

/**
 * NLTK's English stop-word list (179 words), without the apostrophe forms: the tokenizer splits `don't` into `don`
 * and `t`, both in the list.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is are ' +
    'was were be been being have has had having do does did doing a an the and but if or because as until while of ' +
    'at by for with about against between into through during before after above below to from up down in out on ' +
    'off over under again further then once here there when where why how all any both each few more most other ' +
    'some such no nor not only own same so than too very s t can will just don should now d ll m o re ve y ain ' +
    'aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn'
  ).split(' '),
);

/** The tokens BM25 indexes and queries with. */
export function bm25Tokens(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP_WORDS.has(w));
}

export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
}

export const BM25_PARAMS: Bm25Params = { k1: 1.2, b: 0.75 };

/** An in-memory BM25 index over tokenised documents. */
export class Bm25Index {
  readonly #docs: ReadonlyMap<string, number>[];
  readonly #lengths: number[];
  readonly #df = new Map<string, number>();
  readonly #avgLength: number;

  constructor(
    docs: readonly (readonly string[])[],
    readonly params: Bm25Params = BM25_PARAMS,
  ) {
    this.#docs = docs.map((tokens) => {
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.#df.set(t, (this.#df.get(t) ?? 0) + 1);
      return tf;
    });
    this.#lengths = docs.map((d) => d.length);
    const total = this.#lengths.reduce((a, b) => a + b, 0);
    this.#avgLength = docs.length === 0 ? 0 : total / docs.length;
  }

  /** Inverse document frequency of a term (0 < idf; a term in no document has the largest). */
  idf(term: string): number {
    const n = this.#docs.length;
    const df = this.#df.get(term) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** The BM25 score of every document for a tokenised query (distinct terms). */
  scores(query: readonly string[]): number[] {
    const { k1, b } = this.params;
    const terms = [...new Set(query)];
    return this.#docs.map((tf, i) => {
      const norm = k1 * (1 - b + (b * (this.#lengths[i] ?? 0)) / (this.#avgLength || 1));
      let score = 0;
      for (const term of terms) {
        const f = tf.get(term);
        if (f) score += (this.idf(term) * f * (k1 + 1)) / (f + norm);
      }
      return score;
    });
  }

  /** The `limit` best documents with a positive score, best first; ties keep document order. */
  search(query: readonly string[], limit: number): { index: number; score: number }[] {
    return this.scores(query)
      .map((score, index) => ({ index, score }))
      .filter((h) => h.score > 0)
      .sort((x, y) => y.score - x.score || x.index - y.index)
      .slice(0, limit);
  }
}

/** The baseline's figures on one file, scored by the same code as the mem01 rows. */
export interface Bm25Baseline {
  readonly label: string;
  /** How documents and tokens are made, for the report. */
  readonly method: string;
  readonly params: Bm25Params;
  readonly ks: readonly number[];
  readonly scores: Breakdown;
}

export const BM25_LABEL = 'BM25, turn + date (this file)';

/** Runs the baseline over every question of `data`: one search per question in its conversation's turns. */
export function bm25Baseline(data: LocomoData, ks: readonly number[]): Bm25Baseline {
  const maxK = Math.max(...ks);
  const scores: QuestionScore[] = [];
  for (const conv of data.conversations) {
    const turns = conv.sessions.flatMap((session) => session.turns.map((turn) => ({ session, turn })));
    const index = new Bm25Index(
      turns.map(({ session, turn }) => bm25Tokens(turnText(turn, session, 'date-speaker'))),
    );
    for (const q of conv.questions) {
      const ranked = index
        .search(bm25Tokens(q.question), maxK)
        .map((h) => [turns[h.index]?.turn.diaId ?? '']);
      scores.push(scoreQuestion(ranked, q.evidence, ks, q.category));
    }
  }
  return {
    label: BM25_LABEL,
    method:
      'one document per turn: `[session date] Speaker: text` (+ photo caption); NFKC, lower case, letter/digit runs, NLTK English stop words removed, no stemming; k1 1.2, b 0.75, idf ln(1 + (N − df + 0.5)/(df + 0.5)); corpus = one conversation',
    params: BM25_PARAMS,
    ks: [...ks],
    scores: breakdown(scores, ks, data.categories),
  };
}
