/** Which store the CLI opens: flags, then `DATABASE_URL`, then the default SQLite file. */
import { sanitize } from '@mem01/engine/store-kit';
import { UsageError } from './errors.js';

export type StoreKind = 'sqlite' | 'postgres';

export type StoreTarget =
  | { readonly kind: 'sqlite'; readonly path: string | undefined }
  | { readonly kind: 'postgres'; readonly connectionString: string };

export interface StoreSelection {
  /** `--db`: a `postgres://`/`postgresql://` URL or a SQLite file path. */
  readonly db?: string | undefined;
  /** `--store`: force the kind. */
  readonly store?: string | undefined;
}

const PG_URL = /^postgres(?:ql)?:\/\//i;

/**
 * Resolves the store to open. `--db` wins over `DATABASE_URL`; `--store` forces the kind (`--store postgres`
 * without a URL takes `DATABASE_URL`; `--store sqlite` ignores `DATABASE_URL`). A SQLite target without a path
 * means the default file (`defaultSqlitePath()` of `@mem01/store-sqlite`).
 */
export function resolveStoreTarget(sel: StoreSelection, env: NodeJS.ProcessEnv): StoreTarget {
  const store = sel.store?.trim().toLowerCase();
  if (store !== undefined && store !== 'sqlite' && store !== 'postgres') {
    throw new UsageError(`--store must be "sqlite" or "postgres", got ${JSON.stringify(sel.store)}`);
  }
  const db = sel.db?.trim();
  if (sel.db !== undefined && !db) throw new UsageError('--db must not be empty');
  const envUrl = env.DATABASE_URL?.trim() || undefined;
  if (store === 'sqlite') {
    if (db && PG_URL.test(db))
      throw new UsageError('--store sqlite was given with a postgres:// URL in --db');
    return { kind: 'sqlite', path: db };
  }
  if (store === 'postgres') {
    const url = db ?? envUrl;
    if (!url) throw new UsageError('--store postgres needs --db <postgres://…> or DATABASE_URL');
    if (!PG_URL.test(url)) throw new UsageError('--store postgres needs a postgres:// or postgresql:// URL');
    return { kind: 'postgres', connectionString: url };
  }
  if (db) return PG_URL.test(db) ? { kind: 'postgres', connectionString: db } : { kind: 'sqlite', path: db };
  if (envUrl) {
    if (!PG_URL.test(envUrl)) throw new UsageError('DATABASE_URL must be a postgres:// or postgresql:// URL');
    return { kind: 'postgres', connectionString: envUrl };
  }
  return { kind: 'sqlite', path: undefined };
}

/**
 * A URL with its password and secret parameters (`password=`, `sslpassword=`, `access_token=`, …) replaced by
 * `***`, safe to print: the engine's one masking table (`sanitize`), which also masks keys and tokens anywhere in it.
 */
export function redactUrl(url: string): string {
  return sanitize(url);
}

/** How a target is shown to the user. */
export function describeTarget(target: StoreTarget, defaultPath: string): string {
  return target.kind === 'sqlite'
    ? `sqlite ${target.path ?? defaultPath}`
    : `postgres ${redactUrl(target.connectionString)}`;
}
