/**
 * `@mem01/engine/store-kit`: what a store author needs beyond the API of `@mem01/engine` (which holds the ports,
 * records and errors), with each contract rule written once (the conformance suite then checks the behaviour):
 *
 * - {@link storeClass} binds role modules into a store and runs every port method's input checks from one table, so
 *   a role module receives its arguments checked and canonical ({@link Checked});
 * - the records of port calls a store reads and returns (`StoreCapabilities`, `StoreInfo`, `BeliefPatch`, …);
 * - transcripts: the item encoding, the owner rule, the turns an append enqueues, the errors a transcript throws;
 * - one list cursor ({@link listPage}), one query splitting ({@link contentStems}), result orders, scope summaries;
 * - forget's plan, tombstone and transcript redaction; erasure receipts; budget charges (one all-or-nothing rule),
 *   grant validity; claim liveness across processes ({@link processHasExited});
 * - the rows of SQL stores and vectors as bytes; ids, timestamps and idempotency keys.
 *
 * Extractor and embedder authors: `@mem01/engine/provider-kit`. Bindings (sessions, tools, servers, CLIs):
 * `@mem01/engine/binding-kit`.
 * @packageDocumentation
 */

export { describeError, sanitize } from '../errors.js';
export type {
  BeliefInsert,
  BeliefPatch,
  OperationRecord,
  ScopeSummary,
  StoreCapabilities,
  StoreInfo,
} from '../ports.js';
export {
  FORGOTTEN_MARKER,
  type ForgetCandidates,
  type ForgetPlan,
  mayContainNeedle,
  planForget,
  planForgetAsync,
  redactTranscriptItem,
} from '../redact.js';
export { MAX_POSITION } from '../store-input.js';
export { contentStems } from '../text.js';
export type { OutboxEntry } from '../types.js';
export {
  assertId,
  bytesToVector,
  cosineSimilarity,
  idempotencyKey,
  isoNow,
  newId,
  normalizeScope,
  normalizeVector,
  vectorToBytes,
} from '../util.js';
export { applyCharges, grantFromRow, grantOrder, grantValidAt, operationFromRow } from './governance.js';
export { type Checked, type RoleMethod, type StoreMethod, storeClass } from './methods.js';
export {
  claimBatch,
  type ProcessIdentity,
  processIdentity,
} from './outbox.js';
export { historyOrder, hitOrder, listPage, scopeSummaries } from './reads.js';
export { auditRow, beliefRow, claimFromRows, outboxEntryFromRow, type Row } from './rows.js';
export {
  appendTurns,
  assertSessionOwner,
  decodeItem,
  mayUseSession,
  operationConflictError,
  suffixMatches,
  suffixMismatchError,
} from './transcript.js';
export { assertPositiveInteger } from './validate.js';
export { eraseEach, NOTHING_ERASED, tombstoneOf } from './writes.js';
