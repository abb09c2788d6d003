/**
 * Which store the CLI opens: `--db`, then `DATABASE_URL`, then the default SQLite file, with `--store` forcing the
 * kind. The rule itself is `@mem01/runtime`'s (`resolveStoreTarget`), the one every entry point follows; this maps
 * the flags onto it and its errors onto usage errors.
 */
import { sanitize } from '@mem01/engine/binding-kit';
import {
  describeStoreTarget,
  resolveStoreTarget as resolveRuntimeTarget,
  type StoreTarget,
} from '@mem01/runtime';
import { UsageError } from './errors.js';

export type { StoreTarget };

export type StoreKind = 'sqlite' | 'postgres';

export interface StoreSelection {
  /** `--db`: a `postgres://`/`postgresql://` URL or a SQLite file path. */
  readonly db?: string | undefined;
  /** `--store`: force the kind. */
  readonly store?: string | undefined;
  /** `--pg-schema`: the Postgres schema of the mem01 tables. */
  readonly pgSchema?: string | undefined;
}

/**
 * Resolves the store to open. `--db` wins over `DATABASE_URL`; `--store` forces the kind (`--store postgres`
 * without a URL takes `DATABASE_URL`; `--store sqlite` ignores `DATABASE_URL`). A SQLite target without a path
 * is the default file (`$MEM01_HOME/memory.db`, else `~/.mem01/memory.db`). A bad selection is a `UsageError`.
 */
export function resolveStoreTarget(
  sel: StoreSelection,
  env: Readonly<Record<string, string | undefined>>,
): StoreTarget {
  const store = sel.store?.trim().toLowerCase();
  if (store !== undefined && store !== 'sqlite' && store !== 'postgres') {
    throw new UsageError(`--store must be "sqlite" or "postgres", got ${JSON.stringify(sel.store)}`);
  }
  try {
    return resolveRuntimeTarget({ db: sel.db, storeKind: store, pgSchema: sel.pgSchema }, env);
  } catch (err) {
    throw asFlagError(err);
  }
}

/** A runtime error about a selection, said with the CLI's flag names. */
function asFlagError(err: unknown): unknown {
  if (!(err instanceof Error) || (err as { code?: unknown }).code !== 'config') return err;
  const message = err.message
    .replace(/\bstoreKind\b/g, '--store')
    .replace(/\bpgSchema\b/g, '--pg-schema')
    .replace(/\bdb\b/g, '--db');
  return new UsageError(message, { cause: err });
}

/**
 * A URL with its password and secret parameters (`password=`, `sslpassword=`, `access_token=`, …) replaced by
 * `***`, safe to print: the engine's one masking table (`sanitize`), which also masks keys and tokens anywhere in it.
 */
export function redactUrl(url: string): string {
  return sanitize(url);
}

/** How a target is shown to the user (the runtime's description). */
export function describeTarget(target: StoreTarget): string {
  return describeStoreTarget(target);
}
