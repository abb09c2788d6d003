/**
 * Checks of the write calls of the {@link BeliefStore} port (`commit`, `importBeliefs`, `forget`), written once so
 * that every store refuses a bad request the same way, before it writes anything. What only the database can tell
 * (versions, ids that exist, the one-active-per-key rule against stored beliefs, dimensions) stays in the store.
 */
import { DuplicateActiveBeliefError, InvalidInputError, InvalidRecordError } from '../errors.js';
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
import {
  assertPositiveInteger,
  assertTimestamp,
  validateAuditEvent,
  validateBelief,
  validateEmbedding,
  validateUpdate,
} from './validate.js';

/** A belief to insert, checked: a canonical copy of the belief and its embedding (null without one). */
export interface ValidInsert {
  readonly belief: Belief;
  readonly embedding: Float32Array | null;
}

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

/** The first active belief of `beliefs` on the scope + subject + attribute of an earlier active one, or null. */
function duplicateActive(beliefs: readonly Belief[]): { index: number; earlier: number } | null {
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
