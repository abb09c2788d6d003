/**
 * `@mem01/eval`: retrieval-only evaluation of mem01 on LoCoMo-shaped data, and the report of every benchmark.
 * @packageDocumentation
 */

export {
  BM25_LABEL,
  BM25_PARAMS,
  type Bm25Baseline,
  Bm25Index,
  type Bm25Params,
  bm25Baseline,
  bm25Tokens,
  STOP_WORDS,
} from './bm25.js';
export {
  type Conversation,
  type DataReport,
  type LocomoData,
  normalizeEvidence,
  normalizeEvidenceId,
  parseLocomo,
  parseSessionDate,
  type Question,
  type Session,
  type SliceOptions,
  sliceData,
  type Turn,
} from './locomo-data.js';
export {
  type ClockMode,
  type ConversationStats,
  collapseCovered,
  type EvalOptions,
  type EvalResult,
  type EvalSystem,
  type ProgressEvent,
  provenance,
  type RefusedTurn,
  runLocomo,
  TURN_FORMATS,
  type TurnFormat,
  turnText,
} from './locomo-eval.js';
export {
  ADVERSARIAL,
  type Aggregate,
  aggregate,
  type Breakdown,
  breakdown,
  CATEGORY_NAMES,
  categoryName,
  coverage,
  percentile,
  type QuestionScore,
  scoreQuestion,
} from './metrics.js';
export {
  bm25Reference,
  LOCOMO10_SHA256,
  REFERENCE_ROWS,
  type ReferenceRow,
  TARGET_ABOVE_BASELINE_KS,
  TARGET_BLOCK_RECALL_EXCL_ADVERSARIAL,
  TARGET_RECALL10_EXCL_ADVERSARIAL,
} from './reference.js';
export {
  buildReport,
  type Comparison,
  type CrossCheck,
  compareWithBaseline,
  type LocomoReport,
  type RunInfo,
  renderMarkdown,
} from './report.js';
export {
  defaultEmbedderDimensions,
  ignoredVariables,
  isSessionDefault,
  openStore,
  openSystem,
  type Provider,
  providerEnv,
  resolveProvider,
  runtimeOptions,
  STORE_KINDS,
  type StoreHandle,
  type StoreKind,
  type Variant,
  variantLabel,
} from './systems.js';
