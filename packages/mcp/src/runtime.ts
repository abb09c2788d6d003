/**
 * Which store, extractor and embedder the MCP server runs on. The same rules as mem01session's
 * `resolve-runtime.ts`, so the agent, the CLI, the inspector and this server see one memory:
 * - store: `--db` (a `postgres://` URL or a SQLite file), else `DATABASE_URL` (Postgres), else one SQLite file at
 *   `defaultSqlitePath()` (`$MEM01_HOME/memory.db` or `~/.mem01/memory.db`);
 * - extractor and embedder: OpenAI when `OPENAI_API_KEY` is set, else the offline `@mem01/local` pair.
 * Kept small and apart from the server on purpose: these defaults are meant to move to one shared home.
 */
import {
  ConfigError,
  type Embedder,
  type EngineStore,
  type Extractor,
  type Logger,
  MemoryEngine,
  sanitize,
} from '@mem01/engine';

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

/** Opens the store, extractor, embedder and engine the environment selects. */
export async function openMcpRuntime(options: McpRuntimeOptions = {}): Promise<McpRuntime> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? stderrLogger;
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const db = options.db === undefined ? undefined : options.db.trim();
  if (db === '') throw new ConfigError('--db must not be empty');
  const databaseUrl = db ?? nonEmpty(env.DATABASE_URL)?.trim();
  const postgres = databaseUrl !== undefined && PG_URL.test(databaseUrl);
  if (db === undefined && databaseUrl !== undefined && !postgres) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  let extractor: Extractor;
  let embedder: Embedder;
  let embedderName: string;
  if (apiKey) {
    const openai = await import('@mem01/openai');
    extractor = openai.createOpenAIExtractor({ env });
    const created = openai.createOpenAIEmbedder({ env });
    embedder = created;
    embedderName = `openai:${created.model}`;
  } else {
    logger.info(
      'mem01: OPENAI_API_KEY is not set; using the offline extractor and embedder from @mem01/local (set OPENAI_API_KEY for model-based extraction).',
    );
    const local = await import('@mem01/local');
    extractor = local.createLocalExtractor();
    embedder = local.createLocalEmbedder();
    embedderName = `local:${embedder.model}`;
  }

  // Store notices (the vector mode chosen at open) stay quiet; warnings go on.
  const storeLogger: Logger = { info: () => {}, warn: (m) => logger.warn(m) };
  let store: EngineStore;
  let where: string;
  if (postgres) {
    const pg = await loadPostgresStore();
    store = await pg.openPostgresStore({
      connectionString: databaseUrl,
      schema: options.pgSchema,
      dimensions: embedder.dimensions,
      logger: storeLogger,
    });
    where = `postgres ${redactUrl(databaseUrl)}`;
  } else {
    const sqlite = await import('@mem01/store-sqlite');
    const path = databaseUrl ?? sqlite.defaultSqlitePath(env as NodeJS.ProcessEnv);
    store = sqlite.openSqliteStore({ path, dimensions: embedder.dimensions, logger: storeLogger });
    where = `sqlite ${path}`;
  }

  const engine = new MemoryEngine({
    store,
    extractor,
    embedder,
    workerId: `mem01-mcp-${process.pid}`,
    logger,
  });
  let closing: Promise<void> | null = null;
  return {
    engine,
    store,
    description: { store: where, extractor: extractor.name, embedder: embedderName },
    close() {
      closing ??= (async () => {
        await engine.close().catch(() => undefined);
        await store.close().catch(() => undefined);
      })();
      return closing;
    },
  };
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

/** A URL with its password (and any secret-looking parameter) replaced by `***`: safe to print. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) {
      if (/pass|secret|token|key/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    return sanitize(url).replace(/(password=)[^&\s]+/gi, '$1***');
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
