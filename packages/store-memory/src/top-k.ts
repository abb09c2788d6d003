/** Keeps the `limit` best hits (score desc, then id desc) in a binary min-heap whose root is the worst kept hit. */
export class TopK<T extends { id: string }> {
  private readonly heap: { item: T; score: number }[] = [];
  constructor(private readonly limit: number) {}

  /** Is `a` worse than `b`? Lower score, or the same score and a smaller id. */
  private static worse(
    a: { item: { id: string }; score: number },
    b: { item: { id: string }; score: number },
  ) {
    return a.score < b.score || (a.score === b.score && a.item.id < b.item.id);
  }

  offer(item: T, score: number): void {
    const heap = this.heap;
    if (this.limit <= 0) return;
    const entry = { item, score };
    if (heap.length < this.limit) {
      heap.push(entry);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
      return;
    }
    if (!TopK.worse(heap[0]!, entry)) return;
    heap[0] = entry;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && TopK.worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && TopK.worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }

  /** The kept hits, best first. */
  sorted(): { item: T; score: number }[] {
    return [...this.heap].sort((a, b) => (TopK.worse(a, b) ? 1 : TopK.worse(b, a) ? -1 : 0));
  }
}
