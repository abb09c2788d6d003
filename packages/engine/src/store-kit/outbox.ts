/**
 * Checks of the {@link WriteOutbox} calls, written once: every store refuses the same bad claim options, failures
 * and releases with the same `InvalidInputError`, and records the same sanitised error text.
 */
import { InvalidInputError, sanitize } from '../errors.js';
import type { ClaimOptions, OutboxClaim, OutboxInput } from '../ports.js';
import { assertId, typeOf } from '../util.js';
import {
  assertNonNegativeInteger,
  assertPositiveInteger,
  assertTimestamp,
  validateOutboxInput,
} from './validate.js';

/** Largest `maxEntries` of one claim. */
export const MAX_CLAIM_ENTRIES = 10_000;
/** `lastError` (and a release's reason) is kept to this many characters. */
export const MAX_ERROR_CHARS = 2000;

/** Turns to enqueue, checked and canonical (see `validateOutboxInput`). */
export function validateEnqueue(entries: unknown, maxTextBytes: number): OutboxInput[] {
  if (!Array.isArray(entries))
    throw new InvalidInputError('entries', `must be an array, got ${typeOf(entries)}`);
  return entries.map((e, i) => validateOutboxInput(e, `entries[${i}]`, maxTextBytes));
}

/** A point in time given as ISO-8601, canonical (UTC, milliseconds) and as epoch milliseconds. */
export interface Instant {
  readonly iso: string;
  readonly ms: number;
}

function instant(value: unknown, field: string): Instant {
  assertTimestamp(value, field);
  const ms = Date.parse(value);
  return { iso: new Date(ms).toISOString(), ms };
}

/** Claim options, checked: `maxEntries` 1..10 000 (default 1), `maxChars` a whole number or null, the lease's end. */
export function validateClaimOptions(options: ClaimOptions): {
  worker: string;
  now: Instant;
  leaseUntil: Instant;
  userId: string | null;
  maxEntries: number;
  maxChars: number | null;
} {
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  assertId(options.worker, 'worker');
  assertPositiveInteger(options.leaseMs, 'leaseMs');
  const now = instant(options.now, 'now');
  if (options.userId !== undefined) assertId(options.userId, 'userId');
  const maxEntries = options.maxEntries ?? 1;
  assertPositiveInteger(maxEntries, 'maxEntries', MAX_CLAIM_ENTRIES);
  if (options.maxChars !== undefined) assertNonNegativeInteger(options.maxChars, 'maxChars');
  const until = now.ms + options.leaseMs;
  return {
    worker: options.worker,
    now,
    leaseUntil: { iso: new Date(until).toISOString(), ms: until },
    userId: options.userId ?? null,
    maxEntries,
    maxChars: options.maxChars ?? null,
  };
}

/**
 * The entries of a claim to take: from the oldest, of the first entry's namespace, up to `maxEntries` and (after the
 * first, which is always taken) `maxChars` characters of text, stopping at an entry that may not be claimed yet.
 */
export function claimBatch<E extends { readonly namespace: string; readonly text: string }>(
  pending: readonly E[],
  options: { readonly maxEntries: number; readonly maxChars: number | null },
  claimable: (entry: E) => boolean = () => true,
): E[] {
  const taken: E[] = [];
  let chars = 0;
  for (const e of pending) {
    if (taken.length >= options.maxEntries) break;
    if (taken.length > 0) {
      if (e.namespace !== taken[0]!.namespace || !claimable(e)) break;
      if (options.maxChars !== null && chars + e.text.length > options.maxChars) break;
    }
    taken.push(e);
    chars += e.text.length;
  }
  return taken;
}

/** The claim given back by `fail` or `release`, checked: its id and the ids of its entries. */
function validateClaim(claim: unknown): { claimId: string; entryIds: string[] } {
  if (claim === null || typeof claim !== 'object') throw new InvalidInputError('claim', 'must be an object');
  const c = claim as Partial<OutboxClaim>;
  assertId(c.claimId, 'claim.claimId');
  if (!Array.isArray(c.entries)) throw new InvalidInputError('claim.entries', 'must be an array');
  const entryIds = c.entries.map((e: unknown, i) => {
    const id = (e as { id?: unknown } | null)?.id;
    assertId(id, `claim.entries[${i}].id`);
    return id;
  });
  return { claimId: c.claimId, entryIds };
}

/** `fail` arguments, checked: the claim, the error as it is recorded (sanitised, shortened), attempts, retry time. */
export function validateFail(
  claim: OutboxClaim,
  error: unknown,
  options: { readonly maxAttempts: number; readonly retryAt?: string | undefined },
): { claimId: string; entryIds: string[]; lastError: string; maxAttempts: number; retryAt: Instant | null } {
  const held = validateClaim(claim);
  if (typeof error !== 'string')
    throw new InvalidInputError('error', `must be a string, got ${typeOf(error)}`);
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  assertPositiveInteger(options.maxAttempts, 'maxAttempts');
  return {
    ...held,
    lastError: sanitize(error).slice(0, MAX_ERROR_CHARS),
    maxAttempts: options.maxAttempts,
    retryAt: options.retryAt === undefined ? null : instant(options.retryAt, 'retryAt'),
  };
}

/** `release` arguments, checked: the claim, the retry time and the reason as it is recorded. */
export function validateRelease(
  claim: OutboxClaim,
  options: { readonly retryAt: string; readonly reason: string },
): { claimId: string; entryIds: string[]; retryAt: Instant; reason: string } {
  const held = validateClaim(claim);
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const reason = typeof options.reason === 'string' ? sanitize(options.reason).slice(0, MAX_ERROR_CHARS) : '';
  return { ...held, retryAt: instant(options.retryAt, 'retryAt'), reason };
}

/** `backlog` options, checked. */
export function validateBacklogOptions(options: {
  readonly now: string;
  readonly userId?: string | undefined;
}): {
  now: Instant;
  userId: string | null;
} {
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const now = instant(options.now, 'now');
  if (options.userId !== undefined) assertId(options.userId, 'userId');
  return { now, userId: options.userId ?? null };
}
