/**
 * What a transcript item may be, written once for every store: a plain JSON object that comes back from any store
 * exactly as it was given. The Agents SDK's own sessions refuse the same values (a Date, a typed array, a hidden or
 * computed property, a cycle), so a mem01 transcript never replays to the model something other than what was saved.
 */
import { InvalidInputError } from '../errors.js';

/** A problem found while walking an item: what it holds, never its content. */
class Unsupported extends Error {}

/**
 * A deep copy of `item` as plain JSON data, read once (getters are never called), or `InvalidInputError(field, …)`
 * naming what kind of value is refused (never the item's content, nor its keys).
 *
 * Accepted: an object whose prototype is `Object.prototype` or null, holding strings, finite numbers, booleans,
 * null, plain arrays and such objects. Properties whose value is `undefined` are left out (JSON drops them too).
 * Refused: anything else at the top (a number, a string, an array, null), and anywhere inside: a Date, a typed
 * array or other class instance, a function, a symbol, a bigint, a non-finite number, `undefined` in an array, a
 * sparse array or one with extra properties, a symbol key, a hidden (non-enumerable) or accessor property, a cycle,
 * and a Proxy. A value that throws while it is read is refused with a generic reason.
 */
export function snapshotItem(item: unknown, field: string): Record<string, unknown> {
  let copy: unknown;
  try {
    const prototype = item !== null && typeof item === 'object' ? Object.getPrototypeOf(item) : undefined;
    if (Array.isArray(item) || (prototype !== Object.prototype && prototype !== null)) {
      throw new Unsupported(`must be a plain JSON object, got ${kindOf(item)}`);
    }
    copy = snapshotValue(item, new Set());
    // Structured cloning refuses a Proxy (the walk above cannot tell one from its target).
    structuredClone(item);
  } catch (err) {
    // The thrown error may carry the item's content (a getter's message, a value in a clone error): never pass it on.
    const reason = err instanceof Unsupported ? err.message : 'could not be read as plain JSON data';
    throw new InvalidInputError(field, `${reason}; only plain JSON data is stored`);
  }
  return copy as Record<string, unknown>;
}

function snapshotValue(value: unknown, ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Unsupported('holds a non-finite number (NaN or Infinity)');
    return value;
  }
  if (typeof value !== 'object') throw new Unsupported(`holds ${kindOf(value)}`);
  if (ancestors.has(value)) throw new Unsupported('holds a cycle');
  ancestors.add(value);
  try {
    return Array.isArray(value) ? snapshotArray(value) : snapshotObject(value, ancestors);
  } finally {
    ancestors.delete(value);
  }

  function snapshotArray(array: unknown[]): unknown[] {
    const length = array.length;
    const keys = Reflect.ownKeys(array);
    if (keys.length !== length + 1)
      throw new Unsupported('holds a sparse array or an array with extra properties');
    const out = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      const descriptor = Object.getOwnPropertyDescriptor(array, String(i));
      if (!descriptor) throw new Unsupported('holds a sparse array or an array with extra properties');
      if (!('value' in descriptor)) throw new Unsupported('holds an accessor (getter) property');
      if (!descriptor.enumerable) throw new Unsupported('holds a hidden (non-enumerable) property');
      if (descriptor.value === undefined) throw new Unsupported('holds undefined in an array');
      out[i] = snapshotValue(descriptor.value, ancestors);
    }
    return out;
  }
}

function snapshotObject(value: object, ancestors: Set<object>): Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new Unsupported(`holds ${kindOf(value)}`);
  const out: Record<string, unknown> = {};
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string') throw new Unsupported('holds a symbol-keyed property');
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (!descriptor) continue;
    if (!('value' in descriptor)) throw new Unsupported('holds an accessor (getter) property');
    if (!descriptor.enumerable) throw new Unsupported('holds a hidden (non-enumerable) property');
    if (descriptor.value === undefined) continue;
    // defineProperty, not assignment: an own `__proto__` key stays a key.
    Object.defineProperty(out, key, {
      configurable: true,
      enumerable: true,
      writable: true,
      value: snapshotValue(descriptor.value, ancestors),
    });
  }
  return out;
}

/** A content-free name for a value's kind. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'bigint':
      return 'a bigint';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
  }
  if (value instanceof Date) return 'a Date';
  if (ArrayBuffer.isView(value)) return 'a typed array or binary view';
  if (value instanceof ArrayBuffer) return 'an ArrayBuffer';
  if (value instanceof Map || value instanceof Set) return 'a Map or Set';
  if (value instanceof RegExp) return 'a RegExp';
  return 'an instance of a class (not a plain object)';
}
