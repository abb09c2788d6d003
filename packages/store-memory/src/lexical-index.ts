import * as kit from '@mem01/engine/store-kit';

/**
 * Index terms of a text: the engine's content stems (the same splitting as every store's query terms: NFKC, lower
 * case, letters and digits, stop words removed, so no character of a query is syntax, then Porter stems). Documents
 * and queries go through this one function.
 */
export function tokenize(text: string): string[] {
  return kit.contentStems(text);
}

const K1 = 1.2;
const B = 0.75;

/**
 * A BM25 inverted index over the documents of one scope. Documents get dense integer slots so that postings,
 * lengths and score accumulators are plain arrays; removal frees the slot for reuse.
 */
export class LexicalIndex<Doc> {
  /** term → (slot → term frequency). */
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly slotOf = new Map<Doc, number>();
  private docs: (Doc | undefined)[] = [];
  private lengths: number[] = [];
  private terms: (readonly string[])[] = [];
  private readonly free: number[] = [];
  private totalLength = 0;
  // Per-query scratch space, reused across queries (a store call never interleaves with another inside score()).
  private acc = new Float64Array(0);
  private mark = new Uint8Array(0);

  get size(): number {
    return this.slotOf.size;
  }

  add(doc: Doc, text: string): void {
    if (this.slotOf.has(doc)) this.remove(doc);
    const tokens = tokenize(text);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    const slot = this.free.pop() ?? this.docs.length;
    this.docs[slot] = doc;
    this.lengths[slot] = tokens.length;
    this.terms[slot] = [...tf.keys()];
    this.slotOf.set(doc, slot);
    for (const [term, count] of tf) {
      let list = this.postings.get(term);
      if (!list) {
        list = new Map();
        this.postings.set(term, list);
      }
      list.set(slot, count);
    }
    this.totalLength += tokens.length;
  }

  remove(doc: Doc): void {
    const slot = this.slotOf.get(doc);
    if (slot === undefined) return;
    for (const term of this.terms[slot] ?? []) {
      const list = this.postings.get(term);
      if (!list) continue;
      list.delete(slot);
      if (list.size === 0) this.postings.delete(term);
    }
    this.totalLength -= this.lengths[slot] ?? 0;
    this.docs[slot] = undefined;
    this.lengths[slot] = 0;
    this.terms[slot] = [];
    this.slotOf.delete(doc);
    this.free.push(slot);
  }

  /**
   * BM25 (k1 1.2, b 0.75, Lucene's non-negative idf) of the documents containing at least one query word (OR; the
   * store kit's `queryTerms`, stemmed here), at least the best `limit` of them. `accept` filters documents (e.g. by
   * status) before they are scored.
   *
   * Exact top-k with MaxScore pruning: terms are visited rarest first, and once no document outside the current
   * candidates could reach the k-th best score with the remaining terms, those terms only update candidates.
   * That keeps a query containing a word of nearly every document (the "user" of "The user ...") fast.
   */
  score(
    words: readonly string[],
    limit: number,
    accept: (doc: Doc) => boolean,
    visit: (doc: Doc, score: number) => void,
  ): void {
    const n = this.slotOf.size;
    if (n === 0 || limit <= 0) return;
    const avgdl = this.totalLength / n || 1;
    // Content words split again are themselves: this only stems them, as the documents were.
    const unique = [...new Set(kit.contentStems(words.join(' ')))];
    const lists: { list: Map<number, number>; idf: number }[] = [];
    for (const term of unique) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.size;
      lists.push({ list, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) });
    }
    if (lists.length === 0) return;
    lists.sort((a, b) => a.list.size - b.list.size);
    // Upper bound of what the terms from i on can still add to a document's score.
    const rest = new Array<number>(lists.length + 1).fill(0);
    for (let i = lists.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + lists[i]!.idf * (K1 + 1);

    const capacity = this.docs.length;
    if (this.acc.length < capacity) {
      this.acc = new Float64Array(Math.max(capacity, this.acc.length * 2, 64));
      this.mark = new Uint8Array(this.acc.length);
    }
    const acc = this.acc;
    const mark = this.mark; // 0 unseen, 1 candidate, 2 rejected by `accept`
    const touched: number[] = [];
    const candidates: number[] = [];
    const lengths = this.lengths;
    const docs = this.docs;
    const norm = K1 * (1 - B);
    const slope = (K1 * B) / avgdl;

    let onlyCandidates = false;
    for (let i = 0; i < lists.length; i++) {
      const { list, idf } = lists[i]!;
      if (!onlyCandidates && candidates.length >= limit && kth(acc, candidates, limit) >= rest[i]!) {
        onlyCandidates = true;
      }
      const w = idf * (K1 + 1);
      if (onlyCandidates) {
        for (const slot of candidates) {
          const tf = list.get(slot);
          if (tf !== undefined) acc[slot]! += (w * tf) / (tf + norm + slope * lengths[slot]!);
        }
        continue;
      }
      list.forEach((tf, slot) => {
        let m = mark[slot]!;
        if (m === 0) {
          touched.push(slot);
          m = accept(docs[slot]!) ? 1 : 2;
          mark[slot] = m;
          if (m === 1) candidates.push(slot);
        }
        if (m === 1) acc[slot]! += (w * tf) / (tf + norm + slope * lengths[slot]!);
      });
    }
    for (const slot of candidates) visit(docs[slot]!, acc[slot]!);
    for (const slot of touched) {
      acc[slot] = 0;
      mark[slot] = 0;
    }
  }
}

/** The k-th largest accumulated score among the candidates. */
function kth(acc: Float64Array, candidates: readonly number[], k: number): number {
  const values = new Float64Array(candidates.length);
  for (let i = 0; i < candidates.length; i++) values[i] = acc[candidates[i]!]!;
  values.sort();
  return values[values.length - k]!;
}
