/**
 * `@mem01/local`: the offline default for mem01. No key, no network.
 *
 * - {@link LocalExtractor}: a rule-based English extractor built on compromise and chrono-node.
 * - {@link LocalEmbedder}: a deterministic feature-hashing embedder (lexical-fuzzy, not semantic).
 *
 * @packageDocumentation
 */

export {
  createLocalEmbedder,
  DEFAULT_MIN_SIMILARITY,
  LocalEmbedder,
  type LocalEmbedderOptions,
} from './local-embedder.js';
export { createLocalExtractor, LocalExtractor, type LocalExtractorOptions } from './local-extractor.js';
