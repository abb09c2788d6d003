/**
 * Access counts without a write on recall's path: recall only adds to counters in memory; they are written in one
 * batch per scope (`AccessStore.recordAccess`) at most `config.accessFlushMs` later, at `flush()` and at `close()`.
 * Counts not written when a process dies are lost: the count is a usage signal, not a record.
 */
import { describeError } from './errors.js';
import type { AccessStore, EngineStore, Logger } from './ports.js';
import type { Scope } from './types.js';
import { normalizeScope } from './util.js';

export class AccessCounter {
  readonly #store: AccessStore;
  readonly #flushMs: number;
  readonly #clock: () => Date;
  readonly #logger: Logger | undefined;
  /** Scope key → the scope and its counts by belief id. */
  #pending = new Map<string, { scope: Scope; counts: Map<string, number>; at: string }>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #writing: Promise<void> = Promise.resolve();

  /** A counter for `store`, or null when it keeps no access counts. */
  static for(
    store: EngineStore,
    flushMs: number,
    clock: () => Date,
    logger: Logger | undefined,
  ): AccessCounter | null {
    const s = store as Partial<AccessStore>;
    return typeof s.recordAccess === 'function'
      ? new AccessCounter(s as AccessStore, flushMs, clock, logger)
      : null;
  }

  private constructor(store: AccessStore, flushMs: number, clock: () => Date, logger: Logger | undefined) {
    this.#store = store;
    this.#flushMs = flushMs;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Counts one access of each id, in memory. Never waits, never writes. */
  note(scope: Scope, ids: readonly string[]): void {
    if (ids.length === 0) return;
    const s = normalizeScope(scope);
    const key = JSON.stringify([s.userId, s.namespace]);
    let entry = this.#pending.get(key);
    const at = this.#clock().toISOString();
    if (!entry) {
      entry = { scope: s, counts: new Map(), at };
      this.#pending.set(key, entry);
    }
    entry.at = at;
    for (const id of ids) entry.counts.set(id, (entry.counts.get(id) ?? 0) + 1);
    if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        void this.flush();
      }, this.#flushMs);
      // Counting must never keep a process alive.
      this.#timer.unref?.();
    }
  }

  /** Writes the counts gathered so far, one transaction per scope. A failure is logged and those counts dropped. */
  flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    const batch = this.#pending;
    this.#pending = new Map();
    const previous = this.#writing;
    this.#writing = (async () => {
      await previous;
      for (const { scope, counts, at } of batch.values()) {
        try {
          await this.#store.recordAccess(
            scope,
            [...counts].map(([id, count]) => ({ id, count })),
            at,
          );
        } catch (err) {
          this.#logger?.warn(`mem01: access counts not written: ${describeError(err)}`);
        }
      }
    })();
    return this.#writing;
  }

  /** Forgets the counts not written yet (after the store was cleared), or only those of `scope` (after it was erased). */
  discard(scope?: Scope): void {
    if (scope === undefined) {
      this.#pending.clear();
      return;
    }
    const s = normalizeScope(scope);
    this.#pending.delete(JSON.stringify([s.userId, s.namespace]));
  }
}
