/**
 * Generic checks of what callers pass to the {@link BeliefStore} and {@link WriteOutbox} ports, shared by every
 * store adapter so that all of them refuse the same bad input with the same `InvalidInputError`. These are contract
 * checks, not policy; a store passes its own text size limit (`maxTextBytes`).
 *
 * Validators named `validate*` return a canonical, detached copy holding only the known fields; `assert*` only check.
 */
import { assertConfidence, isBeliefKind } from '../belief.js';
import { InvalidInputError } from '../errors.js';
import type { BeliefPatch, OutboxInput, SearchOptions } from '../ports.js';
import {
  assertOriginLabel,
  assertPosition,
  assertTimestamp,
  CAPTURE_DECISIONS,
  MAX_REF_BYTES,
  validateMetadata,
} from '../store-input.js';
import {
  type AuditEvent,
  BELIEF_SOURCES,
  BELIEF_STATUSES,
  type Belief,
  type BeliefOrigin,
  type BeliefStatus,
  type CaptureDecision,
  type Evidence,
  type TurnRole,
} from '../types.js';
import { assertId, assertText, normalizeScope, typeOf } from '../util.js';

export {
  assertOriginLabel,
  assertPosition,
  assertTimestamp,
  CAPTURE_DECISIONS,
  MAX_POSITION,
  MAX_REF_BYTES,
  validateMetadata,
} from '../store-input.js';

/** Largest UTF-8 size of a belief's subject or attribute, in bytes. */
export const MAX_KEY_BYTES = 256;

/** Checks a belief's origin (`{ label, ref? }`) and returns a copy; `undefined` gives `undefined`. */
export function validateOrigin(value: unknown, field: string): BeliefOrigin | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const o = value as Record<string, unknown>;
  assertOriginLabel(o.label, `${field}.label`);
  if (o.ref !== undefined) assertText(o.ref, `${field}.ref`, MAX_REF_BYTES);
  if (typeof o.ref === 'string' && !o.ref.isWellFormed())
    throw new InvalidInputError(`${field}.ref`, 'must be well-formed Unicode');
  return { label: o.label, ...(o.ref === undefined ? {} : { ref: o.ref as string }) };
}

/** Every audit action a store accepts (the `action` union of {@link AuditEvent}). */
export const AUDIT_ACTIONS: ReadonlySet<AuditEvent['action']> = new Set<AuditEvent['action']>([
  'add',
  'confirm',
  'supersede',
  'retract',
  'forget',
  'approve',
  'reject',
  'correct',
  'erase',
  'import',
]);

/** Like {@link assertTimestamp}, but `null` and `undefined` pass. */
export function assertTimestampOrNull(
  value: unknown,
  field: string,
): asserts value is string | null | undefined {
  if (value !== null && value !== undefined) assertTimestamp(value, field);
}

/** Throws `InvalidInputError` unless `value` is an integer >= 0. */
export function assertNonNegativeInteger(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new InvalidInputError(field, `must be a non-negative integer, got ${String(value)}`);
}

/** Throws `InvalidInputError` unless `value` is an integer between 1 and `max`. */
export function assertPositiveInteger(
  value: unknown,
  field: string,
  max = Number.MAX_SAFE_INTEGER,
): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    throw new InvalidInputError(field, `must be an integer between 1 and ${max}, got ${String(value)}`);
}

/** Throws `InvalidInputError` unless `value` is a known belief status. */
export function assertStatus(value: unknown, field: string): asserts value is BeliefStatus {
  if (typeof value !== 'string' || !(BELIEF_STATUSES as readonly string[]).includes(value))
    throw new InvalidInputError(field, `unknown status ${JSON.stringify(value) ?? 'undefined'}`);
}

/** A turn role: `user` or `assistant`. */
export function assertRole(value: unknown, field: string): asserts value is TurnRole {
  if (value !== 'user' && value !== 'assistant')
    throw new InvalidInputError(
      field,
      `must be user or assistant, got ${JSON.stringify(value) ?? 'undefined'}`,
    );
}

/** The statuses to read: `['active']` when absent, otherwise a non-empty array of known statuses (a copy). */
export function assertStatuses(value: unknown, field = 'statuses'): BeliefStatus[] {
  if (value === undefined) return ['active'];
  if (!Array.isArray(value) || value.length === 0)
    throw new InvalidInputError(field, 'must be a non-empty array');
  for (const s of value) assertStatus(s, field);
  return [...(value as BeliefStatus[])];
}

/** Most grant ids a search or list may leave out. */
export const MAX_EXCLUDED_GRANTS = 100_000;

/** `excludeGrants` of a search or list, checked: distinct grant ids (none when absent). */
export function assertExcludedGrants(value: unknown, field = 'excludeGrants'): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_EXCLUDED_GRANTS)
    throw new InvalidInputError(field, `must be an array of at most ${MAX_EXCLUDED_GRANTS} grant ids`);
  value.forEach((id, i) => {
    assertId(id, `${field}[${i}]`);
  });
  return [...new Set(value as string[])];
}

/**
 * Checks search options: `limit` an integer 1..`maxLimit`, `statuses` as in {@link assertStatuses}, `excludeGrants`
 * as in {@link assertExcludedGrants}.
 */
export function validateSearchOptions(
  options: unknown,
  maxLimit = 10_000,
): { limit: number; statuses: BeliefStatus[]; excludeGrants: string[] } {
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const o = options as Partial<SearchOptions>;
  assertPositiveInteger(o.limit, 'limit', maxLimit);
  return {
    limit: o.limit,
    statuses: assertStatuses(o.statuses, 'statuses'),
    excludeGrants: assertExcludedGrants(o.excludeGrants),
  };
}

/**
 * An embedding or query vector: a non-empty `Float32Array` of finite numbers; `null` when absent. The length is
 * not checked here (the store knows its dimensions and throws `DimensionMismatchError`).
 */
export function validateEmbedding(value: unknown, field: string): Float32Array | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Float32Array))
    throw new InvalidInputError(field, `must be a Float32Array, got ${typeOf(value)}`);
  if (value.length === 0) throw new InvalidInputError(field, 'must not be empty');
  for (let i = 0; i < value.length; i++) {
    if (!Number.isFinite(value[i])) throw new InvalidInputError(field, 'must contain only finite numbers');
  }
  return value;
}

/** Checks a belief's evidence list and returns a detached copy with only the known fields. */
export function validateEvidence(value: unknown, field: string, maxTextBytes: number): Evidence[] {
  if (!Array.isArray(value)) throw new InvalidInputError(field, `must be an array, got ${typeOf(value)}`);
  return value.map((e: unknown, i) => {
    const f = `${field}[${i}]`;
    if (e === null || typeof e !== 'object') throw new InvalidInputError(f, 'must be an object');
    const ev = e as Record<string, unknown>;
    assertId(ev.sessionId, `${f}.sessionId`);
    assertPosition(ev.position, `${f}.position`);
    assertRole(ev.role, `${f}.role`);
    assertText(ev.quote, `${f}.quote`, maxTextBytes, true);
    assertTimestamp(ev.at, `${f}.at`);
    if (ev.ref !== undefined) assertText(ev.ref, `${f}.ref`, MAX_REF_BYTES, true);
    return {
      sessionId: ev.sessionId,
      position: ev.position,
      role: ev.role,
      quote: ev.quote,
      at: ev.at,
      ...(ev.ref === undefined ? {} : { ref: ev.ref as string }),
    };
  });
}

function assertIdOrNull(value: unknown, field: string): asserts value is string | null | undefined {
  if (value !== null && value !== undefined) assertId(value, field);
}

/**
 * Checks a whole belief record written verbatim (commit inserts, imports) and returns a canonical, detached copy
 * (scope with `namespace` '' when absent). A `forgotten` tombstone may have empty content; every other belief needs
 * its subject, attribute, value and statement. `maxTextBytes` bounds value, statement and evidence quotes.
 */
export function validateBelief(value: unknown, field: string, maxTextBytes: number): Belief {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const b = value as Record<string, unknown>;
  assertId(b.id, `${field}.id`);
  const scope = normalizeScope(b.scope);
  if (!isBeliefKind(b.kind))
    throw new InvalidInputError(`${field}.kind`, `unknown kind ${JSON.stringify(b.kind) ?? 'undefined'}`);
  assertStatus(b.status, `${field}.status`);
  const tombstone = b.status === 'forgotten';
  assertText(b.subject, `${field}.subject`, MAX_KEY_BYTES, tombstone);
  assertText(b.attribute, `${field}.attribute`, MAX_KEY_BYTES, tombstone);
  assertText(b.value, `${field}.value`, maxTextBytes, tombstone);
  assertText(b.statement, `${field}.statement`, maxTextBytes, tombstone);
  assertConfidence(b.confidence, `${field}.confidence`);
  assertIdOrNull(b.supersedes, `${field}.supersedes`);
  assertIdOrNull(b.supersededBy, `${field}.supersededBy`);
  assertPositiveInteger(b.version, `${field}.version`);
  assertTimestampOrNull(b.validFrom, `${field}.validFrom`);
  assertTimestampOrNull(b.validTo, `${field}.validTo`);
  assertTimestamp(b.storedAt, `${field}.storedAt`);
  assertTimestamp(b.updatedAt, `${field}.updatedAt`);
  assertTimestampOrNull(b.invalidatedAt, `${field}.invalidatedAt`);
  const evidence = validateEvidence(b.evidence, `${field}.evidence`, maxTextBytes);
  if (typeof b.source !== 'string' || !(BELIEF_SOURCES as readonly string[]).includes(b.source))
    throw new InvalidInputError(
      `${field}.source`,
      `unknown source ${JSON.stringify(b.source) ?? 'undefined'}`,
    );
  const metadata = validateMetadata(b.metadata, `${field}.metadata`);
  const origin = validateOrigin(b.origin, `${field}.origin`);
  if (tombstone && (metadata !== undefined || origin !== undefined))
    throw new InvalidInputError(`${field}`, 'a forgotten belief keeps no metadata or origin');
  if (b.accessCount !== undefined) assertNonNegativeInteger(b.accessCount, `${field}.accessCount`);
  if (b.lastAccessedAt !== undefined) assertTimestamp(b.lastAccessedAt, `${field}.lastAccessedAt`);
  if (b.grantId !== undefined) assertId(b.grantId, `${field}.grantId`);
  return {
    id: b.id,
    scope,
    kind: b.kind,
    subject: b.subject,
    attribute: b.attribute,
    value: b.value,
    statement: b.statement,
    confidence: b.confidence,
    status: b.status,
    supersedes: b.supersedes ?? null,
    supersededBy: b.supersededBy ?? null,
    version: b.version,
    validFrom: b.validFrom ?? null,
    validTo: b.validTo ?? null,
    storedAt: b.storedAt,
    updatedAt: b.updatedAt,
    invalidatedAt: b.invalidatedAt ?? null,
    evidence,
    source: b.source as Belief['source'],
    ...(metadata === undefined ? {} : { metadata }),
    ...(origin === undefined ? {} : { origin }),
    ...(b.accessCount === undefined || b.accessCount === 0 ? {} : { accessCount: b.accessCount as number }),
    ...(b.lastAccessedAt === undefined ? {} : { lastAccessedAt: b.lastAccessedAt as string }),
    ...(b.grantId === undefined ? {} : { grantId: b.grantId as string }),
  };
}

/**
 * Checks the `set` of a belief update and returns a copy with only the known fields. Status `forgotten` is refused:
 * forgetting goes through `forget()`, which also removes the content.
 */
export function validatePatch(value: unknown, field: string, maxTextBytes: number): BeliefPatch {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const p = value as Record<string, unknown>;
  assertTimestamp(p.updatedAt, `${field}.updatedAt`);
  if (p.status !== undefined) assertStatus(p.status, `${field}.status`);
  if (p.status === 'forgotten')
    throw new InvalidInputError(`${field}.status`, 'use forget() to forget a belief');
  assertIdOrNull(p.supersededBy, `${field}.supersededBy`);
  assertTimestampOrNull(p.invalidatedAt, `${field}.invalidatedAt`);
  assertTimestampOrNull(p.validTo, `${field}.validTo`);
  if (p.confidence !== undefined) assertConfidence(p.confidence, `${field}.confidence`);
  const evidence =
    p.evidence === undefined ? undefined : validateEvidence(p.evidence, `${field}.evidence`, maxTextBytes);
  return {
    updatedAt: p.updatedAt,
    ...(p.status === undefined ? {} : { status: p.status as BeliefStatus }),
    ...(p.supersededBy === undefined ? {} : { supersededBy: p.supersededBy as string | null }),
    ...(p.invalidatedAt === undefined ? {} : { invalidatedAt: p.invalidatedAt as string | null }),
    ...(p.validTo === undefined ? {} : { validTo: p.validTo as string | null }),
    ...(p.confidence === undefined ? {} : { confidence: p.confidence as number }),
    ...(evidence === undefined ? {} : { evidence }),
  };
}

/** Checks a belief update: `id`, a positive integer `expectedVersion` and its `set` (see {@link validatePatch}). */
export function validateUpdate(
  value: unknown,
  field: string,
  maxTextBytes: number,
): { id: string; expectedVersion: number; set: BeliefPatch } {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const u = value as Record<string, unknown>;
  assertId(u.id, `${field}.id`);
  assertPositiveInteger(u.expectedVersion, `${field}.expectedVersion`);
  return {
    id: u.id,
    expectedVersion: u.expectedVersion,
    set: validatePatch(u.set, `${field}.set`, maxTextBytes),
  };
}

/** Checks a content-free audit record and returns a copy with only its known fields (`beliefId` null when absent). */
export function validateAuditEvent(value: unknown, field: string): AuditEvent {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const a = value as Record<string, unknown>;
  assertTimestamp(a.at, `${field}.at`);
  const scope = normalizeScope(a.scope);
  assertIdOrNull(a.beliefId, `${field}.beliefId`);
  if (typeof a.action !== 'string' || !AUDIT_ACTIONS.has(a.action as AuditEvent['action']))
    throw new InvalidInputError(
      `${field}.action`,
      `unknown action ${JSON.stringify(a.action) ?? 'undefined'}`,
    );
  assertId(a.actor, `${field}.actor`);
  let policy: AuditEvent['policy'];
  if (a.policy !== undefined) {
    if (a.policy === null || typeof a.policy !== 'object')
      throw new InvalidInputError(`${field}.policy`, 'must be an object');
    const { revision, decision } = a.policy as { revision?: unknown; decision?: unknown };
    assertId(revision, `${field}.policy.revision`);
    if (typeof decision !== 'string' || !CAPTURE_DECISIONS.has(decision as CaptureDecision))
      throw new InvalidInputError(`${field}.policy.decision`, 'must be accept, pending or reject');
    policy = { revision, decision: decision as CaptureDecision };
  }
  return {
    at: a.at,
    scope,
    beliefId: a.beliefId ?? null,
    action: a.action as AuditEvent['action'],
    actor: a.actor,
    ...(policy === undefined ? {} : { policy }),
  };
}

/** Checks a turn to enqueue and returns a canonical copy (scope with `namespace`, only known fields). */
export function validateOutboxInput(value: unknown, field: string, maxTextBytes: number): OutboxInput {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const e = value as Record<string, unknown>;
  const scope = normalizeScope(e.scope);
  assertId(e.sessionId, `${field}.sessionId`);
  assertPosition(e.position, `${field}.position`);
  assertRole(e.role, `${field}.role`);
  assertText(e.text, `${field}.text`, maxTextBytes);
  assertTimestamp(e.at, `${field}.at`);
  if (e.ref !== undefined) assertText(e.ref, `${field}.ref`, MAX_REF_BYTES, true);
  if (e.grantId !== undefined) assertId(e.grantId, `${field}.grantId`);
  return {
    scope,
    sessionId: e.sessionId,
    position: e.position,
    role: e.role,
    text: e.text,
    at: e.at,
    ...(e.ref === undefined ? {} : { ref: e.ref as string }),
    ...(e.grantId === undefined ? {} : { grantId: e.grantId as string }),
  };
}
