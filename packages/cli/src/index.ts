/**
 * `@mem01/cli`: the `mem01` command line and the local memory inspector.
 *
 * The CLI holds no policy of its own: every lifecycle operation goes through the engine's `MemoryAdmin` (no extractor: the CLI never extracts).
 *
 * @packageDocumentation
 */

export { CliError, EXIT, UsageError } from './errors.js';
export { type Inspector, type InspectorOptions, startInspector } from './inspect/server.js';
export { type CliIo, type CliOutput, processIo } from './io.js';
export { CLI_VERSION, createProgram, run } from './program.js';
export { resolveStoreTarget, type StoreSelection, type StoreTarget } from './store-target.js';
