/**
 * Opening what the settings name: the store (each adapter imported only when used), the extractor, the summarizer and
 * the embedder (`@mem01/openai` or `@mem01/local`, loaded on demand), the engine over them, and the one-line notice of
 * the offline models.
 */
import {
  type Embedder,
  type EngineStore,
  type Extractor,
  type FullStore,
  type Logger,
  MemoryEngine,
  type Summarizer,
} from '@mem01/engine';
import type { ProviderSettings, ResolvedSettings } from './env.js';
import { loadPostgresStore } from './peers.js';
import {
  type EmbedderOption,
  EXTRACTIVE_SUMMARIZER_NAME,
  embedderKind,
  extractorKind,
  LOCAL_EXTRACTOR_NAME,
  summarizerKind,
} from './providers.js';
import type { MemoryRuntime, MemoryRuntimeOptions } from './resolve-runtime.js';
import { describeStoreTarget, type StoreTarget } from './store-target.js';

let noticeShown = false;

/** Opens the runtime of `options` as `settings` resolved them; on a failure, closes what it opened. */
export async function openRuntime(
  options: MemoryRuntimeOptions,
  settings: ResolvedSettings,
): Promise<MemoryRuntime> {
  const { providers, target, blockBytes, engineConfig } = settings;
  const owned: Array<() => Promise<void>> = [];
  const closeOwned = async () => {
    for (const close of owned.reverse()) await close().catch(() => undefined);
  };
  try {
    if (
      extractorKind(options.extractor, providers) === 'local' ||
      embedderKind(options.embedder, providers) === 'local'
    ) {
      if (!providers.apiKey) showNotice(options.logger);
    }
    const embedded = await openEmbedder(options.embedder, providers);
    const extraction = await openExtractor(options.extractor, providers);
    const summarization = await openSummarizer(options.extractor, providers);
    let store: EngineStore;
    let storeName: string;
    let location: string;
    if (options.store) {
      store = options.store;
      storeName = store.name;
      location = store.name;
    } else {
      const where = target as StoreTarget;
      const opened = await openStoreTarget(where, {
        dimensions: embedded.embedder?.dimensions,
        logger: storeLogger(options.logger),
      });
      owned.push(() => opened.close());
      store = opened;
      storeName = where.kind;
      location = describeStoreTarget(where);
    }
    const transcript = options.transcript ?? (store as FullStore);
    const engine = new MemoryEngine({
      store,
      transcript,
      extractor: extraction.extractor,
      embedder: embedded.embedder,
      ...(summarization.summarizer ? { summarizer: summarization.summarizer } : {}),
      config: engineConfig,
      logger: options.logger,
    });
    // Turns accepted before a crash are still queued in a durable store: process them in the background.
    const resumed =
      options.resume === false
        ? Promise.resolve()
        : engine.resume().catch((err: unknown) => {
            options.logger?.warn(`mem01: resuming queued extraction failed: ${String(err)}`);
          });
    let closing: Promise<void> | null = null;
    return {
      engine,
      store,
      transcript,
      blockBytes,
      budgetBytes: blockBytes,
      logger: options.logger,
      description: {
        store: storeName,
        location,
        extractor: extraction.name,
        summarizer: summarization.name,
        embedder: embedded.name,
        dimensions: embedded.embedder?.dimensions ?? null,
        strict: engine.config.strict,
        blockBytes,
        budgetBytes: blockBytes,
      },
      close() {
        closing ??= (async () => {
          await resumed;
          await engine.close();
          await closeOwned();
        })();
        return closing;
      },
    };
  } catch (err) {
    await closeOwned();
    throw err;
  }
}

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
      // null: the OpenAI API, not whatever the process environment says; the environment is read here only.
      baseURL: settings.baseURL ?? null,
      model: settings.embeddingModel,
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
      baseURL: settings.baseURL ?? null,
      model: settings.llmModel,
    });
    return { extractor, name: `openai:${extractor.model}` };
  }
  const local = await import('@mem01/local');
  const extractor = local.createLocalExtractor();
  return { extractor, name: extractor.name };
}

/** An opened summarizer and how a runtime describes it. */
export interface OpenedSummarizer {
  /** The OpenAI summarizer, or undefined for the engine's default (its offline extractive summarizer). */
  readonly summarizer: Summarizer | undefined;
  /** `openai:<model>` or `extractive`. */
  readonly name: string;
}

/**
 * The summarizer that goes with the extractor (see `summarizerKind`): with the OpenAI extractor, the OpenAI summarizer
 * on the same key, base URL and model; otherwise none, so the engine keeps its offline extractive one. Building it
 * sends nothing.
 */
export async function openSummarizer(
  extractor: Extractor | undefined,
  settings: ProviderSettings,
): Promise<OpenedSummarizer> {
  if (summarizerKind(extractor, settings) === 'extractive') {
    return { summarizer: undefined, name: EXTRACTIVE_SUMMARIZER_NAME };
  }
  const openai = await import('@mem01/openai');
  const summarizer = openai.createOpenAISummarizer({
    apiKey: settings.apiKey,
    baseURL: settings.baseURL ?? null,
    model: settings.llmModel,
  });
  return { summarizer, name: `openai:${summarizer.model}` };
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

/** How {@link openStoreTarget} opens a database. */
export interface OpenStoreOptions {
  /** Fixes the embedding length of a new store; an existing store with another length is refused. */
  readonly dimensions?: number | undefined;
  /**
   * Postgres: create or upgrade the schema when opening (default true). With false a schema that is missing or
   * older fails instead. A SQLite file is always brought up to date.
   */
  readonly migrate?: boolean | undefined;
  /** Postgres: how long to retry a server that is not accepting connections yet (the store's default: 10 s). */
  readonly openRetryMs?: number | undefined;
  /** The store's notices and warnings. */
  readonly logger?: Logger | undefined;
}

/** Opens the store of a target. Each adapter is imported only when used. */
export async function openStoreTarget(
  target: StoreTarget,
  options: OpenStoreOptions = {},
): Promise<FullStore> {
  if (target.kind === 'sqlite') {
    const sqlite = await import('@mem01/store-sqlite');
    return sqlite.openSqliteStore({
      path: target.path,
      ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }
  const pg = await loadPostgresStore();
  return pg.openPostgresStore({
    connectionString: target.connectionString,
    ...(target.schema === undefined ? {} : { schema: target.schema }),
    ...(options.dimensions === undefined ? {} : { dimensions: options.dimensions }),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.migrate === undefined ? {} : { migrate: options.migrate }),
    ...(options.openRetryMs === undefined ? {} : { openRetryMs: options.openRetryMs }),
  });
}

/** @internal A store's own notices (the vector mode it chose) are dropped; its warnings go to the logger. */
export function storeLogger(logger: Logger | undefined): Logger {
  return {
    info: () => {},
    warn: (message) => (logger ? logger.warn(message) : process.stderr.write(`${message}\n`)),
  };
}

function showNotice(logger: Logger | undefined): void {
  if (noticeShown) return;
  noticeShown = true;
  const line =
    'mem01: OPENAI_API_KEY is not set; using the offline extractor and embedder from @mem01/local (set OPENAI_API_KEY for model-based extraction).';
  if (logger) logger.info(line);
  else process.stderr.write(`${line}\n`);
}

/** For tests: lets the once-per-process notice show again. */
export function resetNoticeForTests(): void {
  noticeShown = false;
}
