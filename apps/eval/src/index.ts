/**
 * `@mem01/eval`: retrieval-only evaluation of mem01 on LoCoMo-shaped data, and the report of every benchmark.
 * @packageDocumentation
 */
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
  percentile,
  type QuestionScore,
  scoreQuestion,
} from './metrics.js';
export {
  bm25Reference,
  REFERENCE_ROWS,
  type ReferenceRow,
  TARGET_RECALL10_EXCL_ADVERSARIAL,
} from './reference.js';
export { buildReport, type LocomoReport, type RunInfo, renderMarkdown } from './report.js';
export {
  type Models,
  openModels,
  openStore,
  STORE_KINDS,
  type StoreHandle,
  type StoreKind,
} from './systems.js';
