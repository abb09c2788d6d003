/** Small pure helpers shared by the engine and the adapters. No I/O. */
import { v7 as uuidv7 } from 'uuid';
import { InvalidInputError } from './errors.js';
import type { Scope } from './types.js';

/** A new time-ordered id (UUIDv7). */
export function newId(): string {
  return uuidv7();
}

/** Full-precision UTC ISO-8601 timestamp. */
export function isoNow(clock: () => Date = () => new Date()): string {
  return clock().toISOString();
}

const MAX_ID_LENGTH = 256;

/**
 * Checks a scope and returns it in canonical form (`namespace` is always a string, '' when absent).
 * Throws `InvalidInputError` for an empty, non-string or oversized `userId`/`namespace`, or control characters.
 */
export function normalizeScope(scope: unknown): Required<Scope> & { namespace: string } {
  if (scope === null || typeof scope !== 'object') throw new InvalidInputError('scope', 'must be an object');
  const { userId, namespace } = scope as { userId?: unknown; namespace?: unknown };
  assertId(userId, 'scope.userId');
  if (namespace !== undefined && namespace !== null && namespace !== '')
    assertId(namespace, 'scope.namespace');
  return { userId: userId as string, namespace: typeof namespace === 'string' ? namespace : '' };
}

/** Throws `InvalidInputError` unless `value` is a non-empty string of at most 256 chars without NUL/control chars. */
export function assertId(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string') throw new InvalidInputError(field, `must be a string, got ${typeOf(value)}`);
  if (value.length === 0 || value.trim().length === 0)
    throw new InvalidInputError(field, 'must not be empty');
  if (value.length > MAX_ID_LENGTH)
    throw new InvalidInputError(field, `must be at most ${MAX_ID_LENGTH} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new InvalidInputError(field, 'must not contain control characters');
  // Lone surrogates cannot round-trip through SQLite or Postgres text: the scope would change identity.
  if (!value.isWellFormed())
    throw new InvalidInputError(field, 'must be well-formed Unicode (no lone surrogates)');
}

/** Throws unless `value` is a string of at most `maxBytes` UTF-8 bytes. */
export function assertText(
  value: unknown,
  field: string,
  maxBytes: number,
  allowEmpty = false,
): asserts value is string {
  if (typeof value !== 'string') throw new InvalidInputError(field, `must be a string, got ${typeOf(value)}`);
  if (!allowEmpty && value.trim().length === 0) throw new InvalidInputError(field, 'must not be empty');
  const bytes = utf8Length(value);
  if (bytes > maxBytes)
    throw new InvalidInputError(field, `is ${bytes} bytes, over the limit of ${maxBytes}`);
}

export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value;
}

const encoder = new TextEncoder();
/** Exact UTF-8 byte length. */
export function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

/** Same scope? (`namespace` undefined and '' are equal.) */
export function sameScope(a: Scope, b: Scope): boolean {
  return a.userId === b.userId && (a.namespace ?? '') === (b.namespace ?? '');
}

/**
 * A stable 64-bit content hash (FNV-1a over UTF-16 code units), hex. Not cryptographic: used for idempotency
 * keys and caches, where it only has to tell texts apart.
 */
export function contentHash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
    h2 ^= h2 >>> 13;
  }
  return h1.toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

/** SHA-256 of the UTF-8 text, lower-case hex (Web Crypto, so no Node import). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', encoder.encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The outbox idempotency key: session id + item position + content hash. */
export function idempotencyKey(sessionId: string, position: number, text: string): string {
  return `${sessionId}:${position}:${contentHash(text)}`;
}

/** Cosine similarity of two equal-length vectors; 0 when either is all zeros. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

/** A unit-length copy of `v` (all-zero stays all-zero). */
export function normalizeVector(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const out = new Float32Array(v.length);
  if (n === 0) return out;
  const inv = 1 / Math.sqrt(n);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv;
  return out;
}

/** Float32 vector to little-endian bytes (4 per dimension), for compact storage. */
export function vectorToBytes(v: Float32Array): Uint8Array {
  const copy = new Float32Array(v);
  return new Uint8Array(copy.buffer, copy.byteOffset, copy.byteLength);
}

/** Inverse of {@link vectorToBytes}. Throws `InvalidInputError` when the length is not a multiple of 4. */
export function bytesToVector(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0)
    throw new InvalidInputError('embedding', 'byte length is not a multiple of 4');
  const copy = new Uint8Array(bytes);
  return new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4);
}

/** JSON with object keys sorted at every level: equal values give equal strings. `undefined` fields are dropped. */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** A copy of `record` with only `keys`, in that order; a key whose value is undefined is left out. */
export function pick<T extends object, K extends keyof T>(record: T, keys: readonly K[]): Pick<T, K> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (record[k] !== undefined) out[k] = record[k];
  return out as Pick<T, K>;
}

/**
 * The block size given under its name `blockBytes` or its deprecated name `budgetBytes`, or undefined; both, with
 * different values, is an `InvalidInputError` on `field` (e.g. `config.blockBytes`).
 */
export function givenBlockBytes(
  given: { readonly blockBytes?: number | undefined; readonly budgetBytes?: number | undefined },
  field: string,
): number | undefined {
  const { blockBytes, budgetBytes } = given;
  if (blockBytes !== undefined && budgetBytes !== undefined && blockBytes !== budgetBytes) {
    throw new InvalidInputError(field, 'and budgetBytes (its deprecated name) differ: set blockBytes only');
  }
  return blockBytes ?? budgetBytes;
}
