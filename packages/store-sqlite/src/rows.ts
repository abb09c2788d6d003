/** Conversions between SQLite rows and engine records, and validation of records written verbatim. */
import {
  assertConfidence,
  assertId,
  assertText,
  BELIEF_KINDS,
  BELIEF_SOURCES,
  BELIEF_STATUSES,
  type Belief,
  type BeliefStatus,
  type Evidence,
  InvalidInputError,
  normalizeScope,
  type OutboxEntry,
  StoreError,
} from '@mem01/engine';

export type Row = Record<string, unknown>;

function str(row: Row, key: string): string {
  const v = row[key];
  if (typeof v !== 'string') throw new StoreError(`corrupt row: column ${key} is not text`);
  return v;
}
function strOrNull(row: Row, key: string): string | null {
  const v = row[key];
  return v === null || v === undefined ? null : String(v);
}
function num(row: Row, key: string): number {
  const v = row[key];
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new StoreError(`corrupt row: column ${key} is not a number`);
}

export function rowToBelief(row: Row): Belief {
  let evidence: Evidence[];
  try {
    evidence = JSON.parse(str(row, 'evidence')) as Evidence[];
  } catch (cause) {
    throw new StoreError('corrupt row: evidence is not JSON', { cause });
  }
  return {
    id: str(row, 'id'),
    scope: { userId: str(row, 'user_id'), namespace: str(row, 'namespace') },
    kind: str(row, 'kind') as Belief['kind'],
    subject: str(row, 'subject'),
    attribute: str(row, 'attribute'),
    value: str(row, 'value'),
    statement: str(row, 'statement'),
    confidence: num(row, 'confidence'),
    status: str(row, 'status') as BeliefStatus,
    supersedes: strOrNull(row, 'supersedes'),
    supersededBy: strOrNull(row, 'superseded_by'),
    version: num(row, 'version'),
    validFrom: strOrNull(row, 'valid_from'),
    validTo: strOrNull(row, 'valid_to'),
    storedAt: str(row, 'stored_at'),
    updatedAt: str(row, 'updated_at'),
    invalidatedAt: strOrNull(row, 'invalidated_at'),
    evidence,
    source: str(row, 'source') as Belief['source'],
  };
}

export function rowToOutboxEntry(row: Row): OutboxEntry {
  const ref = strOrNull(row, 'ref');
  return {
    id: str(row, 'id'),
    scope: { userId: str(row, 'user_id'), namespace: str(row, 'namespace') },
    sessionId: str(row, 'session_id'),
    position: num(row, 'position'),
    role: str(row, 'role') as OutboxEntry['role'],
    text: str(row, 'text'),
    at: str(row, 'at'),
    ...(ref === null ? {} : { ref }),
    idempotencyKey: str(row, 'idempotency_key'),
    acceptedAt: str(row, 'accepted_at'),
    seq: num(row, 'seq'),
    attempts: num(row, 'attempts'),
    status: str(row, 'status') as OutboxEntry['status'],
    lastError: strOrNull(row, 'last_error'),
  };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function assertTimestamp(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || !ISO.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidInputError(field, 'must be an ISO-8601 timestamp');
  }
}

export function assertTimestampOrNull(value: unknown, field: string): asserts value is string | null {
  if (value !== null && value !== undefined) assertTimestamp(value, field);
}

export function assertStatus(value: unknown, field: string): asserts value is BeliefStatus {
  if (typeof value !== 'string' || !(BELIEF_STATUSES as readonly string[]).includes(value)) {
    throw new InvalidInputError(field, `unknown status ${JSON.stringify(value)}`);
  }
}

export function assertStatuses(value: unknown, field = 'statuses'): readonly BeliefStatus[] {
  if (value === undefined) return ['active'];
  if (!Array.isArray(value) || value.length === 0)
    throw new InvalidInputError(field, 'must be a non-empty array');
  for (const s of value) assertStatus(s, field);
  return value as BeliefStatus[];
}

export function assertEvidence(value: unknown, field: string, maxBytes: number): asserts value is Evidence[] {
  if (!Array.isArray(value)) throw new InvalidInputError(field, 'must be an array');
  value.forEach((e: unknown, i) => {
    const f = `${field}[${i}]`;
    if (e === null || typeof e !== 'object') throw new InvalidInputError(f, 'must be an object');
    const ev = e as Record<string, unknown>;
    assertId(ev.sessionId, `${f}.sessionId`);
    if (typeof ev.position !== 'number' || !Number.isInteger(ev.position) || ev.position < 0) {
      throw new InvalidInputError(`${f}.position`, 'must be a non-negative integer');
    }
    if (ev.role !== 'user' && ev.role !== 'assistant')
      throw new InvalidInputError(`${f}.role`, 'must be user or assistant');
    assertText(ev.quote, `${f}.quote`, maxBytes, true);
    assertTimestamp(ev.at, `${f}.at`);
    if (ev.ref !== undefined && typeof ev.ref !== 'string')
      throw new InvalidInputError(`${f}.ref`, 'must be a string');
  });
}

/** Validates a whole belief record before it is written verbatim (commit inserts, imports). */
export function assertBelief(value: unknown, field: string, maxBytes: number): asserts value is Belief {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const b = value as Record<string, unknown>;
  assertId(b.id, `${field}.id`);
  normalizeScope(b.scope);
  if (typeof b.kind !== 'string' || !(BELIEF_KINDS as readonly string[]).includes(b.kind)) {
    throw new InvalidInputError(`${field}.kind`, `unknown kind ${JSON.stringify(b.kind)}`);
  }
  assertStatus(b.status, `${field}.status`);
  const tombstone = b.status === 'forgotten';
  assertText(b.subject, `${field}.subject`, 256, tombstone);
  assertText(b.attribute, `${field}.attribute`, 256, tombstone);
  assertText(b.value, `${field}.value`, maxBytes, tombstone);
  assertText(b.statement, `${field}.statement`, maxBytes, tombstone);
  assertConfidence(b.confidence, `${field}.confidence`);
  if (b.supersedes !== null) assertId(b.supersedes, `${field}.supersedes`);
  if (b.supersededBy !== null) assertId(b.supersededBy, `${field}.supersededBy`);
  if (typeof b.version !== 'number' || !Number.isInteger(b.version) || b.version < 1) {
    throw new InvalidInputError(`${field}.version`, 'must be a positive integer');
  }
  assertTimestampOrNull(b.validFrom, `${field}.validFrom`);
  assertTimestampOrNull(b.validTo, `${field}.validTo`);
  assertTimestamp(b.storedAt, `${field}.storedAt`);
  assertTimestamp(b.updatedAt, `${field}.updatedAt`);
  assertTimestampOrNull(b.invalidatedAt, `${field}.invalidatedAt`);
  assertEvidence(b.evidence, `${field}.evidence`, maxBytes);
  if (typeof b.source !== 'string' || !(BELIEF_SOURCES as readonly string[]).includes(b.source)) {
    throw new InvalidInputError(`${field}.source`, `unknown source ${JSON.stringify(b.source)}`);
  }
}
