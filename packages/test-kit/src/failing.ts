/** Parts that fail on purpose, for the tests of what a failure shows (the secrets tests of every package). */

/** `target`, except that its method `method` rejects with what `failure` makes; every other member is the target's. */
export function failingMethod<T extends object>(target: T, method: string, failure: () => Error): T {
  return new Proxy(target, {
    get(t, prop) {
      if (prop === method)
        return async () => {
          throw failure();
        };
      const value = Reflect.get(t, prop, t) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}

/** An extractor (structurally the engine's `Extractor`) whose every extraction rejects with what `failure` makes. */
export function failingExtractor(
  failure: () => Error,
  name = 'failing',
): { readonly name: string; extract(...args: unknown[]): Promise<never> } {
  return {
    name,
    async extract() {
      throw failure();
    },
  };
}
