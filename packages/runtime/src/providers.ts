/**
 * Which extractor, summarizer and embedder memory runs with: OpenAI's when `OPENAI_API_KEY` is set, else the offline
 * pair from `@mem01/local` and the engine's extractive summarizer. The rules that choose them; the variables are read
 * in `env.ts`, the adapters opened in `open.ts`.
 */
import { ConfigError, type Embedder, type Extractor } from '@mem01/engine';
import type { ProviderSettings } from './env.js';

/** A built-in embedder to choose by name instead of the environment's default. */
export type EmbedderChoice = 'local' | 'openai';

/** The embedder option: an embedder, a built-in one by name, `null` for none, undefined for the default. */
export type EmbedderOption = Embedder | EmbedderChoice | null | undefined;

/** Which built-in provider an option resolves to, or `given` / `none`. */
export type ProviderKind = 'openai' | 'local' | 'given' | 'none';

export function extractorKind(extractor: Extractor | undefined, settings: ProviderSettings): ProviderKind {
  if (extractor !== undefined) return 'given';
  return settings.apiKey ? 'openai' : 'local';
}

export function embedderKind(embedder: EmbedderOption, settings: ProviderSettings): ProviderKind {
  if (embedder === null) return 'none';
  if (embedder === 'local') return 'local';
  if (embedder === 'openai') {
    if (!settings.apiKey) throw new ConfigError('embedder "openai" needs OPENAI_API_KEY');
    return 'openai';
  }
  if (embedder !== undefined) return 'given';
  return settings.apiKey ? 'openai' : 'local';
}

/** Throws unless `embedder` is an embedder, a built-in name, null or undefined. */
export function checkEmbedderOption(embedder: unknown): void {
  if (embedder === undefined || embedder === null) return;
  if (typeof embedder === 'string') {
    if (embedder !== 'local' && embedder !== 'openai') {
      throw new ConfigError(
        `embedder must be "local", "openai", null or an Embedder, got ${JSON.stringify(embedder)}`,
      );
    }
    return;
  }
  const e = embedder as Partial<Embedder>;
  if (typeof e !== 'object' || typeof e.embed !== 'function' || typeof e.dimensions !== 'number') {
    throw new ConfigError('embedder must implement the mem01 Embedder port (embed, dimensions, model)');
  }
}

/**
 * Which summarizer writes conversation summaries: the OpenAI one exactly when the OpenAI extractor is opened (same
 * key, base URL and model), else the engine's own offline extractive summarizer (`extractive`).
 */
export function summarizerKind(
  extractor: Extractor | undefined,
  settings: ProviderSettings,
): 'openai' | 'extractive' {
  return extractorKind(extractor, settings) === 'openai' ? 'openai' : 'extractive';
}

/** The name of the engine's offline summarizer (its `extractiveSummarizer().name`), its default. */
export const EXTRACTIVE_SUMMARIZER_NAME = 'extractive';

/** The name of the offline extractor of `@mem01/local`, known without loading its NLP libraries. */
export const LOCAL_EXTRACTOR_NAME = 'local-rules';
