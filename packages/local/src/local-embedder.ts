import { type Embedder, InvalidInputError } from '@mem01/engine';
import { stemmer } from 'stemmer';

/** Options for {@link createLocalEmbedder}. */
export interface LocalEmbedderOptions {
  /** Vector length. Default 384. */
  readonly dimensions?: number;
  /** Shortest and longest character n-gram. Default 3..5. */
  readonly ngramMin?: number;
  readonly ngramMax?: number;
  /** Weight of the whole-word (stemmed) features against the character n-grams of a word. Default 1. */
  readonly wordWeight?: number;
  /** Total weight of a word's character n-grams. Default 0.6. */
  readonly ngramWeight?: number;
  /** Overrides the measured default similarity floor. */
  readonly minSimilarity?: number;
}

/**
 * Words that carry no topic. "The user …" starts every statement, so without this list unrelated statements
 * would look alike.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but if of to in on at by for with from as is am are was were be been being do does did ' +
    'i me my mine we us our you your he him his she her it its they them their this that these those ' +
    'user users what which who whom where when why how there here not no so than too very can will just ' +
    "has have had would should could may might must shall about into over also 's s t don't im i'm"
  ).split(/\s+/),
);

/**
 * A deterministic, offline embedder: signed feature hashing of lower-cased, Porter-stemmed word unigrams and
 * character n-grams (3..5 by default, with word-boundary markers) into a fixed number of dimensions,
 * L2-normalised.
 *
 * It is **lexical-fuzzy, not semantic**: texts are close when they share words, word stems or spelling
 * fragments ("lives"/"live", "NYC"/"nyc", "marathon"/"marathons"), not when they mean the same thing in
 * different words ("home" vs "apartment", "job" vs "employer" are unrelated to it). Its `minSimilarity` is
 * set from measured related/unrelated pairs (see the package README). Use a real embedding model for
 * semantic recall.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly minSimilarity: number;
  /** Feature hashing: similarity reflects shared words and n-grams, not meaning. Recall weighs lexical relevance more. */
  readonly kind = 'lexical' as const;
  readonly #nMin: number;
  readonly #nMax: number;
  readonly #wordWeight: number;
  readonly #ngramWeight: number;

  constructor(options: LocalEmbedderOptions = {}) {
    const dims = options.dimensions ?? 384;
    if (!Number.isInteger(dims) || dims < 8 || dims > 65_536) {
      throw new InvalidInputError('dimensions', `must be an integer in 8..65536, got ${String(dims)}`);
    }
    const nMin = options.ngramMin ?? 3;
    const nMax = options.ngramMax ?? 5;
    if (!Number.isInteger(nMin) || !Number.isInteger(nMax) || nMin < 1 || nMax < nMin || nMax > 10) {
      throw new InvalidInputError(
        'ngramMin',
        `need integers 1 <= ngramMin <= ngramMax <= 10, got ${nMin}..${nMax}`,
      );
    }
    const ww = options.wordWeight ?? 1;
    const nw = options.ngramWeight ?? 0.6;
    if (!(ww >= 0) || !(nw >= 0) || ww + nw === 0 || !Number.isFinite(ww + nw)) {
      throw new InvalidInputError('wordWeight', 'weights must be finite, non-negative and not both 0');
    }
    const min = options.minSimilarity ?? DEFAULT_MIN_SIMILARITY;
    if (!(min >= -1 && min <= 1))
      throw new InvalidInputError('minSimilarity', `must be in -1..1, got ${String(min)}`);
    this.dimensions = dims;
    this.#nMin = nMin;
    this.#nMax = nMax;
    this.#wordWeight = ww;
    this.#ngramWeight = nw;
    this.minSimilarity = min;
    const variant = nMin === 3 && nMax === 5 && ww === 1 && nw === 0.6 ? '' : `-n${nMin}${nMax}-w${ww}-${nw}`;
    this.model = `mem01-local-hash-v1-${dims}${variant}`;
  }

  async embed(
    texts: readonly string[],
    options?: { readonly signal?: AbortSignal | undefined },
  ): Promise<Float32Array[]> {
    if (!Array.isArray(texts)) throw new InvalidInputError('texts', 'must be an array of strings');
    options?.signal?.throwIfAborted();
    return texts.map((t, i) => {
      if (typeof t !== 'string') throw new InvalidInputError(`texts[${i}]`, 'must be a string');
      return this.embedOne(t);
    });
  }

  /** The vector of one text, synchronously. */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const words = tokenize(text);
    for (const word of words) {
      const stem = stemmer(word);
      this.#add(v, `w:${stem}`, this.#wordWeight);
      const grams = ngrams(`<${stem}>`, this.#nMin, this.#nMax);
      if (grams.length === 0) continue;
      const w = this.#ngramWeight / Math.sqrt(grams.length);
      for (const g of grams) this.#add(v, g, w);
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
    if (norm > 0) {
      const inv = 1 / Math.sqrt(norm);
      for (let i = 0; i < v.length; i++) v[i] = v[i]! * inv;
    }
    return v;
  }

  #add(v: Float32Array, feature: string, weight: number): void {
    const h = fnv1a(feature);
    const index = h % this.dimensions;
    // A second, independent bit decides the sign, so collisions cancel out on average instead of piling up.
    const sign = (murmurMix(h) & 1) === 0 ? 1 : -1;
    v[index] = v[index]! + sign * weight;
  }
}

/** Measured on the fixture pairs in local-embedder.test.ts; see README. */
export const DEFAULT_MIN_SIMILARITY = 0.2;

/** Creates a {@link LocalEmbedder}. */
export function createLocalEmbedder(options?: LocalEmbedderOptions): LocalEmbedder {
  return new LocalEmbedder(options);
}

/** Lower-cased word tokens (letters and digits, inner apostrophes kept), without stop words. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of text
    .toLowerCase()
    .normalize('NFKC')
    .matchAll(/[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu)) {
    const w = m[0].replace(/['’]s$/u, '').replace(/’/g, "'");
    if (w && !STOP_WORDS.has(w)) out.push(w);
  }
  return out;
}

function ngrams(s: string, min: number, max: number): string[] {
  const out: string[] = [];
  const chars = [...s];
  for (let n = min; n <= max; n++) {
    for (let i = 0; i + n <= chars.length; i++) out.push(`c:${chars.slice(i, i + n).join('')}`);
  }
  return out;
}

/** FNV-1a, 32 bit, over UTF-16 code units. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The murmur3 finaliser: decorrelates the sign bit from the index. */
function murmurMix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}
