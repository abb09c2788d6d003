export * from './belief.js';
export * from './config.js';
export * from './engine.js';
export type { EngineCoreOptions, EngineEvent, EngineStats } from './engine-core.js';
export * from './errors.js';
export type { RememberInput, VersionedOptions } from './lifecycle.js';
export * from './memory-admin.js';
export type * from './ports.js';
export * from './recall.js';
export type { RecallOptions } from './recall-service.js';
export * from './reconcile.js';
export * from './redact.js';
export * from './render.js';
// Store-author helpers are in `@mem01/engine/store-kit`; the position bound is also a consumer's concern.
export { MAX_POSITION } from './store-kit/validate.js';
export * from './text.js';
export * from './types.js';
export * from './util.js';
export {
  type AppendTranscriptOptions,
  type AppendTranscriptResult,
  EXTRACTABLE_KINDS,
} from './write-pipeline.js';
