/**
 * `@mem01/engine`: the belief engine. This root is the consumer API: the engine and its admin facade, the belief
 * model, configuration, the context block, errors, and the ports a store, extractor or embedder is passed as.
 * Authors of stores, extractors, embedders and bindings: `@mem01/engine/store-kit` (port contracts, input checks,
 * codecs, extraction records, the block's delimiters, error helpers). Test doubles: `@mem01/engine/testing`.
 * @packageDocumentation
 */

export { createBelief } from './belief.js';
export type { BudgetUsage } from './budgets.js';
export type { GrantCaptureOptions } from './capture.js';
export {
  DEFAULT_CONFIG,
  type EngineBudgets,
  type EngineConfig,
  type EngineConfigInput,
  MAX_QUERY_CHARS,
} from './config.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine.js';
export type { EngineEvent, EngineStats } from './engine-core.js';
export {
  AbortedError,
  BudgetExceededError,
  CapabilityError,
  CaptureGrantEndedError,
  CaptureNotAuthorizedError,
  ClosedError,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
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
  UnsupportedRuntimeError,
  VersionConflictError,
} from './errors.js';
export type { RememberInput, RememberOptions, VersionedOptions } from './lifecycle.js';
export { MemoryAdmin, type MemoryAdminOptions } from './memory-admin.js';
export type {
  CaptureGrant,
  CapturePolicy,
  CaptureReview,
  ClearAllReceipt,
  Embedder,
  EngineStore,
  EraseReceipt,
  ExtractionRequest,
  ExtractionResult,
  Extractor,
  FullStore,
  ListOptions,
  Logger,
  OutboxInput,
  TranscriptStore,
} from './ports.js';
export type { RecallOptions, SelectedContext } from './recall-service.js';
export type { RememberTextOptions, RememberTextResult } from './remember-text.js';
export {
  AUTHORITY_POLICY,
  type ContextBlock,
  renderContextBlock,
} from './render.js';
export {
  type AuditEvent,
  BELIEF_KINDS,
  type Belief,
  type BeliefKind,
  type BeliefMetadata,
  type BeliefOrigin,
  type BeliefSource,
  type BeliefStatus,
  type CaptureDecision,
  type Evidence,
  EXTRACTABLE_KINDS,
  type Page,
  type RecallTier,
  type Scope,
  type ScoredBelief,
  type TurnRole,
} from './types.js';
export type { AppendTranscriptOptions, AppendTranscriptResult } from './write-pipeline.js';
