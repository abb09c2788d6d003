/** Options of the PostgreSQL store, with their defaults resolved in one place ({@link resolveOptions}). */

import { ConfigError, InvalidInputError, type Logger } from '@mem01/engine';
import type { ProcessIdentity } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Kysely } from 'kysely';
import type pg from 'pg';

/** Options of {@link openPostgresStore}. Defaults are resolved in one place, {@link resolveOptions}. */
export interface PostgresStoreOptions {
  /** Connection string; required unless `pool` or `db` is given (this store reads no environment: `@mem01/runtime`
   * opens `DATABASE_URL`). */
  readonly connectionString?: string | undefined;
  /** A caller-owned pool. `close()` leaves it open. */
  readonly pool?: pg.Pool | undefined;
  /** A caller-owned Kysely instance on the PostgreSQL dialect. `close()` leaves it open. */
  // biome-ignore lint/suspicious/noExplicitAny: the caller's database type is theirs; the store only runs raw SQL
  readonly db?: Kysely<any> | undefined;
  /** Schema holding the tables; default `mem01`. Lower-case letters, digits and `_`, at most 63 characters. */
  readonly schema?: string | undefined;
  /**
   * Embedding dimension, fixed per store at its first migration and checked on every write and search.
   * Default: the stored value, or 384 for a new store. A different value than the stored one is refused.
   */
  readonly dimensions?: number | undefined;
  /**
   * `auto` (default): create the `vector` extension when possible, else keep embeddings in `real[]` and search
   * them by exact cosine (logging one warning). `pgvector`: require the extension. `exact`: never use it.
   * An existing store keeps the mode it was created with.
   */
  readonly vector?: 'auto' | 'pgvector' | 'exact' | undefined;
  /** `statement_timeout` for connections of a pool this store creates; default none. */
  readonly statementTimeoutMs?: number | undefined;
  /** How long to wait for a free connection of a pool this store creates; default 10 000 ms. */
  readonly connectionTimeoutMs?: number | undefined;
  /** Size of a pool this store creates; default 10. */
  readonly maxConnections?: number | undefined;
  /** Where warnings go (for example the fallback to exact cosine). Default: `console.warn` for warnings. */
  readonly logger?: Logger | undefined;
  /** Run migrations when opening; default true. With false, the schema must already be current. */
  readonly migrate?: boolean | undefined;
  /**
   * A user the planner statistics put at no more beliefs than this is searched through the scope index: lexical
   * search skips GIN and vector search scans the user's vectors exactly instead of walking the HNSW graph, which
   * would visit other users' vectors to find this one's. Default 5000.
   */
  readonly smallScopeRows?: number | undefined;
  /**
   * How long opening keeps retrying, with a growing pause, while the server cannot be reached or is restarting
   * (connection refused or terminated, "the database system is starting up", too many connections). Default
   * 10 000 ms; 0 never retries. Other errors (bad credentials, a newer schema) fail at once.
   */
  readonly openRetryMs?: number | undefined;
  /**
   * The process this store's outbox claims are recorded for: a claim of a process on this host (same host name)
   * that has exited is taken over at once. Default: this process. Set it only to act for another process (the
   * conformance suite opens a store as an exited process).
   */
  readonly leaseOwner?: ProcessIdentity | undefined;
}

export interface ResolvedOptions {
  readonly schema: string;
  readonly dimensions: number | null;
  readonly vector: 'auto' | 'pgvector' | 'exact';
  readonly statementTimeoutMs: number | null;
  readonly connectionTimeoutMs: number | null;
  readonly logger: Logger;
  readonly migrate: boolean;
  readonly smallScopeRows: number;
  readonly openRetryMs: number;
  readonly leaseOwner: ProcessIdentity;
  /** {@link leaseOwner} as outbox rows hold it. */
  readonly leaseOwnerKey: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** Embedding dimension of a new store without `dimensions`. */
export const DEFAULT_DIMENSIONS = 384;
/** Limit for belief values and statements and turn texts, in UTF-8 bytes. */
export const MAX_TEXT_BYTES = 1_000_000;
/** Rows per multi-row INSERT. */
export const INSERT_CHUNK = 500;
/** Default of `smallScopeRows`. */
const SMALL_SCOPE_ROWS = 5000;

const defaultLogger: Logger = {
  info: () => {},
  warn: (message) => console.warn(message),
};

export function positiveInt(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  kit.assertPositiveInteger(value, field, max);
  return value;
}

export function resolveOptions(options: PostgresStoreOptions): ResolvedOptions {
  const schema = options.schema ?? 'mem01';
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new ConfigError(
      `schema must match ${SCHEMA_NAME.source} (lower-case letters, digits, underscore), got ${JSON.stringify(schema)}`,
    );
  }
  const vector = options.vector ?? 'auto';
  if (vector !== 'auto' && vector !== 'pgvector' && vector !== 'exact') {
    throw new ConfigError(`vector must be auto, pgvector or exact, got ${JSON.stringify(vector)}`);
  }
  const leaseOwner =
    options.leaseOwner === undefined
      ? kit.processIdentity.current
      : kit.processIdentity.validate(options.leaseOwner, 'leaseOwner');
  return {
    schema,
    leaseOwner,
    leaseOwnerKey: kit.processIdentity.encode(leaseOwner),
    dimensions:
      options.dimensions === undefined ? null : positiveInt(options.dimensions, 'dimensions', 16_000),
    vector,
    statementTimeoutMs:
      options.statementTimeoutMs === undefined
        ? null
        : positiveInt(options.statementTimeoutMs, 'statementTimeoutMs'),
    connectionTimeoutMs: options.connectionTimeoutMs ?? (options.pool || options.db ? null : 10_000),
    logger: options.logger ?? defaultLogger,
    migrate: options.migrate ?? true,
    openRetryMs:
      options.openRetryMs === undefined ? 10_000 : nonNegativeInt(options.openRetryMs, 'openRetryMs'),
    smallScopeRows:
      options.smallScopeRows === undefined
        ? SMALL_SCOPE_ROWS
        : positiveInt(options.smallScopeRows, 'smallScopeRows'),
  };
}

function nonNegativeInt(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new InvalidInputError(field, `must be a non-negative integer, got ${String(value)}`);
  return value;
}
