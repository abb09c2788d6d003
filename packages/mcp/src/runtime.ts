/**
 * Which store, extractor and embedder the MCP server runs on: exactly what `memSession` would open
 * (`openMemoryRuntime` of `mem01session/runtime`, the one home of those defaults), so the agent, the CLI, the
 * inspector and this server see one memory:
 * - store: `--db` (a `postgres://` URL or a SQLite file), else `DATABASE_URL` (Postgres), else one SQLite file at
 *   `$MEM01_HOME/memory.db` (`~/.mem01/memory.db`);
 * - extractor and embedder: OpenAI when `OPENAI_API_KEY` is set, else the offline `@mem01/local` pair;
 * - the engine's settings, with the `MEM01_*` tuning of the environment.
 * The server never resumes other users' queued turns: it drains each user it serves when it first serves them.
 */
import { ConfigError, type EngineStore, type FullStore, type Logger, type MemoryEngine } from '@mem01/engine';
import { sanitize } from '@mem01/engine/store-kit';
import { openMemoryRuntime } from 'mem01session/runtime';

/** Options of {@link openMcpRuntime}. */
export interface McpRuntimeOptions {
  /** `--db`: a `postgres://`/`postgresql://` URL or a SQLite file path. Wins over `DATABASE_URL`. */
  readonly db?: string | undefined;
  /** `--pg-schema`: the Postgres schema of the mem01 tables. Default `mem01`. */
  readonly pgSchema?: string | undefined;
  /** Environment to read defaults from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Where notices and warnings go. Default: warnings and the one-line notice to stderr. */
  readonly logger?: Logger | undefined;
}

/** What the runtime runs on, without secrets. */
export interface McpRuntimeDescription {
  /** `sqlite <path>` or `postgres <url without password>`. */
  readonly store: string;
  readonly extractor: string;
  readonly embedder: string;
}

/** An open store and the engine over it. */
export interface McpRuntime {
  readonly engine: MemoryEngine;
  readonly store: EngineStore;
  readonly description: McpRuntimeDescription;
  /** Drains accepted writes, then closes the engine and the store. Idempotent. */
  close(): Promise<void>;
}

const PG_URL = /^postgres(?:ql)?:\/\//i;

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${sanitize(message)}\n`),
};

/** Opens the store, extractor, embedder and engine the options and the environment select. */
export async function openMcpRuntime(options: McpRuntimeOptions = {}): Promise<McpRuntime> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? stderrLogger;
  const db = options.db === undefined ? undefined : options.db.trim();
  if (db === '') throw new ConfigError('--db must not be empty');
  const databaseUrl = db ?? nonEmpty(env.DATABASE_URL)?.trim();
  const postgres = databaseUrl !== undefined && PG_URL.test(databaseUrl);
  if (db === undefined && databaseUrl !== undefined && !postgres) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  // `--db` and `--pg-schema` pick a store the defaults would not; it is opened here and passed in. The embedding
  // dimension the defaults would use is the store's, so it is left to the store (fixed at its first write).
  const storeLogger: Logger = { info: () => {}, warn: (m) => logger.warn(m) };
  let own: FullStore | undefined;
  let where: string;
  if (db !== undefined || (postgres && options.pgSchema !== undefined)) {
    if (postgres) {
      const pg = await loadPostgresStore();
      own = await pg.openPostgresStore({
        connectionString: databaseUrl as string,
        schema: options.pgSchema,
        dimensions: await defaultDimensions(env),
        logger: storeLogger,
      });
      where = `postgres ${sanitize(databaseUrl as string)}`;
    } else {
      const sqlite = await import('@mem01/store-sqlite');
      own = sqlite.openSqliteStore({
        path: db as string,
        dimensions: await defaultDimensions(env),
        logger: storeLogger,
      });
      where = `sqlite ${db}`;
    }
  } else if (postgres) {
    where = `postgres ${sanitize(databaseUrl as string)}`;
  } else {
    const { defaultSqlitePath } = await import('@mem01/store-sqlite/paths');
    where = `sqlite ${defaultSqlitePath(env as NodeJS.ProcessEnv)}`;
  }
  let runtime: Awaited<ReturnType<typeof openMemoryRuntime>>;
  try {
    runtime = await openMemoryRuntime({ ...(own ? { store: own } : {}), env, logger, resume: false });
  } catch (err) {
    await own?.close().catch(() => undefined);
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    engine: runtime.engine,
    store: runtime.store,
    description: {
      store: where,
      extractor: runtime.description.extractor,
      embedder: runtime.description.embedder ?? 'none',
    },
    close() {
      closing ??= (async () => {
        await runtime.close().catch(() => undefined);
        await own?.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** The embedding dimension the default embedder has: OpenAI's with a key, else the offline one's. */
async function defaultDimensions(env: Readonly<Record<string, string | undefined>>): Promise<number> {
  if (nonEmpty(env.OPENAI_API_KEY)) {
    const openai = await import('@mem01/openai');
    return openai.createOpenAIEmbedder({ env }).dimensions;
  }
  const local = await import('@mem01/local/embedder');
  return local.createLocalEmbedder().dimensions;
}

const POSTGRES_STORE = '@mem01/store-postgres';

/**
 * `@mem01/store-postgres` is an optional peer dependency: SQLite users do not install it (nor pg and kysely).
 * When it is missing, a `ConfigError` says what to install; other failures propagate.
 */
async function loadPostgresStore(): Promise<typeof import('@mem01/store-postgres')> {
  try {
    return await import('@mem01/store-postgres');
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const message = err instanceof Error ? err.message : String(err);
    if (
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      (message.includes(`'${POSTGRES_STORE}'`) || message.includes(`"${POSTGRES_STORE}"`))
    ) {
      throw new ConfigError(
        `a postgres:// database needs ${POSTGRES_STORE}, which is not installed: install it beside @mem01/mcp, e.g. \`npm i ${POSTGRES_STORE}\` (or use a SQLite file)`,
        { cause: err },
      );
    }
    throw err;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
