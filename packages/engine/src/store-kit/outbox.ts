/**
 * Checks of the {@link WriteOutbox} calls, written once: every store refuses the same bad claim options, failures
 * and releases with the same `InvalidInputError`, and records the same sanitised error text.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
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
 * The entries of a claim to take: from the oldest, of the first entry's namespace and capture grant (`grantId`, null or
 * absent for none), up to `maxEntries` and (after the first, which is always taken) `maxChars` characters of text,
 * stopping at an entry that may not be claimed yet.
 */
export function claimBatch<
  E extends {
    readonly namespace: string;
    readonly text: string;
    readonly grantId?: string | null | undefined;
  },
>(
  pending: readonly E[],
  options: { readonly maxEntries: number; readonly maxChars: number | null },
  claimable: (entry: E) => boolean = () => true,
): E[] {
  const taken: E[] = [];
  let chars = 0;
  for (const e of pending) {
    if (taken.length >= options.maxEntries) break;
    if (taken.length > 0) {
      if (e.namespace !== taken[0]!.namespace || (e.grantId ?? null) !== (taken[0]!.grantId ?? null)) break;
      if (!claimable(e)) break;
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

/** `renew` arguments, checked: the claim, and the lease's new end (`now + leaseMs`). */
export function validateRenew(
  claim: OutboxClaim,
  options: { readonly now: string; readonly leaseMs: number },
): { claimId: string; entryIds: string[]; leaseUntil: Instant } {
  const held = validateClaim(claim);
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  assertPositiveInteger(options.leaseMs, 'leaseMs');
  const until = instant(options.now, 'now').ms + options.leaseMs;
  return { ...held, leaseUntil: { iso: new Date(until).toISOString(), ms: until } };
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

/** `drop` arguments, checked: the claim and the reason as it is recorded (sanitised, shortened, never empty). */
export function validateDrop(
  claim: OutboxClaim,
  options: { readonly reason: string },
): { claimId: string; entryIds: string[]; reason: string } {
  const held = validateClaim(claim);
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  if (typeof options.reason !== 'string' || options.reason.trim() === '')
    throw new InvalidInputError('reason', 'must be a non-empty string');
  return { ...held, reason: sanitize(options.reason).slice(0, MAX_ERROR_CHARS) };
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

/**
 * The process holding a claim, as a store with `ownerLiveness` records it. `startedAt` tells a process from a
 * predecessor that had the same pid (a container restarted: pid 1 again) and, being process-wide, treats every worker
 * thread of one process alike.
 */
export interface ProcessIdentity {
  /** Host name: processes are only compared, and their pids only probed, on the same host. */
  readonly host: string;
  readonly pid: number;
  /** When the process started, epoch milliseconds. */
  readonly startedAt: number;
  /** Random, per loaded store module: the same token is certainly this process. */
  readonly token: string;
}

/**
 * Two start times of one process (computed in different threads, or at different times, from the wall clock and the
 * process's uptime) differ by far less than this; a restarted process started later than its predecessor by more.
 */
export const PROCESS_START_TOLERANCE_MS = 1000;

/** A process identity as stored in an outbox row. */
export function encodeProcessIdentity(owner: ProcessIdentity): string {
  return JSON.stringify([owner.host, owner.pid, owner.startedAt, owner.token]);
}

/** The process identity of an outbox row, or null for a row without one (written by an older version) or garbled. */
export function decodeProcessIdentity(value: unknown): ProcessIdentity | null {
  if (typeof value !== 'string' || value === '') return null;
  try {
    const v: unknown = JSON.parse(value);
    if (!Array.isArray(v) || v.length !== 4) return null;
    const [host, pid, startedAt, token] = v as unknown[];
    if (typeof host !== 'string' || typeof token !== 'string') return null;
    if (!Number.isSafeInteger(pid) || !Number.isFinite(startedAt)) return null;
    return { host, pid: pid as number, startedAt: startedAt as number, token };
  } catch {
    return null;
  }
}

/** This process: its start is process-wide (`process.uptime()`), so every worker thread computes the same one. */
export const THIS_PROCESS: ProcessIdentity = Object.freeze({
  host: hostname(),
  pid: process.pid,
  startedAt: Math.round(Date.now() - process.uptime() * 1000),
  token: randomUUID(),
});

/** Is there a process with this pid on this host? Signal 0 only checks; EPERM means it exists under another user. */
function pidExists(pid: number): boolean {
  // 0 and negative pids address process groups: never probe them.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Has the process that holds a lease exited, as far as `self` can tell? Only a process on the same host can be told
 * dead: one with another pid when `pidExists` says there is no such process, one with this process's pid but an
 * earlier start (this process's predecessor, as after a container restart). Anything else (another host, this
 * process, a thread of it, an unknown holder) is alive until its lease runs out. `exists` probes a pid on this host
 * (by default with signal 0); this rule is written once, here.
 */
export function processHasExited(
  owner: ProcessIdentity | null,
  self: ProcessIdentity,
  exists: (pid: number) => boolean = pidExists,
): boolean {
  if (owner === null || owner.host !== self.host || owner.token === self.token) return false;
  if (owner.pid === self.pid) return Math.abs(owner.startedAt - self.startedAt) > PROCESS_START_TOLERANCE_MS;
  return !exists(owner.pid);
}

/** A store option naming the process its claims are recorded for, checked. */
export function validateProcessIdentity(value: unknown, field: string): ProcessIdentity {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const v = value as Partial<ProcessIdentity>;
  if (typeof v.host !== 'string' || v.host === '')
    throw new InvalidInputError(`${field}.host`, 'must be a non-empty string');
  assertPositiveInteger(v.pid, `${field}.pid`);
  if (typeof v.startedAt !== 'number' || !Number.isFinite(v.startedAt))
    throw new InvalidInputError(`${field}.startedAt`, 'must be a number (epoch milliseconds)');
  if (typeof v.token !== 'string' || v.token === '')
    throw new InvalidInputError(`${field}.token`, 'must be a non-empty string');
  return { host: v.host, pid: v.pid, startedAt: v.startedAt, token: v.token };
}

/**
 * Who holds a claim, for a store with `ownerLiveness`: this process (`current`), its encoding in the store
 * (`encode`, `decode`), a host's `leaseOwner` checked (`validate`), and whether a holder on this host has exited.
 */
export const processIdentity = Object.freeze({
  current: THIS_PROCESS,
  encode: encodeProcessIdentity,
  decode: decodeProcessIdentity,
  validate: validateProcessIdentity,
  hasExited: processHasExited,
});
