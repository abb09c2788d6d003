/**
 * `@mem01/engine/binding-kit`: what a binding (an Agents SDK session, MCP or CLI tools, a server, the runtime) needs
 * beyond the API of `@mem01/engine`: `resolveConfig`, the context block's delimiters (`MEMORY_BLOCK_OPEN`,
 * `MEMORY_BLOCK_CLOSE`) and `neutralize`, error reporting without secrets (`describeError`, `sanitize`,
 * `sanitizeError`), the checks of ids, scopes and texts a binding takes from its caller, transcript items and the
 * turns an append enqueues, the belief statuses, the largest page a list returns (`MAX_LIST_LIMIT`), the export format's codecs, and the check of
 * records imported from outside (`validateImportRecords`, the one `MemoryAdmin.importRecords` applies).
 * @packageDocumentation
 */

export { canonicalKey } from '../belief.js';
export { validateImportRecords } from '../belief-input.js';
export { resolveConfig } from '../config.js';
export { describeError, sanitize, sanitizeError } from '../errors.js';
export type { AppendEnqueue, BeliefInsert, ScopeSummary } from '../ports.js';
export { FORGOTTEN_MARKER } from '../redact.js';
export { MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN, neutralize } from '../render.js';
export { MAX_POSITION } from '../store-input.js';
export { MAX_LIST_LIMIT } from '../store-kit/reads.js';
export { operationConflictError, suffixMismatchError } from '../store-kit/transcript.js';
export { snapshotItem } from '../store-kit/transcript-item.js';
export { BELIEF_STATUSES } from '../types.js';
export { assertId, assertText, bytesToVector, normalizeScope, stableJson, vectorToBytes } from '../util.js';
