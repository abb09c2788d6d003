/**
 * The systems under test. Every engine the eval runs is opened by mem01session's `openMemoryRuntime`, the function
 * `memSession` opens its runtime with, so the headline is memSession's default by construction: only the store is
 * substituted (memory, a temp SQLite file, or a temp PostgreSQL schema) and the environment is reduced to what
 * selects the models. Store packages are imported lazily so a run only loads the driver it uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EngineConfigInput, type FullStore, MemoryEngine } from '@mem01/engine';
import { pickEnvironment, planRuntime, resolveStoreTarget } from '@mem01/runtime';
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
  /** PostgreSQL connection string. Default {@link evalPostgresUrl} of `process.env`. */
  readonly connectionString?: string | undefined;
  /** Keep the SQLite file / PostgreSQL schema after the run (default: removed). */
  readonly keep?: boolean | undefined;
}

/**
 * The server the PostgreSQL rows run on (in a schema of their own): the database `@mem01/runtime` resolves from
 * `env` (`DATABASE_URL`), else the local test server.
 */
export function evalPostgresUrl(env: Readonly<Record<string, string | undefined>>): string {
  const chosen = resolveStoreTarget({}, pickEnvironment(env, ['store']));
  return chosen.kind === 'postgres' ? chosen.connectionString : 'postgres://postgres@127.0.0.1:5432/test';
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
  const connectionString = options.connectionString ?? evalPostgresUrl(process.env);
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
 * The caller's environment as the eval passes it on: the variables that choose the models only (`@mem01/runtime`'s
 * `providers` group; none for `local`). Nothing else reaches the runtime: the `MEM01_*` tuning would make the
 * headline something other than the default a user gets, and the store is the eval's own (no `DATABASE_URL`,
 * `MEM01_HOME`). A tuning is measured with `--engine-config`.
 */
export function providerEnv(env: Env, provider: Provider): Record<string, string> {
  return provider === 'local' ? {} : pickEnvironment(env, ['providers']);
}

/** The variables of the caller's environment that the eval does not pass on (tuning, store), by name. */
export function ignoredVariables(env: Env): string[] {
  return Object.keys(pickEnvironment(env, ['tuning', 'store']));
}

/**
 * `openai` when asked, or when the environment selects the OpenAI models (`OPENAI_API_KEY`) and nothing is asked;
 * else `local`. Asking for `openai` without a key is the runtime's `ConfigError`.
 */
export async function resolveProvider(env: Env, provider?: Provider | undefined): Promise<Provider> {
  const models = pickEnvironment(env, ['providers']);
  const plan = await planRuntime({
    env: models,
    ...(provider === 'openai' ? { embedder: 'openai' as const } : {}),
  });
  return provider ?? (plan.provider === 'openai' ? 'openai' : 'local');
}

/** Dimensions of the embedder `openMemoryRuntime` will choose for this environment (the store is opened first). */
export async function defaultEmbedderDimensions(env: Env): Promise<number> {
  const plan = await planRuntime({ env });
  return plan.dimensions ?? 0;
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
