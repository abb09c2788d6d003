/**
 * Which database memory lives in: the options (`db`, `storeKind`, `pgSchema`), then `DATABASE_URL`, then the
 * default SQLite file. The one rule every entry point follows.
 */

import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@mem01/engine';
import { sanitize } from '@mem01/engine/binding-kit';

/** A database to open. */
export type StoreTarget =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly connectionString: string;
      /** The schema of the mem01 tables; undefined: the store's default (`mem01`). */
      readonly schema: string | undefined;
    };

/** The options that choose the database. */
export interface StoreSelection {
  /**
   * A SQLite file path, or a `postgres://` / `postgresql://` URL. Wins over `DATABASE_URL` and the default file.
   */
  readonly db?: string | undefined;
  /**
   * Forces the kind of database: `sqlite` ignores `DATABASE_URL` (the file is `db`, else the default file);
   * `postgres` needs a `postgres://` URL in `db` or `DATABASE_URL`. Default: from `db`, then the environment.
   */
  readonly storeKind?: 'sqlite' | 'postgres' | undefined;
  /** The Postgres schema of the mem01 tables. Default `mem01`. Ignored for SQLite. */
  readonly pgSchema?: string | undefined;
}

const PG_URL = /^postgres(?:ql)?:\/\//i;

/**
 * Resolves the database to open: `db` wins over `DATABASE_URL`; `storeKind` forces the kind; without either,
 * `DATABASE_URL` (which must be a `postgres://` URL) selects PostgreSQL, else the SQLite file at
 * `$MEM01_HOME/memory.db` (`~/.mem01/memory.db`). Synchronous and I/O-free; a bad selection is a `ConfigError`.
 */
export function resolveStoreTarget(
  selection: StoreSelection,
  env: Readonly<Record<string, string | undefined>>,
): StoreTarget {
  const kind = selection.storeKind;
  if (kind !== undefined && kind !== 'sqlite' && kind !== 'postgres') {
    throw new ConfigError(`storeKind must be "sqlite" or "postgres", got ${JSON.stringify(kind)}`);
  }
  if (selection.db !== undefined && typeof selection.db !== 'string') {
    throw new ConfigError('db must be a SQLite file path or a postgres:// URL');
  }
  if (selection.pgSchema !== undefined && typeof selection.pgSchema !== 'string') {
    throw new ConfigError('pgSchema must be a string');
  }
  const db = selection.db?.trim();
  if (selection.db !== undefined && !db) throw new ConfigError('db must not be empty');
  const envUrl = env.DATABASE_URL?.trim() || undefined;
  const schema = selection.pgSchema?.trim() || undefined;
  const postgres = (connectionString: string): StoreTarget => ({
    kind: 'postgres',
    connectionString,
    schema,
  });
  const sqlite = (path: string | undefined): StoreTarget => ({
    kind: 'sqlite',
    path: path ?? defaultSqlitePath(env),
  });
  if (kind === 'sqlite') {
    if (db && PG_URL.test(db))
      throw new ConfigError('storeKind sqlite was given with a postgres:// URL in db');
    return sqlite(db);
  }
  if (kind === 'postgres') {
    const url = db ?? envUrl;
    if (!url) throw new ConfigError('storeKind postgres needs a postgres:// URL in db or DATABASE_URL');
    if (!PG_URL.test(url))
      throw new ConfigError('storeKind postgres needs a postgres:// or postgresql:// URL');
    return postgres(url);
  }
  if (db) return PG_URL.test(db) ? postgres(db) : sqlite(db);
  if (envUrl) {
    if (!PG_URL.test(envUrl)) {
      throw new ConfigError(
        'DATABASE_URL must be a postgres:// or postgresql:// URL (mem01 keeps memory in PostgreSQL when it is set); unset it for the SQLite file',
      );
    }
    return postgres(envUrl);
  }
  return sqlite(undefined);
}

/**
 * mem01's default database file: `$MEM01_HOME/memory.db`, or `~/.mem01/memory.db` when `MEM01_HOME` is unset or
 * empty. The one home of this rule (the SQLite store itself reads no environment).
 */
export function defaultSqlitePath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = env.MEM01_HOME?.trim();
  return join(home ? home : join(homedir(), '.mem01'), 'memory.db');
}

/** `sqlite <path>` or `postgres <url without password or secret parameters>`: safe to print. */
export function describeStoreTarget(target: StoreTarget): string {
  if (target.kind === 'sqlite') return `sqlite ${target.path}`;
  const where = `postgres ${sanitize(target.connectionString)}`;
  return target.schema === undefined || target.schema === 'mem01'
    ? where
    : `${where} (schema ${target.schema})`;
}
