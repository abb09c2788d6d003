/**
 * Checks of the write calls of the {@link BeliefStore} port (`commit`, `importBeliefs`, `forget`), written once so
 * that every store refuses a bad request the same way, before it writes anything. What only the database can tell
 * (versions, ids that exist, the one-active-per-key rule against stored beliefs, dimensions) stays in the store.
 */
import { duplicateActive, type ValidInsert, validateBelief, validateEmbedding } from '../belief-input.js';
import { DuplicateActiveBeliefError, InvalidInputError } from '../errors.js';
import type {
  BeliefUpdate,
  ClearAllReceipt,
  CommitRequest,
  EraseReceipt,
  OperationRecord,
} from '../ports.js';
import type { AuditEvent, Belief } from '../types.js';
import { assertId, normalizeScope, sameScope, typeOf } from '../util.js';
import { validateOperationRecord } from './governance.js';
import type { CanonicalScope } from './transcript.js';
import { assertPositiveInteger, assertTimestamp, validateAuditEvent, validateUpdate } from './validate.js';

export { type ImportTarget, type ValidInsert, validateImportRecords } from '../belief-input.js';

/** A commit request, checked and canonical (see {@link validateCommit}). */
export interface ValidCommit {
  readonly scope: CanonicalScope;
  readonly inserts: readonly ValidInsert[];
  readonly updates: readonly BeliefUpdate[];
  readonly audit: readonly AuditEvent[];
  /** The claim the commit completes, with its entry ids once each; null without one. */
  readonly complete: { readonly claimId: string; readonly entryIds: readonly string[] } | null;
  /** The operation key to record with the commit, checked; null without one. */
  readonly operation: OperationRecord | null;
}

/** A record of `importBeliefs` or an insert of `commit`, checked. */
export function validateInsert(value: unknown, field: string, maxTextBytes: number): ValidInsert {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const r = value as { belief?: unknown; embedding?: unknown };
  return {
    belief: validateBelief(r.belief, `${field}.belief`, maxTextBytes),
    embedding: validateEmbedding(r.embedding, `${field}.embedding`),
  };
}

/**
 * Checks a commit request: every insert, update and audit record (see `validateBelief`, `validateUpdate`,
 * `validateAuditEvent`) in the request's scope, no two active inserts on one key (`DuplicateActiveBeliefError`), and
 * the claim to complete. Missing `inserts`, `updates` or `audit` count as empty.
 */
export function validateCommit(request: CommitRequest, maxTextBytes: number): ValidCommit {
  if (request === null || typeof request !== 'object')
    throw new InvalidInputError('request', 'must be an object');
  const scope = normalizeScope(request.scope);
  const list = (value: unknown, field: string): unknown[] => {
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw new InvalidInputError(field, `must be an array, got ${typeOf(value)}`);
    return value;
  };
  const inserts = list(request.inserts, 'inserts').map((ins, i) => {
    const valid = validateInsert(ins, `inserts[${i}]`, maxTextBytes);
    if (!sameScope(valid.belief.scope, scope))
      throw new InvalidInputError(`inserts[${i}].belief.scope`, 'must equal the commit scope');
    return valid;
  });
  assertOneActivePerKey(inserts.map((i) => i.belief));
  const updates = list(request.updates, 'updates').map((u, i) =>
    validateUpdate(u, `updates[${i}]`, maxTextBytes),
  );
  const audit = list(request.audit, 'audit').map((a, i) => {
    const event = validateAuditEvent(a, `audit[${i}]`);
    if (!sameScope(event.scope, scope))
      throw new InvalidInputError(`audit[${i}].scope`, 'must equal the commit scope');
    return event;
  });
  let complete: ValidCommit['complete'] = null;
  if (request.complete !== undefined) {
    const c = request.complete as unknown;
    if (c === null || typeof c !== 'object') throw new InvalidInputError('complete', 'must be an object');
    const { claimId, entryIds } = c as { claimId?: unknown; entryIds?: unknown };
    assertId(claimId, 'complete.claimId');
    if (!Array.isArray(entryIds)) throw new InvalidInputError('complete.entryIds', 'must be an array');
    entryIds.forEach((id, i) => {
      assertId(id, `complete.entryIds[${i}]`);
    });
    complete = { claimId, entryIds: [...new Set(entryIds as string[])] };
  }
  const operation =
    request.operation === undefined ? null : validateOperationRecord(request.operation, 'operation');
  return { scope, inserts, updates, audit, complete, operation };
}

/**
 * Checks the records of `importBeliefs`. A record whose id comes again later in the same batch is dropped (the
 * first one counts, like an id already stored); no two active records share a scope and key.
 */
export function validateImport(records: unknown, maxTextBytes: number): ValidInsert[] {
  if (!Array.isArray(records))
    throw new InvalidInputError('records', `must be an array, got ${typeOf(records)}`);
  const seen = new Set<string>();
  const out: ValidInsert[] = [];
  records.forEach((r, i) => {
    const valid = validateInsert(r, `records[${i}]`, maxTextBytes);
    if (seen.has(valid.belief.id)) return;
    seen.add(valid.belief.id);
    out.push(valid);
  });
  assertOneActivePerKey(out.map((r) => r.belief));
  return out;
}

/** `forget` options, checked: when (`at`), the version the caller read, if any, and the operation to record. */
export function validateForgetOptions(options: unknown): {
  at: string;
  expectedVersion: number | null;
  operation: OperationRecord | null;
} {
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const { at, expectedVersion, operation } = options as {
    at?: unknown;
    expectedVersion?: unknown;
    operation?: unknown;
  };
  assertTimestamp(at, 'at');
  if (expectedVersion !== undefined) assertPositiveInteger(expectedVersion, 'expectedVersion');
  return {
    at,
    expectedVersion: expectedVersion ?? null,
    operation: operation === undefined ? null : validateOperationRecord(operation, 'operation'),
  };
}

/**
 * A belief's content-free tombstone: what `forget` leaves (see the `BeliefStore.forget` contract). Host metadata and
 * origin go with the content; the access count stays.
 */
export function tombstoneOf(belief: Belief, at: string): Belief {
  const { metadata: _metadata, origin: _origin, ...rest } = belief;
  return {
    ...rest,
    subject: '',
    attribute: '',
    value: '',
    statement: '',
    evidence: [],
    status: 'forgotten',
    invalidatedAt: at,
    updatedAt: at,
    version: belief.version + 1,
  };
}

/** The receipt of an erasure that found nothing (`eraseUser` of an unknown user). */
export const NOTHING_ERASED: EraseReceipt = Object.freeze({
  beliefs: 0,
  outboxEntries: 0,
  transcriptItems: 0,
  auditEvents: 0,
  operations: 0,
  grants: 0,
});

/**
 * `clearAll` as erasure user by user (so that per-user indexes follow): erases each of `users` with `erase` (the
 * store's `eraseUser` work, inside the caller's transaction) and sums the receipts. What belongs to no user
 * (transcripts without a recorded owner) is the store's to add.
 */
export function eraseEach(users: Iterable<string>, erase: (userId: string) => EraseReceipt): ClearAllReceipt {
  const total = { users: 0, ...NOTHING_ERASED };
  for (const userId of users) {
    const r = erase(userId);
    total.users++;
    total.beliefs += r.beliefs;
    total.outboxEntries += r.outboxEntries;
    total.transcriptItems += r.transcriptItems;
    total.auditEvents += r.auditEvents;
    total.operations += r.operations;
    total.grants += r.grants;
  }
  return total;
}

/** Refuses two active beliefs of one scope on one subject + attribute among `beliefs`. */
function assertOneActivePerKey(beliefs: readonly Belief[]): void {
  const clash = duplicateActive(beliefs);
  const b = clash && beliefs[clash.index];
  if (b) throw new DuplicateActiveBeliefError(b.subject, b.attribute);
}
