/**
 * Records as rows of a SQL store, for stores that name their columns after the fields in snake_case (both mem01
 * SQL stores do): one mapping, checked on the way out so that a corrupt row is a `StoreError`, not a wrong belief.
 */
import { StoreError } from '../errors.js';
import type { BeliefPatch, OutboxClaim } from '../ports.js';
import type { AuditEvent, Belief, BeliefStatus, Evidence, OutboxEntry, Scope } from '../types.js';
import { normalizeScope } from '../util.js';

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** The belief columns, in the order of {@link beliefRowValues}. */
export const BELIEF_COLUMNS: readonly string[] = (
  'id user_id namespace kind subject attribute value statement confidence status supersedes superseded_by version ' +
  'valid_from valid_to stored_at updated_at invalidated_at evidence source metadata origin access_count last_accessed_at ' +
  'grant_id'
).split(' ');

/**
 * The values of a belief's row, in {@link BELIEF_COLUMNS} order (evidence, metadata and origin as JSON text; metadata,
 * origin and grant id null when absent).
 */
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
    b.metadata === undefined ? null : JSON.stringify(b.metadata),
    b.origin === undefined ? null : JSON.stringify(b.origin),
    b.accessCount ?? 0,
    b.lastAccessedAt ?? null,
    b.grantId ?? null,
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

function json<T>(row: Row, key: string): T | undefined {
  const v = row[key];
  if (v === null || v === undefined) return undefined;
  try {
    return JSON.parse(String(v)) as T;
  } catch (cause) {
    throw new StoreError(`corrupt row: ${key} is not JSON`, { cause });
  }
}

/**
 * The belief of a row with the {@link BELIEF_COLUMNS}. Metadata, origin, an access count of 0, a null
 * `last_accessed_at` and a null `grant_id` are left out of the belief (as absent fields), so a belief reads back as it
 * was written.
 */
export function beliefFromRow(row: Row): Belief {
  let evidence: Evidence[];
  try {
    evidence = JSON.parse(str(row, 'evidence')) as Evidence[];
  } catch (cause) {
    throw new StoreError('corrupt row: evidence is not JSON', { cause });
  }
  const metadata = json<Belief['metadata']>(row, 'metadata');
  const origin = json<Belief['origin']>(row, 'origin');
  const accessCount =
    row.access_count === undefined || row.access_count === null ? 0 : num(row, 'access_count');
  const lastAccessedAt = strOrNull(row, 'last_accessed_at');
  const grantId = strOrNull(row, 'grant_id');
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
    ...(metadata === undefined ? {} : { metadata }),
    ...(origin === undefined ? {} : { origin }),
    ...(accessCount === 0 ? {} : { accessCount }),
    ...(lastAccessedAt === null ? {} : { lastAccessedAt }),
    ...(grantId === null ? {} : { grantId }),
  };
}

/**
 * The columns an update of a belief sets, with their values (evidence as JSON text), in one order: the fields the
 * patch gives, then `updated_at`. The store increments `version` itself, in the same statement.
 */
export function beliefPatchColumns(
  set: BeliefPatch,
): (readonly [column: string, value: string | number | null])[] {
  const cols: (readonly [string, string | number | null])[] = [];
  if (set.status !== undefined) cols.push(['status', set.status]);
  if (set.supersededBy !== undefined) cols.push(['superseded_by', set.supersededBy]);
  if (set.invalidatedAt !== undefined) cols.push(['invalidated_at', set.invalidatedAt]);
  if (set.validTo !== undefined) cols.push(['valid_to', set.validTo]);
  if (set.confidence !== undefined) cols.push(['confidence', set.confidence]);
  if (set.evidence !== undefined) cols.push(['evidence', JSON.stringify(set.evidence)]);
  cols.push(['updated_at', set.updatedAt]);
  return cols;
}

/** The audit columns of SQL stores, in the order of {@link auditRowValues}. */
export const AUDIT_COLUMNS: readonly string[] =
  'at user_id namespace belief_id action actor policy_revision policy_decision'.split(' ');

/** The values of an audit record's row, in {@link AUDIT_COLUMNS} order. */
export function auditRowValues(a: AuditEvent): (string | null)[] {
  const s = normalizeScope(a.scope);
  return [
    a.at,
    s.userId,
    s.namespace,
    a.beliefId,
    a.action,
    a.actor,
    a.policy?.revision ?? null,
    a.policy?.decision ?? null,
  ];
}

/** The audit record of a row with the {@link AUDIT_COLUMNS}. */
export function auditFromRow(row: Row): AuditEvent {
  const revision = strOrNull(row, 'policy_revision');
  const decision = strOrNull(row, 'policy_decision');
  return {
    at: str(row, 'at'),
    scope: { userId: str(row, 'user_id'), namespace: str(row, 'namespace') },
    beliefId: strOrNull(row, 'belief_id'),
    action: str(row, 'action') as AuditEvent['action'],
    actor: str(row, 'actor'),
    ...(revision === null
      ? {}
      : {
          policy: {
            revision,
            decision: (decision ?? 'accept') as NonNullable<AuditEvent['policy']>['decision'],
          },
        }),
  };
}

/**
 * The outbox entry of a row with the columns `id, user_id, namespace, session_id, position, role, text, at, ref,
 * idempotency_key, accepted_at, seq, attempts, status, last_error` (and `grant_id`, null or absent without a grant).
 */
export function outboxEntryFromRow(row: Row): OutboxEntry {
  const ref = strOrNull(row, 'ref');
  const grantId = strOrNull(row, 'grant_id');
  return {
    id: str(row, 'id'),
    scope: { userId: str(row, 'user_id'), namespace: str(row, 'namespace') },
    sessionId: str(row, 'session_id'),
    position: num(row, 'position'),
    role: str(row, 'role') as OutboxEntry['role'],
    text: str(row, 'text'),
    at: str(row, 'at'),
    ...(ref === null ? {} : { ref }),
    ...(grantId === null ? {} : { grantId }),
    idempotencyKey: str(row, 'idempotency_key'),
    acceptedAt: str(row, 'accepted_at'),
    seq: num(row, 'seq'),
    attempts: num(row, 'attempts'),
    status: str(row, 'status') as OutboxEntry['status'],
    lastError: strOrNull(row, 'last_error'),
  };
}

/**
 * The claim a SQL store returns from `claim`: the rows it has just marked claimed under `claimId` (oldest first, all
 * of `scope`), as entries with status `claimed`.
 */
export function claimFromRows(
  claimId: string,
  worker: string,
  scope: Scope,
  rows: readonly Row[],
  leaseUntil: string,
): OutboxClaim {
  return {
    claimId,
    worker,
    scope,
    entries: rows.map((r) => outboxEntryFromRow({ ...r, status: 'claimed' })),
    leaseUntil,
  };
}

/** A record's mapping to the row of a SQL store: its columns, its values in column order, and the record of a row. */
interface RowCodec<T> {
  /** The columns, in the order of {@link RowCodec.values}. */
  readonly columns: readonly string[];
  /** The values of a record's row, in column order (JSON fields as text, absent fields null). */
  values(record: T): (string | number | null)[];
  /** The record of a row with the columns; `StoreError` for a corrupt row. */
  read(row: Row): T;
}

/**
 * Beliefs as rows ({@link BELIEF_COLUMNS}, {@link beliefRowValues}, {@link beliefFromRow}), and an update's columns
 * ({@link beliefPatchColumns}).
 */
export const beliefRow: RowCodec<Belief> & {
  /** The columns an update of a belief sets, with their values, `updated_at` last; the store increments `version`. */
  readonly patchColumns: typeof beliefPatchColumns;
} = Object.freeze({
  columns: BELIEF_COLUMNS,
  values: beliefRowValues,
  read: beliefFromRow,
  patchColumns: beliefPatchColumns,
});

/** Audit records as rows ({@link AUDIT_COLUMNS}, {@link auditRowValues}, {@link auditFromRow}). */
export const auditRow: RowCodec<AuditEvent> = Object.freeze({
  columns: AUDIT_COLUMNS,
  values: auditRowValues,
  read: auditFromRow,
});
