/**
 * Opens memory for one command through `@mem01/runtime` (the database, embedder and engine settings the agent's
 * runtime opens with the same flags and environment), and closes it afterwards. The CLI keeps no default of its
 * own: `--db`, `--store`, `--pg-schema` and `--embedder` are the runtime's `db`, `storeKind`, `pgSchema` and
 * `embedder`; everything else (`DATABASE_URL`, `MEM01_HOME`, `OPENAI_API_KEY`, the `MEM01_*` tuning) is read there.
 */
import { existsSync } from 'node:fs';
import type { Embedder, FullStore, MemoryAdmin, Scope } from '@mem01/engine';
import { normalizeScope, sanitize } from '@mem01/engine/binding-kit';
import {
  describeRuntime,
  type MemoryAdminOptions,
  openMemoryAdmin,
  type RuntimeDescription,
  type StoreTarget,
} from '@mem01/runtime';
import { CliError, UsageError } from './errors.js';
import type { CliIo } from './io.js';
import { resolveStoreTarget } from './store-target.js';

/** Options every command shares (commander's global options). */
export interface GlobalOptions {
  readonly db?: string | undefined;
  readonly store?: string | undefined;
  readonly namespace?: string | undefined;
  readonly json?: boolean | undefined;
  /** `--embedder`: `openai`, `local` or `none`; absent: the runtime's default (as the agent's). */
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
  /** What was opened, as the agent's runtime names it (store, extractor, embedder, settings). */
  readonly description: RuntimeDescription;
  /** The scope of `--user` in `--namespace`. */
  scope(userId: string): Scope;
}

export type EmbedderChoice = 'openai' | 'local' | 'none';

/** `--embedder`, checked; undefined when not given (the runtime then chooses, as for the agent). */
export function parseEmbedderChoice(value: string | undefined): EmbedderChoice | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v !== 'openai' && v !== 'local' && v !== 'none')
    throw new UsageError(`--embedder must be "openai", "local" or "none", got ${JSON.stringify(value)}`);
  return v;
}

/** The runtime options the global flags map onto (the environment is `io.env`). */
export function runtimeOptions(
  opts: GlobalOptions,
  env: CliIo['env'],
): Pick<MemoryAdminOptions, 'db' | 'storeKind' | 'pgSchema' | 'embedder' | 'env'> {
  const choice = parseEmbedderChoice(opts.embedder);
  return {
    db: opts.db,
    storeKind: opts.store as MemoryAdminOptions['storeKind'],
    pgSchema: opts.pgSchema,
    ...(choice === undefined ? {} : { embedder: choice === 'none' ? null : choice }),
    env,
  };
}

/** Store notices (the vector mode chosen at open) stay quiet; warnings go to stderr without secrets. */
export function quietLogger(io: CliIo | undefined) {
  return {
    info: () => {},
    warn: (m: string) => {
      (io?.stderr ?? process.stderr).write(`warning: ${sanitize(m)}\n`);
    },
  };
}

/** Postgres open failures a user can act on, said in the CLI's terms. */
export function explainOpenError(err: unknown, target: StoreTarget, create: boolean | undefined): unknown {
  if (target.kind !== 'postgres' || create === true) return err;
  const message = String((err as Error)?.message);
  const schema = target.schema ?? 'mem01';
  if (/is not migrated/.test(message)) {
    return new CliError(
      'not_found',
      `no mem01 schema "${schema}" in ${sanitize(target.connectionString)} (check --pg-schema, or create it with mem01 migrate)`,
    );
  }
  if (/older than/.test(message)) {
    return new CliError(
      'schema_outdated',
      `the mem01 schema "${schema}" is from an older version: upgrade it with mem01 migrate`,
    );
  }
  return err;
}

/** Runs `fn` with an open store and engine; closes them whatever happens. */
export async function withContext<T>(
  io: CliIo,
  opts: GlobalOptions,
  fn: (ctx: CliContext) => Promise<T>,
  extra: {
    /** false: the command embeds nothing, so the store/embedder dimension check is skipped. */
    readonly needsEmbedder?: boolean;
    /** Embedding length of a new store (import: the file's). */
    readonly dimensions?: number | undefined;
    /** `report`: a store/embedder dimension mismatch is left to the command (doctor) instead of failing. */
    readonly dimensionCheck?: 'error' | 'report';
    /** May create a new SQLite file or Postgres schema (import); other commands refuse a missing one. */
    readonly create?: boolean;
    /** false: the command says what it opened itself (inspect) instead of the one stderr line. */
    readonly announce?: boolean;
  } = {},
): Promise<T> {
  // The engine takes the agent's settings, budgets (`MEM01_*`) included: `usage` shows the agent's limits.
  const options = runtimeOptions(opts, io.env);
  const target = resolveStoreTarget(opts, io.env);
  if (target.kind === 'sqlite' && !extra.create && !existsSync(target.path)) {
    throw new CliError(
      'not_found',
      `no mem01 database at ${target.path} (give --db, or create one with mem01 migrate)`,
    );
  }
  const namespace = opts.namespace?.trim() ? opts.namespace : undefined;
  let opened: Awaited<ReturnType<typeof openMemoryAdmin>>;
  try {
    opened = await openMemoryAdmin({
      ...options,
      create: extra.create === true,
      dimensions: extra.dimensions,
      // A server restarting is waited for briefly; a wrong address should fail fast at a prompt.
      openRetryMs: 2000,
      // An operator's look at memory is not an agent's recall: it counts no accesses (and so writes nothing).
      engine: { accessCounts: false },
      logger: quietLogger(io),
    });
  } catch (err) {
    throw explainOpenError(err, target, extra.create);
  }
  const { admin, store, embedder, description } = opened;
  const where = description.location;
  try {
    if (embedder && extra.needsEmbedder !== false && extra.dimensionCheck !== 'report') {
      const stored = (await store.info()).dimensions;
      if (stored !== null && stored !== embedder.dimensions) {
        throw new CliError(
          'dimension_mismatch',
          `${where} holds ${stored}-dimension embeddings but the ${description.embedder} embedder makes ${embedder.dimensions}: use the embedder the data was written with (--embedder), or --embedder none for lexical recall`,
        );
      }
    }
  } catch (err) {
    await opened.close();
    throw err;
  }
  if (extra.announce !== false)
    io.stderr.write(`mem01: ${describeRuntime(description)}
`);
  const ctx: CliContext = {
    io,
    json: opts.json === true,
    namespace,
    target: opened.target,
    where,
    store,
    engine: admin,
    embedder,
    description,
    scope(userId: string) {
      return normalizeScope({ userId, namespace });
    },
  };
  try {
    return await fn(ctx);
  } finally {
    await opened.close();
  }
}
