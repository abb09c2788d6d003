/** Where embeddings are cached. A `Map` works; so does any store with these three methods (e.g. shared between embedders). */
export interface EmbeddingCache {
  get(key: string): Float32Array | undefined;
  set(key: string, value: Float32Array): unknown;
  delete(key: string): unknown;
}

/** A small least-recently-used map: `get` refreshes an entry, `set` evicts the oldest beyond `max`. */
export class LruCache implements EmbeddingCache {
  readonly #max: number;
  readonly #map = new Map<string, Float32Array>();
  constructor(max: number) {
    this.#max = max;
  }
  get size(): number {
    return this.#map.size;
  }
  get(key: string): Float32Array | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: Float32Array): this {
    if (this.#max <= 0) return this;
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done) break;
      this.#map.delete(oldest.value);
    }
    return this;
  }
  delete(key: string): boolean {
    return this.#map.delete(key);
  }
  keys(): IterableIterator<string> {
    return this.#map.keys();
  }
}
