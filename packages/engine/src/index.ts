/**
 * `@mem01/engine`: the belief engine. This root is the consumer API: the engine and its admin facade, the belief
 * model, configuration, the context block, errors, and the ports a store, extractor or embedder is passed as.
 * What authors need beyond it, one subpath per audience: `@mem01/engine/store-kit` (stores),
 * `@mem01/engine/provider-kit` (extractors and embedders), `@mem01/engine/binding-kit` (sessions, tools, servers,
 * CLIs). Test doubles: `@mem01/engine/testing`.
 * @packageDocumentation
 */

export { createBelief } from './belief.js';
export type { BudgetUsage } from './budgets.js';
export {
  DEFAULT_CONFIG,
  type EngineBudgets,
  type EngineConfig,
  type EngineConfigInput,
  MAX_QUERY_CHARS,
} from './config.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine.js';
export type { EngineEvent } from './engine-core.js';
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
  DuplicateOperationError,
  ExtractionError,
  InvalidInputError,
  InvalidRecordError,
  LeaseLostError,
  Mem01Error,
  NotFoundError,
  OperationConflictError,
  PendingWritesError,
  ProviderError,
  SchemaTooNewError,
  StoreError,
  UnsupportedRuntimeError,
  VersionConflictError,
} from './errors.js';
export { MemoryAdmin } from './memory-admin.js';
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
  Logger,
  OutboxInput,
  Summarizer,
  SummaryRequest,
  SummaryResult,
  TranscriptStore,
} from './ports.js';
export type { RecallOptions, SelectedContext } from './recall-service.js';
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
  type BeliefSource,
  type BeliefStatus,
  type Evidence,
  EXTRACTABLE_KINDS,
  type RecallTier,
  type Scope,
  type ScoredBelief,
  type TurnRole,
} from './types.js';
