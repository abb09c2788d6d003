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
export * from './store-input.js';
export * from './text.js';
export * from './types.js';
export * from './util.js';
export {
  type AppendTranscriptOptions,
  type AppendTranscriptResult,
  EXTRACTABLE_KINDS,
} from './write-pipeline.js';
