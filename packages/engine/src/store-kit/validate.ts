/**
 * Generic checks of what callers pass to the {@link BeliefStore} and {@link WriteOutbox} ports, shared by every
 * store adapter so that all of them refuse the same bad input with the same `InvalidInputError`. These are contract
 * checks, not policy; a store passes its own text size limit (`maxTextBytes`).
 *
 * Validators named `validate*` return a canonical, detached copy holding only the known fields; `assert*` only check.
 */
import { assertConfidence } from '../belief.js';
import {
  assertIdOrNull,
  assertPositiveInteger,
  assertRole,
  assertStatus,
  assertTimestampOrNull,
  validateEvidence,
} from '../belief-input.js';
import { InvalidInputError } from '../errors.js';
import type { BeliefPatch, OutboxInput, SearchOptions } from '../ports.js';
import { assertPosition, assertTimestamp, CAPTURE_DECISIONS, MAX_REF_BYTES } from '../store-input.js';
import type { AuditEvent, BeliefStatus, CaptureDecision } from '../types.js';
import { assertId, assertText, normalizeScope } from '../util.js';

export {
  assertIdOrNull,
  assertNonNegativeInteger,
  assertPositiveInteger,
  assertRole,
  assertStatus,
  assertTimestampOrNull,
  MAX_KEY_BYTES,
  validateBelief,
  validateEmbedding,
  validateEvidence,
  validateOrigin,
} from '../belief-input.js';
export {
  assertOriginLabel,
  assertPosition,
  assertTimestamp,
  CAPTURE_DECISIONS,
  MAX_POSITION,
  MAX_REF_BYTES,
  validateMetadata,
} from '../store-input.js';

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
