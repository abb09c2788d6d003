/** Conversions between SQLite rows and engine records. Input checks are the engine's shared store-input helpers. */
import { type Belief, type BeliefStatus, type Evidence, type OutboxEntry, StoreError } from '@mem01/engine';

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
