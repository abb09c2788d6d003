/**
 * `@mem01/cli`: the `mem01` command line and the local memory inspector.
 *
 * The CLI holds no policy of its own: every lifecycle operation goes through the engine's `MemoryAdmin` (no extractor: the CLI never extracts).
 *
 * @packageDocumentation
 */

export { CliError, EXIT, UsageError } from './errors.js';
export {
  decodeEmbedding,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportFormatError,
  type ExportHeader,
  type ExportLine,
  encodeEmbedding,
  parseBeliefLine,
  parseHeader,
} from './export-format.js';
export { type Inspector, type InspectorOptions, startInspector } from './inspect/server.js';
export { type CliIo, type CliOutput, processIo } from './io.js';
export { CLI_VERSION, createProgram, run } from './program.js';
export { redactUrl, resolveStoreTarget, type StoreSelection, type StoreTarget } from './store-target.js';
export { beliefTimeline, describeEvent, type TimelineEvent } from './timeline.js';
