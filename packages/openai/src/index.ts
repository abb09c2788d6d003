/**
 * `@mem01/openai`: the OpenAI `Extractor` (one Responses API call per batch, Structured Outputs), `Summarizer` (one
 * call per conversation summary) and `Embedder` (batched, cached) for mem01, with retries, timeouts, cancellation,
 * per-user budgets and usage reporting.
 */

/** The engine's quote-grounding rule (`@mem01/engine/provider-kit`), re-exported where extractor authors found it. */
export { groundQuote } from '@mem01/engine/provider-kit';
export { OpenAIBudgetExceededError } from './budget.js';
export { credentialFingerprint, type OpenAIClientOptions } from './client.js';
export type { EmbeddingCache } from './lru-cache.js';
export {
  createOpenAIEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  type EmbeddingBudgets,
  type EmbedOptions,
  type OpenAIEmbedder,
  type OpenAIEmbedderOptions,
} from './openai-embedder.js';
export {
  createOpenAIExtractor,
  DEFAULT_LLM_MODEL,
  EXTRACTION_INSTRUCTIONS,
  type ExtractionBudgets,
  extractionTextFormat,
  type OpenAIExtractionResult,
  type OpenAIExtractor,
  type OpenAIExtractorOptions,
} from './openai-extractor.js';
export {
  createOpenAISummarizer,
  type OpenAISummarizer,
  type OpenAISummarizerOptions,
  type OpenAISummaryResult,
  SUMMARY_INSTRUCTIONS,
  summaryTextFormat,
} from './openai-summarizer.js';
export { type ExtractionOutput, ExtractionOutputSchema } from './prompt.js';
export { OpenAIAbortedError, OpenAIProviderError } from './retry.js';
export { type SummaryOutput, SummaryOutputSchema } from './summary-prompt.js';
export type { UsageEvent, UsageListener } from './usage.js';
export type { DropReason, RejectedOperation } from './validate.js';
