/**
 * The systems under test: a store (memory, SQLite, PostgreSQL) and models (offline `@mem01/local`, or OpenAI when
 * a key is present). Store packages are imported lazily so a run only loads the driver it uses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type Embedder, type EngineStore, type Extractor } from '@mem01/engine';

export type StoreKind = 'memory' | 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['memory', 'sqlite', 'postgres'];

export interface StoreHandle {
  readonly kind: StoreKind;
  readonly store: EngineStore;
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

interface ClosableStore extends EngineStore {
  close(): Promise<void>;
}

/** The part of `@mem01/store-sqlite` the eval uses (declared here so the eval builds before that package). */
interface SqliteModule {
  openSqliteStore(options: { path: string; dimensions?: number }): ClosableStore | Promise<ClosableStore>;
}

function describe(kind: StoreKind, store: EngineStore): string {
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
    const mod = (await import('@mem01/store-sqlite')) as unknown as Partial<SqliteModule>;
    if (typeof mod.openSqliteStore !== 'function') {
      throw new ConfigError('@mem01/store-sqlite does not export openSqliteStore yet');
    }
    const dir = await mkdtemp(join(tmpdir(), 'mem01-eval-'));
    const store = await mod.openSqliteStore({ path: join(dir, 'eval.db'), dimensions: options.dimensions });
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

export interface Models {
  readonly extractor: Extractor;
  readonly embedder: Embedder | null;
  /** `local` or `openai`. */
  readonly provider: 'local' | 'openai';
  readonly extractorName: string;
  readonly embedderName: string;
  readonly dimensions: number;
}

export interface ModelOptions {
  /** Environment read for `OPENAI_API_KEY` / `OPENAI_BASE_URL` / model names. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Force a provider; default: `openai` when `OPENAI_API_KEY` is set, else `local`. */
  readonly provider?: 'local' | 'openai' | undefined;
}

/** The extractor and embedder: OpenAI when a key is present, else the offline `@mem01/local` pair. */
export async function openModels(options: ModelOptions = {}): Promise<Models> {
  const env = options.env ?? process.env;
  const provider = options.provider ?? (env.OPENAI_API_KEY ? 'openai' : 'local');
  if (provider === 'openai') {
    if (!env.OPENAI_API_KEY) throw new ConfigError('the openai provider needs OPENAI_API_KEY');
    const { createOpenAIExtractor, createOpenAIEmbedder } = await import('@mem01/openai');
    const extractor = createOpenAIExtractor({ env });
    const embedder = createOpenAIEmbedder({ env });
    return {
      extractor,
      embedder,
      provider,
      extractorName: `openai ${extractor.model}`,
      embedderName: `openai ${embedder.model} (${embedder.dimensions}-d)`,
      dimensions: embedder.dimensions,
    };
  }
  const { createLocalExtractor, createLocalEmbedder } = await import('@mem01/local');
  const extractor = createLocalExtractor();
  const embedder = createLocalEmbedder();
  return {
    extractor,
    embedder,
    provider,
    extractorName: `local ${extractor.name}`,
    embedderName: `local ${embedder.model} (${embedder.dimensions}-d)`,
    dimensions: embedder.dimensions,
  };
}
