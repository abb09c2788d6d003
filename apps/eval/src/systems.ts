/**
 * The systems under test. Every engine the eval runs is opened by mem01session's `openMemoryRuntime`, the function
 * `memSession` opens its runtime with, so the headline is memSession's default by construction: only the store is
 * substituted (memory, a temp SQLite file, or a temp PostgreSQL schema) and the environment is reduced to what
 * selects the models. Store packages are imported lazily so a run only loads the driver it uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type EngineConfigInput, type FullStore, MemoryEngine } from '@mem01/engine';
import { type MemoryRuntimeOptions, openMemoryRuntime } from 'mem01session';
import type { AssistantTurns, ClockMode, EvalSystem } from './locomo-eval.js';

export type StoreKind = 'memory' | 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'sqlite', 'postgres'];

export interface StoreHandle {
  readonly kind: StoreKind;
  readonly store: FullStore;
  /** e.g. `memory (inverted-bm25, exact-cosine)`. */
  readonly description: string;
  /** Closes the store and removes what the run created (temp files, the PostgreSQL schema). */
  close(): Promise<void>;
  /** See `EvalSystem.settle`: PostgreSQL runs ANALYZE, as autovacuum does in a long-running deployment. */
  readonly settle?: (() => Promise<void>) | undefined;
}

export interface StoreOptions {
  readonly dimensions: number;
  /** PostgreSQL connection string. Default `DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test`. */
  readonly connectionString?: string | undefined;
  /** Keep the SQLite file / PostgreSQL schema after the run (default: removed). */
  readonly keep?: boolean | undefined;
}

function describe(kind: StoreKind, store: FullStore): string {
  const c = store.capabilities;
  return `${kind} (${c.lexicalIndex}, ${c.vectorIndex})`;
}

/** Opens a fresh, empty store of `kind`. */
export async function openStore(kind: StoreKind, options: StoreOptions): Promise<StoreHandle> {
  if (kind === 'memory') {
    const { createMemoryStore } = await import('@mem01/store-memory');
    const store = createMemoryStore({ dimensions: options.dimensions });
    return { kind, store, description: describe(kind, store), close: () => store.close() };
  }
  if (kind === 'sqlite') {
    const { openSqliteStore } = await import('@mem01/store-sqlite');
    const dir = await mkdtemp(join(tmpdir(), 'mem01-eval-'));
    const store = openSqliteStore({ path: join(dir, 'eval.db'), dimensions: options.dimensions });
    return {
      kind,
      store,
      description: describe(kind, store),
      close: async () => {
        await store.close();
        if (!options.keep) await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const { openPostgresStore } = await import('@mem01/store-postgres');
  const { default: pg } = await import('pg');
  const connectionString =
    options.connectionString ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `mem01_eval_${Date.now().toString(36)}_${process.pid}`;
  const pool = new pg.Pool({ connectionString, max: 4 });
  try {
    const store = await openPostgresStore({ pool, schema, dimensions: options.dimensions });
    return {
      kind,
      store,
      description: describe(kind, store),
      settle: () => store.analyze(),
      close: async () => {
        try {
          await store.close();
          if (!options.keep) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await pool.end();
        }
      },
    };
  } catch (err) {
    await pool.end();
    throw err;
  }
}

export type Provider = 'local' | 'openai';
type Env = Readonly<Record<string, string | undefined>>;

/**
 * The variables that choose the models (read by `openMemoryRuntime` and `@mem01/openai`). Nothing else of the
 * caller's environment reaches the runtime: `MEM01_*` tuning (`MEM01_BLOCK_BYTES` or its deprecated name `MEM01_BUDGET_BYTES`, `MEM01_RECALL_LIMIT`,
 * `MEM01_PENDING_BELOW` or its deprecated name `MEM01_MIN_CONFIDENCE`, `MEM01_EPISODIC`) would make the headline something other than the default a user gets,
 * and the store is the eval's own (no `DATABASE_URL`, `MEM01_HOME`). A tuning is measured with `--engine-config`.
 */
export const PROVIDER_VARIABLES: Readonly<Record<Provider, readonly string[]>> = {
  local: [],
  openai: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'MEM01_LLM_MODEL', 'MEM01_EMBEDDING_MODEL'],
};

/** Environment variables that would tune the engine in memSession and that the eval does not pass on. */
export const IGNORED_TUNING_VARIABLES = [
  'MEM01_BLOCK_BYTES',
  'MEM01_BUDGET_BYTES',
  'MEM01_RECALL_LIMIT',
  'MEM01_PENDING_BELOW',
  'MEM01_MIN_CONFIDENCE',
  'MEM01_EPISODIC',
] as const;

const nonEmpty = (v: string | undefined): v is string => typeof v === 'string' && v.trim() !== '';

/** `openai` when asked, or when `OPENAI_API_KEY` is set and nothing is asked; else `local`. */
export function resolveProvider(env: Env, provider?: Provider | undefined): Provider {
  const chosen = provider ?? (nonEmpty(env.OPENAI_API_KEY) ? 'openai' : 'local');
  if (chosen === 'openai' && !nonEmpty(env.OPENAI_API_KEY)) {
    throw new ConfigError('the openai provider needs OPENAI_API_KEY');
  }
  return chosen;
}

/** The environment handed to `openMemoryRuntime`: only the variables that select `provider`'s models. */
export function providerEnv(env: Env, provider: Provider): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PROVIDER_VARIABLES[provider]) {
    const v = env[name];
    if (nonEmpty(v)) out[name] = v;
  }
  return out;
}

/** Dimensions of the embedder `openMemoryRuntime` will choose for this environment (the store is opened first). */
export async function defaultEmbedderDimensions(env: Env): Promise<number> {
  if (nonEmpty(env.OPENAI_API_KEY)) {
    const { createOpenAIEmbedder } = await import('@mem01/openai');
    return createOpenAIEmbedder({ env }).dimensions;
  }
  const { createLocalEmbedder } = await import('@mem01/local');
  return createLocalEmbedder().dimensions;
}

/** What one row of the report runs: memSession's default unless a field says otherwise. */
export interface Variant {
  /** false: beliefs only (`episodic: false`, memSession's opt-out). true: the default, nothing passed. */
  readonly episodic: boolean;
  /** Engine overrides (`--engine-config`), passed as `openMemoryRuntime({ engine })`. */
  readonly engineConfig?: EngineConfigInput | undefined;
  /** `session`: the engine clock follows the conversation's dates (see {@link openSystem}). */
  readonly clock: ClockMode;
  /** `--collapse-covered`: a scoring simulation on top of recall. */
  readonly collapseCovered?: boolean | undefined;
  /** `--assistant-turns episodes`: assistant turns kept as labelled episodes (default `context`, memSession's). */
  readonly assistantTurns?: AssistantTurns | undefined;
}

/** Whether a variant is exactly what `memSession` runs with its defaults. */
export function isSessionDefault(variant: Variant): boolean {
  return (
    variant.episodic &&
    variant.engineConfig === undefined &&
    variant.clock === 'wall' &&
    !variant.collapseCovered &&
    (variant.assistantTurns ?? 'context') === 'context'
  );
}

/**
 * The `openMemoryRuntime` options of a variant. For memSession's default these are `{ store, env }` and nothing
 * else: the store is the eval's, the environment selects the models.
 */
export function runtimeOptions(
  variant: Variant,
  store: FullStore,
  env: Record<string, string>,
): MemoryRuntimeOptions {
  return {
    store,
    env,
    ...(variant.episodic ? {} : { episodic: false }),
    ...(variant.engineConfig === undefined ? {} : { engine: variant.engineConfig }),
  };
}

/**
 * Opens the engine of a variant on `handle`'s store. With the wall clock it is the runtime's own engine. The session
 * clock needs an injected clock, which `openMemoryRuntime` does not take: the runtime is opened all the same (so the
 * models and the resolved settings are memSession's), then a `MemoryEngine` is built from its extractor, embedder
 * and resolved config with the clock added, and the runtime is closed (the store stays open: it is the eval's).
 */
export async function openSystem(
  variant: Variant,
  handle: StoreHandle,
  env: Record<string, string>,
): Promise<EvalSystem & { close(): Promise<void> }> {
  const runtime = await openMemoryRuntime(runtimeOptions(variant, handle.store, env));
  const description = {
    store: handle.description,
    extractor: runtime.description.extractor,
    embedder: runtime.description.embedder,
    budgetBytes: runtime.blockBytes,
  };
  if (variant.clock === 'wall') {
    return {
      engine: runtime.engine,
      budgetBytes: runtime.blockBytes,
      description,
      engineConfig: variant.engineConfig,
      settle: handle.settle,
      close: () => runtime.close(),
    };
  }
  const { extractor, embedder, config } = runtime.engine;
  await runtime.close();
  let clockAt: number | null = null;
  const engine = new MemoryEngine({
    store: handle.store,
    extractor,
    embedder,
    config,
    clock: () => (clockAt === null ? new Date() : new Date(clockAt)),
  });
  return {
    engine,
    budgetBytes: runtime.blockBytes,
    description,
    engineConfig: variant.engineConfig,
    settle: handle.settle,
    setClock: (t) => {
      clockAt = t;
    },
    close: () => engine.close(),
  };
}

/** The report label of a variant. */
export function variantLabel(variant: Variant): string {
  const parts = [
    isSessionDefault(variant)
      ? 'memSession default (beliefs + episodes)'
      : variant.episodic
        ? 'beliefs + episodes'
        : 'beliefs only (episodic: false)',
  ];
  if (variant.engineConfig !== undefined) parts.push('engine overrides');
  if (variant.clock === 'session') parts.push('session clock');
  if (variant.collapseCovered) parts.push('collapsed');
  if (variant.assistantTurns === 'episodes') parts.push('assistant turns kept as labelled episodes');
  return parts.join(', ');
}
