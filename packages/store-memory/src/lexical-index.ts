import { stemmer } from 'stemmer';

/**
 * English stop words: the function words of the Snowball/Lucene English lists plus common auxiliaries. Dropped from
 * documents and queries so they neither match nor inflate document lengths, and an all-stop-word query finds nothing.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing down during each few for from further had has have having he her here hers ' +
    'herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on ' +
    'once only or other our ours ourselves out over own same she should so some such than that the their theirs them ' +
    'themselves then there these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves s t don shall may might must also'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Splits text into index terms: NFKC, lower case, runs of letters/digits (so `_`, quotes, operators and emoji are
 * separators), English stop words removed, Porter-stemmed. Query text goes through the same function, so no
 * character of a query is ever syntax.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase();
  for (const match of normalized.matchAll(WORD)) {
    const word = match[0];
    if (STOP_WORDS.has(word)) continue;
    out.push(word.length > 2 ? stemmer(word) : word);
  }
  return out;
}

const K1 = 1.2;
const B = 0.75;

/** Per-document postings for one scope: term → (doc slot → term frequency). */
export class LexicalIndex<Doc> {
  private readonly postings = new Map<string, Map<Doc, number>>();
  private readonly lengths = new Map<Doc, number>();
  private readonly terms = new Map<Doc, readonly string[]>();
  private totalLength = 0;

  get size(): number {
    return this.lengths.size;
  }

  add(doc: Doc, text: string): void {
    if (this.lengths.has(doc)) this.remove(doc);
    const tokens = tokenize(text);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [term, count] of tf) {
      let list = this.postings.get(term);
      if (!list) {
        list = new Map();
        this.postings.set(term, list);
      }
      list.set(doc, count);
    }
    this.lengths.set(doc, tokens.length);
    this.terms.set(doc, [...tf.keys()]);
    this.totalLength += tokens.length;
  }

  remove(doc: Doc): void {
    const length = this.lengths.get(doc);
    if (length === undefined) return;
    for (const term of this.terms.get(doc) ?? []) {
      const list = this.postings.get(term);
      if (!list) continue;
      list.delete(doc);
      if (list.size === 0) this.postings.delete(term);
    }
    this.lengths.delete(doc);
    this.terms.delete(doc);
    this.totalLength -= length;
  }

  /**
   * BM25 (k1 1.2, b 0.75, Lucene's non-negative idf) of every document containing at least one query term (OR).
   * `accept` filters documents (e.g. by status) before they are scored.
   */
  score(query: string, accept: (doc: Doc) => boolean): Map<Doc, number> {
    const scores = new Map<Doc, number>();
    const n = this.lengths.size;
    if (n === 0) return scores;
    const avgdl = this.totalLength / n || 1;
    const seen = new Set<string>();
    for (const term of tokenize(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.size;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (const [doc, tf] of list) {
        if (!accept(doc)) continue;
        const dl = this.lengths.get(doc) ?? 0;
        const s = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * dl) / avgdl));
        scores.set(doc, (scores.get(doc) ?? 0) + s);
      }
    }
    return scores;
  }
}
