/**
 * Checks of whole belief records, the engine's core applies them itself (an import through `MemoryAdmin`) and the
 * store kit builds its port checks on them (commit inserts, `importBeliefs`): `validateBelief` and its parts, and
 * `validateImportRecords`, the stricter check of records imported from outside. The core imports nothing from the kit.
 */
import { assertConfidence, isBeliefKind } from './belief.js';
import { InvalidInputError, InvalidRecordError } from './errors.js';
import {
  assertOriginLabel,
  assertPosition,
  assertTimestamp,
  MAX_REF_BYTES,
  validateMetadata,
} from './store-input.js';
import {
  BELIEF_SOURCES,
  BELIEF_STATUSES,
  type Belief,
  type BeliefOrigin,
  type BeliefStatus,
  type Evidence,
  type TurnRole,
} from './types.js';
import { assertId, assertText, normalizeScope, typeOf } from './util.js';

/** A belief to insert, checked: a canonical copy of the belief and its embedding (null without one). */
export interface ValidInsert {
  readonly belief: Belief;
  readonly embedding: Float32Array | null;
}

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

export function assertIdOrNull(value: unknown, field: string): asserts value is string | null | undefined {
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

/** Where the records of an import belong: one user, and one namespace of theirs or (null) any of them. */
export interface ImportTarget {
  readonly userId: string;
  readonly namespace: string | null;
}

/**
 * The fields a belief record of an import may hold (everything a read returns); any other is refused. A record over
 * `keyof Belief`, so a field added to the belief is known here at once.
 */
const BELIEF_RECORD_FIELD: Readonly<Record<keyof Belief, true>> = {
  id: true,
  scope: true,
  kind: true,
  subject: true,
  attribute: true,
  value: true,
  statement: true,
  confidence: true,
  status: true,
  supersedes: true,
  supersededBy: true,
  version: true,
  validFrom: true,
  validTo: true,
  storedAt: true,
  updatedAt: true,
  invalidatedAt: true,
  evidence: true,
  source: true,
  metadata: true,
  origin: true,
  accessCount: true,
  lastAccessedAt: true,
  grantId: true,
};
const BELIEF_RECORD_FIELDS = Object.keys(BELIEF_RECORD_FIELD);

const EVIDENCE_FIELDS = ['sessionId', 'position', 'role', 'quote', 'at', 'ref'] as const;

/**
 * Checks the records of an import from outside (a file, another store) before anything is written, and returns them
 * canonical. Stricter than {@link validateImport}, which a store applies to what it is handed: every record is a
 * whole belief ({@link validateBelief}) with an optional embedding, holds no unknown field (a misspelt field would be
 * lost), belongs to `target`, and repeats no earlier record's id; no two active records share a scope and key. The
 * first bad record throws `InvalidRecordError` naming its index and field.
 */
export function validateImportRecords(
  records: unknown,
  target: ImportTarget,
  maxTextBytes: number,
): ValidInsert[] {
  if (!Array.isArray(records))
    throw new InvalidInputError('records', `must be an array, got ${typeOf(records)}`);
  const firstIndex = new Map<string, number>();
  const out = records.map((record: unknown, i): ValidInsert => {
    try {
      return validateImportRecord(record, target, maxTextBytes);
    } catch (err) {
      if (err instanceof InvalidInputError && !(err instanceof InvalidRecordError))
        throw new InvalidRecordError(i, err.field, err.message.slice(err.field.length + 2));
      throw err;
    }
  });
  out.forEach(({ belief }, i) => {
    const earlier = firstIndex.get(belief.id);
    if (earlier !== undefined)
      throw new InvalidRecordError(i, 'belief.id', `repeats the id of record ${earlier}`);
    firstIndex.set(belief.id, i);
  });
  const clash = duplicateActive(out.map((r) => r.belief));
  if (clash !== null)
    throw new InvalidRecordError(
      clash.index,
      'belief',
      `is active on the same subject and attribute as record ${clash.earlier}`,
    );
  return out;
}

/** One record of {@link validateImportRecords}, with field names relative to the record. */
function validateImportRecord(value: unknown, target: ImportTarget, maxTextBytes: number): ValidInsert {
  assertFields(value, ['belief', 'embedding'], 'record');
  const { belief, embedding } = value as { belief?: unknown; embedding?: unknown };
  assertFields(belief, BELIEF_RECORD_FIELDS, 'belief');
  const b = belief as Record<string, unknown>;
  assertFields(b.scope, ['userId', 'namespace'], 'belief.scope');
  if (Array.isArray(b.evidence))
    b.evidence.forEach((e: unknown, i) => {
      assertFields(e, EVIDENCE_FIELDS, `belief.evidence[${i}]`);
    });
  const valid = {
    belief: validateBelief(belief, 'belief', maxTextBytes),
    embedding: validateEmbedding(embedding, 'embedding'),
  };
  const scope = normalizeScope(valid.belief.scope);
  if (scope.userId !== target.userId)
    throw new InvalidInputError(
      'belief.scope.userId',
      `${JSON.stringify(scope.userId)} is not the import's user ${JSON.stringify(target.userId)}`,
    );
  if (target.namespace !== null && scope.namespace !== target.namespace)
    throw new InvalidInputError(
      'belief.scope.namespace',
      `${JSON.stringify(scope.namespace)} is not the import's namespace ${JSON.stringify(target.namespace)}`,
    );
  return valid;
}

/** Refuses a non-object, and any own field of `value` not in `known`. */
function assertFields(value: unknown, known: readonly string[], field: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidInputError(field, `must be an object, got ${typeOf(value)}`);
  for (const k of Object.keys(value))
    if (!known.includes(k)) throw new InvalidInputError(`${field}.${k}`, 'is not a known field');
}

/** The first active belief of `beliefs` on the scope + subject + attribute of an earlier active one, or null. */
export function duplicateActive(beliefs: readonly Belief[]): { index: number; earlier: number } | null {
  const keys = new Map<string, number>();
  for (const [i, b] of beliefs.entries()) {
    if (b.status !== 'active') continue;
    const s = normalizeScope(b.scope);
    const key = JSON.stringify([s.userId, s.namespace, b.subject, b.attribute]);
    const earlier = keys.get(key);
    if (earlier !== undefined) return { index: i, earlier };
    keys.set(key, i);
  }
  return null;
}
