/**
 * Records as rows of a SQL store, for stores that name their columns after the fields in snake_case (both mem01
 * SQL stores do): one mapping, checked on the way out so that a corrupt row is a `StoreError`, not a wrong belief.
 */
import { StoreError } from '../errors.js';
import type { Belief, BeliefStatus, Evidence, OutboxEntry } from '../types.js';
import { normalizeScope } from '../util.js';

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** The belief columns, in the order of {@link beliefRowValues}. */
export const BELIEF_COLUMNS: readonly string[] = (
  'id user_id namespace kind subject attribute value statement confidence status supersedes superseded_by version ' +
  'valid_from valid_to stored_at updated_at invalidated_at evidence source'
).split(' ');

/** The values of a belief's row, in {@link BELIEF_COLUMNS} order (evidence as JSON text). */
export function beliefRowValues(b: Belief): (string | number | null)[] {
  const s = normalizeScope(b.scope);
  return [
    b.id,
    s.userId,
    s.namespace,
    b.kind,
    b.subject,
    b.attribute,
    b.value,
    b.statement,
    b.confidence,
    b.status,
    b.supersedes,
    b.supersededBy,
    b.version,
    b.validFrom,
    b.validTo,
    b.storedAt,
    b.updatedAt,
    b.invalidatedAt,
    JSON.stringify(b.evidence),
    b.source,
  ];
}

function str(row: Row, key: string): string {
  const v = row[key];
  if (typeof v !== 'string') throw new StoreError(`corrupt row: column ${key} is not text`);
  return v;
}

function strOrNull(row: Row, key: string): string | null {
  const v = row[key];
  return v === null || v === undefined ? null : String(v);
}

/** A number column; drivers give 64-bit integers as bigint or as decimal text. */
function num(row: Row, key: string): number {
  const v = row[key];
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new StoreError(`corrupt row: column ${key} is not a number`);
}

/** The belief of a row with the {@link BELIEF_COLUMNS}. */
export function beliefFromRow(row: Row): Belief {
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

/**
 * The outbox entry of a row with the columns `id, user_id, namespace, session_id, position, role, text, at, ref,
 * idempotency_key, accepted_at, seq, attempts, status, last_error`.
 */
export function outboxEntryFromRow(row: Row): OutboxEntry {
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
