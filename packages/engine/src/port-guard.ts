/**
 * The engine's ports as it calls them: a store, extractor or embedder whose calls fail only with errors that
 * {@link sanitizeError} made safe. A driver or provider error can carry a key, a token or a connection string in its
 * message, its `cause` or a field; wrapping the ports once means that no error the engine throws, records or logs
 * passes one on, whichever method failed.
 */
import { sanitizeError } from './errors.js';

const guarded = new WeakMap<object, object>();

/**
 * A view of `port` whose methods rethrow through {@link sanitizeError} (a `Mem01Error` keeps its class, code and
 * fields, so the engine's own checks still work); everything else passes through. The same view is returned for
 * the same port. Methods run on the port itself, so private fields keep working.
 */
export function guardPort<T extends object>(port: T): T {
  const known = guarded.get(port);
  if (known) return known as T;
  const view = new Proxy(port, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        let out: unknown;
        try {
          out = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (err) {
          throw sanitizeError(err);
        }
        return out instanceof Promise
          ? out.catch((err: unknown) => {
              throw sanitizeError(err);
            })
          : out;
      };
    },
  });
  guarded.set(port, view);
  return view;
}
