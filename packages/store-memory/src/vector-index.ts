/**
 * The unit-length embeddings of one scope, packed row after row in one Float32Array so that exact cosine search is a
 * single tight dot-product loop. Rows are removed by moving the last row into the hole.
 */
export class VectorIndex<Doc> {
  private data: Float32Array;
  private docs: Doc[] = [];
  private readonly slots = new Map<Doc, number>();

  constructor(readonly dimensions: number) {
    this.data = new Float32Array(dimensions * 16);
  }

  get size(): number {
    return this.docs.length;
  }

  has(doc: Doc): boolean {
    return this.slots.has(doc);
  }

  /** Adds or replaces the row of `doc`; `unit` must already be normalised. */
  set(doc: Doc, unit: Float32Array): void {
    let slot = this.slots.get(doc);
    if (slot === undefined) {
      slot = this.docs.length;
      if ((slot + 1) * this.dimensions > this.data.length) {
        const grown = new Float32Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.docs.push(doc);
      this.slots.set(doc, slot);
    }
    this.data.set(unit, slot * this.dimensions);
  }

  /** A copy of the stored (unit-length) row, or null. */
  get(doc: Doc): Float32Array | null {
    const slot = this.slots.get(doc);
    if (slot === undefined) return null;
    return this.data.slice(slot * this.dimensions, (slot + 1) * this.dimensions);
  }

  remove(doc: Doc): void {
    const slot = this.slots.get(doc);
    if (slot === undefined) return;
    const last = this.docs.length - 1;
    const d = this.dimensions;
    if (slot !== last) {
      const moved = this.docs[last]!;
      this.data.copyWithin(slot * d, last * d, (last + 1) * d);
      this.docs[slot] = moved;
      this.slots.set(moved, slot);
    }
    // Zero the freed row so removed content does not linger in the buffer.
    this.data.fill(0, last * d, (last + 1) * d);
    this.docs.pop();
    this.slots.delete(doc);
  }

  /** Calls `visit(doc, cosine)` for every accepted row; `unitQuery` must be normalised. */
  scan(
    unitQuery: Float32Array,
    accept: (doc: Doc) => boolean,
    visit: (doc: Doc, score: number) => void,
  ): void {
    const d = this.dimensions;
    const data = this.data;
    const docs = this.docs;
    for (let row = 0, n = docs.length; row < n; row++) {
      const doc = docs[row]!;
      if (!accept(doc)) continue;
      const base = row * d;
      // Four independent sums let the loop pipeline; the tail handles dimensions not divisible by four.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = 0;
      for (; i + 3 < d; i += 4) {
        s0 += data[base + i]! * unitQuery[i]!;
        s1 += data[base + i + 1]! * unitQuery[i + 1]!;
        s2 += data[base + i + 2]! * unitQuery[i + 2]!;
        s3 += data[base + i + 3]! * unitQuery[i + 3]!;
      }
      for (; i < d; i++) s0 += data[base + i]! * unitQuery[i]!;
      visit(doc, s0 + s1 + s2 + s3);
    }
  }
}
