/**
 * The input checks the engine's core applies itself (host metadata, origin labels, positions, timestamps, capture
 * decisions). The store kit builds its port checks on them and publishes them to store authors; the core imports
 * nothing from the kit.
 */
import { InvalidInputError } from './errors.js';
import type { BeliefMetadata, CaptureDecision, JsonValue } from './types.js';
import { typeOf } from './util.js';

/** Largest UTF-8 size of an evidence or outbox `ref`, in bytes. */
export const MAX_REF_BYTES = 1024;

/** Largest host metadata of a belief, as JSON in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 4096;
/** Deepest nesting of objects and arrays in host metadata (the top object is depth 1). */
export const MAX_METADATA_DEPTH = 8;
/** Longest key of host metadata, in characters. */
export const MAX_METADATA_KEY = 128;
/** An origin label: a letter or digit, then letters, digits and `._:/-`, at most 64 characters in all. */
const ORIGIN_LABEL = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
/** The decisions a capture policy can make. */
export const CAPTURE_DECISIONS: ReadonlySet<CaptureDecision> = new Set<CaptureDecision>([
  'accept',
  'pending',
  'reject',
]);

/**
 * Checks host metadata and returns a detached copy: a plain JSON object (not an array or null) of finite numbers,
 * strings, booleans, nulls, arrays and plain objects, keys of 1..128 characters, nested at most 8 deep, at most
 * {@link MAX_METADATA_BYTES} as JSON, text well-formed Unicode. `undefined` gives `undefined` (no metadata).
 */
export function validateMetadata(value: unknown, field: string): BeliefMetadata | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value))
    throw new InvalidInputError(field, `must be a plain JSON object, got ${typeOf(value)}`);
  const copy = jsonCopy(value, field, 1) as BeliefMetadata;
  const bytes = new TextEncoder().encode(JSON.stringify(copy)).byteLength;
  if (bytes > MAX_METADATA_BYTES)
    throw new InvalidInputError(field, `is ${bytes} bytes as JSON, over the limit of ${MAX_METADATA_BYTES}`);
  return copy;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function jsonCopy(value: unknown, field: string, depth: number): JsonValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidInputError(field, 'must hold only finite numbers');
    return value;
  }
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw new InvalidInputError(field, 'must be well-formed Unicode');
    return value;
  }
  if (depth > MAX_METADATA_DEPTH)
    throw new InvalidInputError(field, `must not nest deeper than ${MAX_METADATA_DEPTH}`);
  if (Array.isArray(value)) return value.map((v, i) => jsonCopy(v, `${field}[${i}]`, depth + 1));
  if (!isPlainObject(value))
    throw new InvalidInputError(field, `must hold only JSON values, got ${typeOf(value)}`);
  const out: Record<string, JsonValue> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY || !key.isWellFormed())
      throw new InvalidInputError(
        field,
        `keys must be 1..${MAX_METADATA_KEY} characters of well-formed text`,
      );
    if (v === undefined) continue;
    out[key] = jsonCopy(v, `${field}.${key}`, depth + 1);
  }
  return out;
}

/** Throws `InvalidInputError` unless `value` is an origin label (a host's source label, e.g. `crm`). */
export function assertOriginLabel(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || !ORIGIN_LABEL.test(value))
    throw new InvalidInputError(
      field,
      'must be 1..64 characters: a letter or digit, then letters, digits and . _ : / -',
    );
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Throws `InvalidInputError` unless `value` is an ISO-8601 date-time string (`2024-05-01T12:00:00.000Z`, or with an offset). */
export function assertTimestamp(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string')
    throw new InvalidInputError(field, `must be an ISO-8601 timestamp, got ${typeOf(value)}`);
  if (!ISO_8601.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidInputError(field, 'must be an ISO-8601 timestamp');
}

/**
 * Largest transcript position (and so outbox and evidence position) a turn may have: 2^31 - 1, the largest value
 * every store can hold and read back (PostgreSQL's `integer`).
 */
export const MAX_POSITION = 2 ** 31 - 1;

/** Throws `InvalidInputError` unless `value` is an integer from 0 to {@link MAX_POSITION}. */
export function assertPosition(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_POSITION)
    throw new InvalidInputError(field, `must be an integer from 0 to ${MAX_POSITION}, got ${String(value)}`);
}

/** An ISO-8601 timestamp in the one canonical form every store compares as text (`Date#toISOString()`). */
export function canonicalTimestamp(value: unknown, field: string): string {
  assertTimestamp(value, field);
  return new Date(value).toISOString();
}
