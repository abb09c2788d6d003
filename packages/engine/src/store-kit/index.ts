/**
 * `@mem01/engine/store-kit`: what the authors of stores, extractors, embedders and bindings need beyond the consumer
 * API of `@mem01/engine`, with each contract check written once (the conformance suite then checks the behaviour):
 *
 * - the port contracts and the records they carry (types), and the errors a store throws;
 * - input checks of every port call: beliefs, audit records, outbox turns, positions (`MAX_POSITION`), search and
 *   list options, claims, appends (`validate*`, `assert*`);
 * - transcripts: the owner scope, one item encoding with one size cap, append validation, the turns an append
 *   enqueues;
 * - one list cursor, one query-term splitter (each store adds only its index's stemming), result orders;
 * - governance: operation keys, capture grants, budget charges (one all-or-nothing rule) and access counts;
 * - rows of SQL stores, forget's tombstone and transcript redaction, vectors as bytes;
 * - for extractors and embedders: the extraction records (`CandidateBelief`, `ExtractionTurn`,
 *   `ExtractionOperation`), `canonicalKey`, `normalizeScope`, provider `Usage`, and the belief value sets
 *   (`BELIEF_SOURCES`, `BELIEF_STATUSES`);
 * - for bindings (sessions, tools, servers, CLIs): `resolveConfig`, the context block's delimiters
 *   (`MEMORY_BLOCK_OPEN`, `MEMORY_BLOCK_CLOSE`) and `neutralize`, error reporting (`describeError`, `sanitize`,
 *   `sanitizeError` and their one table of credential shapes, `SECRET_PATTERNS`), and `RecallSignals`.
 * @packageDocumentation
 */

export { canonicalKey, canonicalValue, createBelief } from '../belief.js';
export { resolveConfig } from '../config.js';
export {
  CapabilityError,
  ClosedError,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  DuplicateOperationError,
  describeError,
  InvalidInputError,
  InvalidRecordError,
  LeaseLostError,
  Mem01Error,
  NotFoundError,
  SchemaTooNewError,
  SECRET_PATTERNS,
  type SecretPattern,
  StoreError,
  sanitize,
  sanitizeError,
  UnsupportedRuntimeError,
  VersionConflictError,
} from '../errors.js';
export { groundQuote, MAX_SPAN_CHARS } from '../grounding.js';
export type * from '../ports.js';
export type { RankingConfig } from '../recall.js';
export {
  FORGOTTEN_MARKER,
  type ForgetCandidates,
  type ForgetEpisode,
  type ForgetPlan,
  type ForgetTurn,
  type ForgottenBelief,
  forgetNeedles,
  mayContainNeedle,
  planForget,
  planForgetAsync,
  redactTranscriptItem,
} from '../redact.js';
export { MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN, neutralise, neutralize } from '../render.js';
export type {
  AuditEvent,
  Belief,
  BeliefKind,
  BeliefMetadata,
  BeliefOrigin,
  BeliefSource,
  BeliefStatus,
  CaptureDecision,
  Evidence,
  JsonValue,
  OutboxEntry,
  Page,
  RecallSignals,
  Scope,
  TurnRole,
  Usage,
} from '../types.js';
export { BELIEF_SOURCES, BELIEF_STATUSES } from '../types.js';
export {
  assertId,
  assertText,
  bytesToVector,
  contentHash,
  cosineSimilarity,
  idempotencyKey,
  isoNow,
  newId,
  normalizeScope,
  normalizeVector,
  sameScope,
  stableJson,
  typeOf,
  utf8Length,
  vectorToBytes,
} from '../util.js';
export * from './governance.js';
export * from './methods.js';
export * from './outbox.js';
export * from './reads.js';
export * from './rows.js';
export * from './transcript.js';
export { snapshotItem } from './transcript-item.js';
export * from './validate.js';
export * from './writes.js';
