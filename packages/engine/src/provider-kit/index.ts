/**
 * `@mem01/engine/provider-kit`: what the author of an extractor or an embedder needs beyond the API of
 * `@mem01/engine` (which holds the `Extractor` and `Embedder` ports and their requests and results): the records of
 * an extraction (`CandidateBelief`, `ExtractionTurn`, `ExtractionOperation`), provider `Usage`, the canonical forms
 * of belief keys and values, the quote-grounding rule (`groundQuote`, the one the engine applies to evidence), content
 * hashes and stable JSON for caches, and the scope and error-text rules.
 * @packageDocumentation
 */

export { canonicalKey, canonicalValue } from '../belief.js';
export { sanitize } from '../errors.js';
export { groundQuote } from '../grounding.js';
export type { CandidateBelief, ExtractionOperation, ExtractionTurn } from '../provider-ports.js';
export type { Usage } from '../types.js';
export { contentHash, cosineSimilarity, normalizeScope, stableJson } from '../util.js';
