/**
 * `@mem01/engine`: the belief engine. This root is the consumer API: the engine and its admin facade, the belief
 * model, configuration, the context block, errors, and the ports a store, extractor or embedder is passed as.
 * Store authors: `@mem01/engine/store-kit` (port contracts, input checks, codecs). Test doubles:
 * `@mem01/engine/testing`.
 * @packageDocumentation
 */

export { canonicalKey, createBelief } from './belief.js';
export type { GrantCaptureOptions } from './capture.js';
export {
  DEFAULT_CONFIG,
  type EngineBudgets,
  type EngineConfig,
  type EngineConfigInput,
  MAX_QUERY_CHARS,
  NO_BUDGETS,
  resolveConfig,
} from './config.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine.js';
export type { EngineCoreOptions, EngineEvent, EngineStats } from './engine-core.js';
export {
  AbortedError,
  BudgetExceededError,
  CapabilityError,
  CaptureNotAuthorizedError,
  ClosedError,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  describeError,
  ExtractionError,
  InvalidInputError,
  LeaseLostError,
  Mem01Error,
  type Mem01ErrorCode,
  NotFoundError,
  OperationConflictError,
  PendingWritesError,
  ProviderError,
  SchemaTooNewError,
  StoreError,
  sanitize,
  sanitizeError,
  UnsupportedRuntimeError,
  VersionConflictError,
} from './errors.js';
export type { RememberInput, RememberOptions, VersionedOptions } from './lifecycle.js';
export { MemoryAdmin, type MemoryAdminOptions } from './memory-admin.js';
export type {
  CandidateBelief,
  CaptureGrant,
  CapturePolicy,
  CaptureReview,
  ClearAllReceipt,
  Embedder,
  EngineStore,
  ExtractionOperation,
  ExtractionRequest,
  ExtractionResult,
  ExtractionTurn,
  Extractor,
  FullStore,
  ListOptions,
  Logger,
  OutboxInput,
  TranscriptStore,
} from './ports.js';
export type { RankingConfig } from './recall.js';
export type { RecallOptions, SelectedContext, SkippedId } from './recall-service.js';
export type { RememberTextOptions, RememberTextResult } from './remember-text.js';
export {
  AUTHORITY_POLICY,
  type ContextBlock,
  MEMORY_BLOCK_CLOSE,
  MEMORY_BLOCK_OPEN,
  neutralise,
  renderContextBlock,
} from './render.js';
export { MAX_POSITION } from './store-kit/validate.js';
export {
  type AuditEvent,
  BELIEF_KINDS,
  BELIEF_SOURCES,
  BELIEF_STATUSES,
  type Belief,
  type BeliefKind,
  type BeliefMetadata,
  type BeliefOrigin,
  type BeliefSource,
  type BeliefStatus,
  type CaptureDecision,
  type Evidence,
  EXTRACTABLE_KINDS,
  type JsonValue,
  type Page,
  type RecallSignals,
  type Scope,
  type ScoredBelief,
  type TurnRole,
  type Usage,
} from './types.js';
export { normalizeScope } from './util.js';
export type { AppendTranscriptOptions, AppendTranscriptResult } from './write-pipeline.js';
