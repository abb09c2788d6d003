/**
 * The operator's view of memory (the CLI, the inspector): the same database, embedder and engine settings an
 * agent's runtime opens with the same options and environment, behind the engine's `MemoryAdmin` (no extractor,
 * no write pipeline: an operator never extracts, and turns queued by agents stay queued for their workers).
 */
import { existsSync } from 'node:fs';
import { type Embedder, type FullStore, MemoryAdmin, NotFoundError } from '@mem01/engine';
import { resolveSettings, type SettingOptions } from './env.js';
import { extractorName, openEmbedder, openStoreTarget, openSummarizer, storeLogger } from './open.js';
import type { MemoryRuntimeOptions, RuntimeDescription } from './resolve-runtime.js';
import { describeStoreTarget, type StoreTarget } from './store-target.js';

/** Options of {@link openMemoryAdmin}: the runtime options that choose memory, plus how to open the database. */
export interface MemoryAdminOptions
  extends SettingOptions,
    Pick<MemoryRuntimeOptions, 'extractor' | 'logger'> {
  /**
   * May create the database: a new SQLite file, or the Postgres schema (and upgrade an older one). Default false:
   * a missing SQLite file is a `NotFoundError` and nothing is created; a missing or older Postgres schema fails.
   */
  readonly create?: boolean | undefined;
  /**
   * Embedding length to fix on a new store (an import brings its own). Default: left to the store. An existing
   * store keeps its own, which the caller compares with `embedder.dimensions` when it embeds.
   */
  readonly dimensions?: number | undefined;
  /** Postgres: how long to retry a server that is not accepting connections yet. Default the store's (10 s). */
  readonly openRetryMs?: number | undefined;
}

/** An open database with the admin facade over it. */
export interface MemoryAdminRuntime {
  readonly admin: MemoryAdmin;
  readonly store: FullStore;
  /** The embedder the agent's runtime would use (recall and corrections embed with it), or null. */
  readonly embedder: Embedder | null;
  readonly target: StoreTarget;
  /** What is open, named as the agent's runtime would name it (the extractor too, which is not loaded). */
  readonly description: RuntimeDescription;
  /** Closes the admin facade and the store. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the database, embedder and engine settings {@link openMemoryRuntime} would open with the same options and
 * environment, behind a `MemoryAdmin`: what an operator reads (recall, the block, lists) is what the agent reads.
 */
export async function openMemoryAdmin(options: MemoryAdminOptions = {}): Promise<MemoryAdminRuntime> {
  const settings = resolveSettings(options);
  const target = settings.target as StoreTarget;
  if (target.kind === 'sqlite' && options.create !== true && !existsSync(target.path)) {
    throw new NotFoundError(`mem01 database ${target.path}`);
  }
  const extractor = await extractorName(options.extractor, settings.providers);
  // The store first: a wrong path or an unreachable server fails before anything else is loaded.
  const store = await openStoreTarget(target, {
    dimensions: options.dimensions,
    logger: storeLogger(options.logger),
    migrate: options.create === true,
    openRetryMs: options.openRetryMs,
  });
  let admin: MemoryAdmin;
  let embedded: Awaited<ReturnType<typeof openEmbedder>>;
  let summarization: Awaited<ReturnType<typeof openSummarizer>>;
  try {
    embedded = await openEmbedder(options.embedder, settings.providers);
    // The agent's summarizer: a summary the operator writes, or writes again after a forget, is the agent's kind.
    summarization = await openSummarizer(options.extractor, settings.providers);
    admin = new MemoryAdmin({
      store,
      embedder: embedded.embedder,
      ...(summarization.summarizer ? { summarizer: summarization.summarizer } : {}),
      config: settings.engineConfig,
      logger: options.logger,
    });
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    admin,
    store,
    embedder: embedded.embedder,
    target,
    description: {
      store: target.kind,
      location: describeStoreTarget(target),
      extractor,
      summarizer: summarization.name,
      embedder: embedded.name,
      dimensions: embedded.embedder?.dimensions ?? null,
      strict: admin.config.strict,
      blockBytes: settings.blockBytes,
      budgetBytes: settings.blockBytes,
    },
    close() {
      closing ??= (async () => {
        await admin.close().catch(() => undefined);
        await store.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}
