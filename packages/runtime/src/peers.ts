/**
 * Optional peer dependencies: `@mem01/store-postgres` (and, through it, `pg` and `kysely`) is installed only by
 * those who use PostgreSQL. The one check of "is it installed?" for every entry point, naming the module that is
 * really missing (the peer itself, or one of its own dependencies).
 */
import type { FullStore, Logger } from '@mem01/engine';
import { Mem01Error } from '@mem01/engine';

/**
 * A module mem01 needs for what was asked (an optional peer such as `@mem01/store-postgres`, or a dependency of it
 * such as `pg`) is not installed. Code `missing_dependency`; the message says what to install.
 */
export class MissingDependencyError extends Mem01Error {
  /** The module that could not be found, e.g. `@mem01/store-postgres` or `pg`. */
  readonly module: string;
  /** The optional peer that was being loaded, e.g. `@mem01/store-postgres`. */
  readonly peer: string;
  constructor(message: string, options: { module: string; peer: string; cause?: unknown }) {
    super('missing_dependency', message, { cause: options.cause });
    this.module = options.module;
    this.peer = options.peer;
  }
}

/** What an error says about the purpose of the missing module, for the message. */
export interface OptionalPeerContext {
  /** What needs the peer, e.g. `a postgres:// database`. */
  readonly neededFor: string;
  /** Where to install it, e.g. `@mem01/cli` ("install it beside @mem01/cli"). Default: the application. */
  readonly beside?: string | undefined;
  /** What works instead, e.g. `or use a SQLite file`. */
  readonly instead?: string | undefined;
}

/**
 * Imports an optional peer dependency. When it, or a module it imports, is not installed, throws a
 * {@link MissingDependencyError} naming exactly the missing module; other failures propagate.
 */
export async function loadOptionalPeer<T>(specifier: string, context: OptionalPeerContext): Promise<T> {
  try {
    return (await import(/* @vite-ignore */ specifier)) as T;
  } catch (err) {
    const missing = missingModule(err);
    if (missing === null) throw err;
    const module = missing === '' ? specifier : missing;
    const instead = context.instead ? ` (${context.instead})` : '';
    let message: string;
    if (isPath(module)) {
      // A file of an installed package is missing: the install is broken, not incomplete.
      message = `${context.neededFor} needs ${specifier}, but its file ${module} is missing: reinstall ${specifier}${instead}`;
    } else {
      const install = `\`npm i ${packageOf(module)}\``;
      const where = context.beside
        ? `install it beside ${context.beside}, e.g. ${install}`
        : `run ${install}`;
      message =
        module === specifier
          ? `${context.neededFor} needs ${specifier}, which is not installed: ${where}${instead}`
          : `${context.neededFor} needs ${specifier}, whose dependency ${packageOf(module)} is not installed: ${where}${instead}`;
    }
    throw new MissingDependencyError(message, {
      module: isPath(module) ? module : packageOf(module),
      peer: specifier,
      cause: err,
    });
  }
}

/**
 * The module a failed import could not find: its specifier as the error names it, `''` when the error says a
 * module is missing without naming it, null when the failure is something else (a syntax error, a throwing
 * module, an unsupported Node.js).
 */
export function missingModule(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  // Node.js: "Cannot find package 'pg' imported from …", "Cannot find module '/abs/x.js' imported from …";
  // Vite (the test runner): "Failed to load url pg (resolved id: pg) in …".
  const named =
    /Cannot find (?:package|module) '([^']+)'/.exec(message) ??
    /Cannot find (?:package|module) "([^"]+)"/.exec(message) ??
    /Failed to (?:load url|resolve import) "?([^\s"]+)"?/.exec(message);
  if (named?.[1]) return named[1];
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return '';
  return null;
}

function isPath(specifier: string): boolean {
  return specifier.startsWith('.') || specifier.startsWith('/') || /^[a-z]+:/i.test(specifier);
}

/** `pg` for `pg`, `pg/lib/x.js`; `@scope/name` for `@scope/name/sub`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/**
 * The part of `@mem01/store-postgres` the runtime uses, declared here so that the runtime's types do not need the
 * package installed (it is an optional peer).
 */
export interface PostgresStoreModule {
  openPostgresStore(options: {
    connectionString: string;
    schema?: string | undefined;
    dimensions?: number | undefined;
    logger?: Logger | undefined;
    migrate?: boolean | undefined;
    openRetryMs?: number | undefined;
  }): Promise<FullStore>;
  /** The schema version this version of the package writes. */
  readonly POSTGRES_SCHEMA_VERSION: number;
}

export const POSTGRES_STORE = '@mem01/store-postgres';

/** `@mem01/store-postgres`, or a {@link MissingDependencyError} saying what to install. */
export function loadPostgresStore(context: Partial<OptionalPeerContext> = {}): Promise<PostgresStoreModule> {
  return loadOptionalPeer<PostgresStoreModule>(POSTGRES_STORE, {
    neededFor: context.neededFor ?? 'a postgres:// database',
    beside: context.beside,
    instead: context.instead ?? 'or use a SQLite file: unset DATABASE_URL, or give a file path',
  });
}
