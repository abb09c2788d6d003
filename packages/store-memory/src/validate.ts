import {
  type AuditEvent,
  assertConfidence,
  assertId,
  assertText,
  BELIEF_SOURCES,
  BELIEF_STATUSES,
  type Belief,
  type BeliefPatch,
  type BeliefStatus,
  type Evidence,
  InvalidInputError,
  isBeliefKind,
  normalizeScope,
  type Scope,
  typeOf,
} from '@mem01/engine';

/** Upper bound on any stored text field (a store limit, not policy: the engine enforces its own smaller limit). */
export const MAX_TEXT_BYTES = 1024 * 1024;

const AUDIT_ACTIONS: ReadonlySet<string> = new Set([
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

export type CanonicalScope = { readonly userId: string; readonly namespace: string };

export function scopeKey(scope: CanonicalScope): string {
  return JSON.stringify([scope.userId, scope.namespace]);
}

export function canonicalScope(scope: unknown): CanonicalScope {
  return normalizeScope(scope);
}

export function assertTimestamp(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string')
    throw new InvalidInputError(field, `must be an ISO-8601 string, got ${typeOf(value)}`);
  if (Number.isNaN(Date.parse(value)))
    throw new InvalidInputError(field, 'is not a valid ISO-8601 timestamp');
}

function assertNullableTimestamp(value: unknown, field: string): asserts value is string | null {
  if (value !== null) assertTimestamp(value, field);
}

function assertNullableId(value: unknown, field: string): asserts value is string | null {
  if (value !== null) assertId(value, field);
}

function assertOneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  field: string,
): asserts value is T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidInputError(
      field,
      `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value) ?? 'undefined'}`,
    );
  }
}

export function assertStatuses(value: unknown, field: string): readonly BeliefStatus[] {
  if (value === undefined) return ['active'];
  if (!Array.isArray(value)) throw new InvalidInputError(field, `must be an array, got ${typeOf(value)}`);
  for (const s of value) assertOneOf(s, BELIEF_STATUSES, field);
  return value as BeliefStatus[];
}

export function assertNonNegativeInteger(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidInputError(field, `must be a non-negative integer, got ${String(value)}`);
  }
}

export function validateEvidence(value: unknown, field: string): Evidence[] {
  if (!Array.isArray(value)) throw new InvalidInputError(field, `must be an array, got ${typeOf(value)}`);
  return value.map((e: unknown, i) => {
    const f = `${field}[${i}]`;
    if (e === null || typeof e !== 'object') throw new InvalidInputError(f, 'must be an object');
    const ev = e as Record<string, unknown>;
    assertId(ev.sessionId, `${f}.sessionId`);
    assertNonNegativeInteger(ev.position, `${f}.position`);
    assertOneOf(ev.role, ['user', 'assistant'] as const, `${f}.role`);
    assertText(ev.quote, `${f}.quote`, MAX_TEXT_BYTES, true);
    assertTimestamp(ev.at, `${f}.at`);
    if (ev.ref !== undefined) assertText(ev.ref, `${f}.ref`, 1024, true);
    const out: Evidence = {
      sessionId: ev.sessionId,
      position: ev.position,
      role: ev.role,
      quote: ev.quote,
      at: ev.at,
      ...(ev.ref === undefined ? {} : { ref: ev.ref as string }),
    };
    return out;
  });
}

/** Validates a whole belief record and returns a canonical, detached copy. */
export function validateBelief(value: unknown, field: string): Belief {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const b = value as Record<string, unknown>;
  assertId(b.id, `${field}.id`);
  const scope = canonicalScope(b.scope);
  if (!isBeliefKind(b.kind))
    throw new InvalidInputError(`${field}.kind`, `unknown kind ${JSON.stringify(b.kind)}`);
  assertOneOf(b.status, BELIEF_STATUSES, `${field}.status`);
  // A forgotten tombstone has no content; every other belief needs its key and text.
  const tombstone = b.status === 'forgotten';
  assertText(b.subject, `${field}.subject`, 256, tombstone);
  assertText(b.attribute, `${field}.attribute`, 256, tombstone);
  assertText(b.value, `${field}.value`, MAX_TEXT_BYTES, tombstone);
  assertText(b.statement, `${field}.statement`, MAX_TEXT_BYTES, tombstone);
  assertConfidence(b.confidence, `${field}.confidence`);
  assertNullableId(b.supersedes, `${field}.supersedes`);
  assertNullableId(b.supersededBy, `${field}.supersededBy`);
  if (typeof b.version !== 'number' || !Number.isInteger(b.version) || b.version < 1) {
    throw new InvalidInputError(`${field}.version`, `must be a positive integer, got ${String(b.version)}`);
  }
  assertNullableTimestamp(b.validFrom, `${field}.validFrom`);
  assertNullableTimestamp(b.validTo, `${field}.validTo`);
  assertTimestamp(b.storedAt, `${field}.storedAt`);
  assertTimestamp(b.updatedAt, `${field}.updatedAt`);
  assertNullableTimestamp(b.invalidatedAt, `${field}.invalidatedAt`);
  const evidence = validateEvidence(b.evidence, `${field}.evidence`);
  assertOneOf(b.source, BELIEF_SOURCES, `${field}.source`);
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
    supersedes: b.supersedes,
    supersededBy: b.supersededBy,
    version: b.version,
    validFrom: b.validFrom,
    validTo: b.validTo,
    storedAt: b.storedAt,
    updatedAt: b.updatedAt,
    invalidatedAt: b.invalidatedAt,
    evidence,
    source: b.source,
  };
}

export function validatePatch(value: unknown, field: string): BeliefPatch {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const p = value as Record<string, unknown>;
  assertTimestamp(p.updatedAt, `${field}.updatedAt`);
  if (p.status !== undefined) assertOneOf(p.status, BELIEF_STATUSES, `${field}.status`);
  if (p.status === 'forgotten')
    throw new InvalidInputError(`${field}.status`, 'use forget() to forget a belief');
  if (p.supersededBy !== undefined) assertNullableId(p.supersededBy, `${field}.supersededBy`);
  if (p.invalidatedAt !== undefined) assertNullableTimestamp(p.invalidatedAt, `${field}.invalidatedAt`);
  if (p.validTo !== undefined) assertNullableTimestamp(p.validTo, `${field}.validTo`);
  if (p.confidence !== undefined) assertConfidence(p.confidence, `${field}.confidence`);
  const evidence = p.evidence === undefined ? undefined : validateEvidence(p.evidence, `${field}.evidence`);
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

export function validateAudit(value: unknown, field: string): AuditEvent {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const a = value as Record<string, unknown>;
  assertTimestamp(a.at, `${field}.at`);
  const scope = canonicalScope(a.scope);
  assertNullableId(a.beliefId ?? null, `${field}.beliefId`);
  if (typeof a.action !== 'string' || !AUDIT_ACTIONS.has(a.action)) {
    throw new InvalidInputError(`${field}.action`, `unknown action ${JSON.stringify(a.action)}`);
  }
  assertId(a.actor, `${field}.actor`);
  // Only the known, content-free fields are kept.
  return {
    at: a.at,
    scope,
    beliefId: (a.beliefId as string | null | undefined) ?? null,
    action: a.action as AuditEvent['action'],
    actor: a.actor,
  };
}

export function validateEmbedding(value: unknown, field: string): Float32Array | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Float32Array))
    throw new InvalidInputError(field, `must be a Float32Array, got ${typeOf(value)}`);
  for (let i = 0; i < value.length; i++) {
    if (!Number.isFinite(value[i])) throw new InvalidInputError(field, 'must contain only finite numbers');
  }
  return value;
}

export function cloneScope(scope: Scope): CanonicalScope {
  return { userId: scope.userId, namespace: scope.namespace ?? '' };
}

export function cloneBelief(b: Belief): Belief {
  return {
    ...b,
    scope: cloneScope(b.scope),
    evidence: b.evidence.map((e) => ({ ...e })),
  };
}
