import { StoreError } from '@mem01/engine';

/** Switches failures of a wrapped store on and off, per method. */
export interface FaultControl {
  /** Make `method` throw a `StoreError` until {@link heal} (or for the next `times` calls). */
  fail(method: string, times?: number): void;
  /** Stop failing `method` (every method without an argument). */
  heal(method?: string): void;
  /** Calls that failed so far, by method. */
  readonly failures: Readonly<Record<string, number>>;
}

/**
 * Wraps a real store so chosen methods fail on demand; every other call goes to the real store. The wrapper
 * keeps the store's identity-free shape (name, capabilities, methods), so it can be passed as `store`.
 */
export function withFaults<T extends object>(store: T): { store: T; faults: FaultControl } {
  const failing = new Map<string, number>();
  const failures: Record<string, number> = {};
  const faults: FaultControl = {
    fail(method, times = Number.POSITIVE_INFINITY) {
      failing.set(method, times);
    },
    heal(method) {
      if (method === undefined) failing.clear();
      else failing.delete(method);
    },
    failures,
  };
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const left = failing.get(prop);
        if (left !== undefined && left > 0) {
          if (left === 1) failing.delete(prop);
          else failing.set(prop, left - 1);
          failures[prop] = (failures[prop] ?? 0) + 1;
          return Promise.reject(new StoreError(`injected failure in ${prop}`));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, faults };
}
