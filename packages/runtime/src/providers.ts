/**
 * Which extractor and embedder memory runs with: OpenAI's when `OPENAI_API_KEY` is set, else the offline pair from
 * `@mem01/local`. Every variable that chooses them is read here, and passed to the adapters explicitly.
 */
import { createHash } from 'node:crypto';
import { ConfigError, type Embedder, type Extractor } from '@mem01/engine';

type Env = Readonly<Record<string, string | undefined>>;

/** The provider settings of the environment. Holds the key: never printed, never part of an error. */
export interface ProviderSettings {
  /** `OPENAI_API_KEY`; undefined: the offline models. */
  readonly apiKey: string | undefined;
  /** `OPENAI_BASE_URL`. */
  readonly baseURL: string | undefined;
  /** `MEM01_LLM_MODEL`: the OpenAI extraction model. */
  readonly llmModel: string | undefined;
  /** `MEM01_EMBEDDING_MODEL`: the OpenAI embedding model. */
  readonly embeddingModel: string | undefined;
}

/** Reads the provider variables (empty counts as unset). */
export function providerSettings(env: Env): ProviderSettings {
  return {
    apiKey: nonEmpty(env.OPENAI_API_KEY),
    baseURL: nonEmpty(env.OPENAI_BASE_URL)?.trim(),
    llmModel: nonEmpty(env.MEM01_LLM_MODEL)?.trim(),
    embeddingModel: nonEmpty(env.MEM01_EMBEDDING_MODEL)?.trim(),
  };
}

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

/** A fingerprint of the credentials (never the key itself), to tell runtimes with different keys apart. */
export function credentialKey(settings: ProviderSettings): string {
  if (!settings.apiKey) return 'local';
  const hash = createHash('sha256')
    .update(`mem01-runtime\u0000${settings.baseURL ?? ''}\u0000${settings.apiKey}`)
    .digest('hex')
    .slice(0, 16);
  return `openai:${hash}:${settings.llmModel ?? ''}:${settings.embeddingModel ?? ''}`;
}

/** The name of the offline extractor of `@mem01/local`, known without loading its NLP libraries. */
export const LOCAL_EXTRACTOR_NAME = 'local-rules';

/** An opened embedder and how a runtime describes it. */
export interface OpenedEmbedder {
  readonly embedder: Embedder | null;
  /** `local:<model>`, `openai:<model>`, the model of an embedder passed in, or null for none. */
  readonly name: string | null;
}

export async function openEmbedder(
  option: EmbedderOption,
  settings: ProviderSettings,
): Promise<OpenedEmbedder> {
  const kind = embedderKind(option, settings);
  if (kind === 'none') return { embedder: null, name: null };
  if (kind === 'given') {
    const embedder = option as Embedder;
    return { embedder, name: embedder.model };
  }
  if (kind === 'openai') {
    const openai = await import('@mem01/openai');
    const embedder = openai.createOpenAIEmbedder({
      apiKey: settings.apiKey,
      baseURL: settings.baseURL,
      model: settings.embeddingModel,
      env: {},
    });
    return { embedder, name: `openai:${embedder.model}` };
  }
  // The embedder alone: the extractor's NLP libraries are loaded only when extraction needs them.
  const local = await import('@mem01/local/embedder');
  const embedder = local.createLocalEmbedder();
  return { embedder, name: `local:${embedder.model}` };
}

/** An opened extractor and how a runtime describes it. */
export interface OpenedExtractor {
  readonly extractor: Extractor;
  /** `local-rules`, `openai:<model>`, or the name of an extractor passed in. */
  readonly name: string;
}

export async function openExtractor(
  option: Extractor | undefined,
  settings: ProviderSettings,
): Promise<OpenedExtractor> {
  const kind = extractorKind(option, settings);
  if (kind === 'given') {
    const extractor = option as Extractor;
    return { extractor, name: extractor.name };
  }
  if (kind === 'openai') {
    const openai = await import('@mem01/openai');
    const extractor = openai.createOpenAIExtractor({
      apiKey: settings.apiKey,
      baseURL: settings.baseURL,
      model: settings.llmModel,
      env: {},
    });
    return { extractor, name: `openai:${extractor.model}` };
  }
  const local = await import('@mem01/local');
  const extractor = local.createLocalExtractor();
  return { extractor, name: extractor.name };
}

/** The name {@link openExtractor} would give, without loading the extractor (for runtimes that never extract). */
export async function extractorName(
  option: Extractor | undefined,
  settings: ProviderSettings,
): Promise<string> {
  const kind = extractorKind(option, settings);
  if (kind === 'given') return (option as Extractor).name;
  if (kind === 'openai') {
    const openai = await import('@mem01/openai');
    return `openai:${settings.llmModel ?? openai.DEFAULT_LLM_MODEL}`;
  }
  return LOCAL_EXTRACTOR_NAME;
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
