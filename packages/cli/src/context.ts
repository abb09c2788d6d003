/** Opens the selected store and an engine over it for one command, and closes both afterwards. */
import { existsSync } from 'node:fs';
import { type Embedder, type FullStore, MemoryAdmin, type Scope } from '@mem01/engine';
import { budgetsFromEnv, normalizeScope, resolveConfig, sanitize } from '@mem01/engine/store-kit';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { describeTarget, redactUrl, resolveStoreTarget, type StoreTarget } from './store-target.js';

/** Options every command shares (commander's global options). */
export interface GlobalOptions {
  readonly db?: string | undefined;
  readonly store?: string | undefined;
  readonly namespace?: string | undefined;
  readonly json?: boolean | undefined;
  readonly embedder?: string | undefined;
  /** `--pg-schema`: the Postgres schema holding the tables (default `mem01`). */
  readonly pgSchema?: string | undefined;
}

export interface CliContext {
  readonly io: CliIo;
  readonly json: boolean;
  readonly namespace: string | undefined;
  readonly target: StoreTarget;
  /** Printable description of the target, without secrets. */
  readonly where: string;
  readonly store: FullStore;
  readonly engine: MemoryAdmin;
  readonly embedder: Embedder | null;
  /** The scope of `--user` in `--namespace`. */
  scope(userId: string): Scope;
}

export type EmbedderChoice = 'local' | 'none';

export function parseEmbedderChoice(value: string | undefined): EmbedderChoice {
  const v = (value ?? 'local').trim().toLowerCase();
  if (v !== 'local' && v !== 'none')
    throw new UsageError(`--embedder must be "local" or "none", got ${JSON.stringify(value)}`);
  return v;
}

/** The embedder recall and corrections use. It must be the one the data was written with. */
export async function loadEmbedder(choice: EmbedderChoice): Promise<Embedder | null> {
  if (choice === 'none') return null;
  // The embedder alone: loading the extractor's NLP libraries would slow every command down.
  const local = await import('@mem01/local/embedder');
  return local.createLocalEmbedder();
}

/** Store notices (the vector mode chosen at open) stay quiet; warnings go to stderr without secrets. */
function quietLogger(io: CliIo | undefined) {
  return {
    info: () => {},
    warn: (m: string) => {
      (io?.stderr ?? process.stderr).write(`warning: ${sanitize(m)}\n`);
    },
  };
}

/** Opens a store for a target. Each adapter is imported only when used. */
export async function openStore(
  target: StoreTarget,
  options: {
    dimensions?: number | undefined;
    schema?: string | undefined;
    io?: CliIo | undefined;
    /** May create or migrate the schema (`mem01 migrate`, `mem01 import`). */
    create?: boolean | undefined;
  } = {},
): Promise<FullStore> {
  if (target.kind === 'sqlite') {
    const { openSqliteStore } = await import('@mem01/store-sqlite');
    return openSqliteStore({
      path: target.path,
      dimensions: options.dimensions,
      logger: quietLogger(options.io),
    });
  }
  const { openPostgresStore } = await loadPostgresStore();
  const io = options.io;
  const schema = options.schema ?? 'mem01';
  try {
    return await openPostgresStore({
      connectionString: target.connectionString,
      schema,
      dimensions: options.dimensions,
      logger: quietLogger(io),
      // Only `migrate` and `import` may create or upgrade the schema: reading a mistyped one creates nothing.
      migrate: options.create === true,
      // A server restarting is waited for briefly; a wrong address should fail fast at a prompt.
      openRetryMs: 2000,
    });
  } catch (err) {
    if (options.create !== true && /is not migrated/.test(String((err as Error)?.message))) {
      throw new CliError(
        'not_found',
        `no mem01 schema "${schema}" in ${redactUrl(target.connectionString)} (check --pg-schema, or create it with mem01 migrate)`,
      );
    }
    if (options.create !== true && /older than/.test(String((err as Error)?.message))) {
      throw new CliError(
        'schema_outdated',
        `the mem01 schema "${schema}" is from an older version: upgrade it with mem01 migrate`,
      );
    }
    throw err;
  }
}

type PostgresModule = typeof import('@mem01/store-postgres');

/**
 * `@mem01/store-postgres`, an optional peer dependency: SQLite users do not install it (nor pg and kysely).
 * When it is missing, a `CliError` (`missing_dependency`) says what to install; other failures propagate.
 */
export async function loadPostgresStore(): Promise<PostgresModule> {
  try {
    return await import('@mem01/store-postgres');
  } catch (err) {
    if (isMissingPackage(err, POSTGRES_STORE)) {
      throw new CliError(
        'missing_dependency',
        `a postgres:// database needs ${POSTGRES_STORE}, which is not installed (the CLI leaves it out for SQLite users): install it where @mem01/cli is installed, e.g. \`npm i ${POSTGRES_STORE}\` (\`npm i -g ${POSTGRES_STORE}\` for a global mem01)`,
      );
    }
    throw err;
  }
}

const POSTGRES_STORE = '@mem01/store-postgres';

/** Did importing `specifier` fail because that very package is not installed (not one of its dependencies)? */
function isMissingPackage(err: unknown, specifier: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    (message.includes(`'${specifier}'`) || message.includes(`"${specifier}"`))
  );
}

export async function defaultSqlitePath(env: NodeJS.ProcessEnv): Promise<string> {
  const mod = await import('@mem01/store-sqlite');
  return mod.defaultSqlitePath(env);
}

/** Runs `fn` with an open store and engine; closes them whatever happens. */
export async function withContext<T>(
  io: CliIo,
  opts: GlobalOptions,
  fn: (ctx: CliContext) => Promise<T>,
  extra: {
    readonly needsEmbedder?: boolean;
    readonly dimensions?: number | undefined;
    /** `report`: a store/embedder dimension mismatch is left to the command (doctor) instead of failing. */
    readonly dimensionCheck?: 'error' | 'report';
    /** May create a new SQLite file (import); other commands refuse a missing file. */
    readonly create?: boolean;
    /**
     * The engine takes the budgets of the environment (`MEM01_*`, as the agent's runtime reads them), for `usage`.
     * Other commands leave them out: an operator's recall is not the user's usage.
     */
    readonly budgets?: boolean;
  } = {},
): Promise<T> {
  const budgets = extra.budgets ? budgetsFromEnv(io.env) : undefined;
  // Checked before anything is opened (a period under a second, say).
  if (budgets) resolveConfig({ budgets }, null);
  const target = resolveStoreTarget(opts, io.env);
  if (target.kind === 'sqlite' && !extra.create) {
    const path = target.path ?? (await defaultSqlitePath(io.env));
    if (!existsSync(path)) {
      throw new CliError(
        'not_found',
        `no mem01 database at ${path} (give --db, or create one with mem01 migrate)`,
      );
    }
  }
  const namespace = opts.namespace?.trim() ? opts.namespace : undefined;
  const choice = parseEmbedderChoice(opts.embedder);
  const where = describeTarget(
    target,
    target.kind === 'sqlite' && !target.path ? await defaultSqlitePath(io.env) : '',
  );
  // The store first: a wrong path or an unreachable server fails before the embedder is loaded.
  const store = await openStore(target, {
    dimensions: extra.dimensions,
    schema: opts.pgSchema,
    io,
    create: extra.create,
  });
  let embedder: Embedder | null = null;
  try {
    embedder = extra.needsEmbedder === false ? null : await loadEmbedder(choice);
    if (embedder && extra.dimensionCheck !== 'report') {
      const stored = (await store.info()).dimensions;
      if (stored !== null && stored !== embedder.dimensions) {
        throw new CliError(
          'dimension_mismatch',
          `${where} holds ${stored}-dimension embeddings but the ${choice} embedder makes ${embedder.dimensions}: use the embedder the data was written with, or --embedder none for lexical recall`,
        );
      }
    }
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
  // The CLI never extracts (turns queued by agents stay queued for their workers): the admin facade, no pipeline.
  // An operator's look at memory is not an agent's recall: it counts no accesses (and so writes nothing).
  const engine = new MemoryAdmin({ store, embedder, config: { accessCounts: false, budgets } });
  const ctx: CliContext = {
    io,
    json: opts.json === true,
    namespace,
    target,
    where,
    store,
    engine,
    embedder,
    scope(userId: string) {
      return normalizeScope({ userId, namespace });
    },
  };
  try {
    return await fn(ctx);
  } finally {
    await engine.close().catch(() => {});
    await store.close().catch(() => {});
  }
}
