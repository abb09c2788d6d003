/**
 * The store's database handle and what every role module shares: the Kysely instance (over the store's own pool
 * or the caller's), the loaded schema state, retries of rolled-back or disconnected calls with typed errors, the
 * per-user order of enqueues, and the search statistics caches.
 */
import { ClosedError, ConfigError, StoreError } from '@mem01/engine';
import * as kit from '@mem01/engine/store-kit';
import { Kysely, PostgresDialect, type RawBuilder, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { isConnectionLoss, isRetryableConflict, toStoreError } from './errors.js';
import type { VectorMode } from './migrations.js';
import { type PostgresStoreOptions, type ResolvedOptions, resolveOptions } from './options.js';
import type { SearchStats } from './search-stats.js';

export const STORE_NAME = 'postgres';

/** A port method of this store: a function of its connection (see the store kit's `StoreMethod`). */
export type Method<K extends kit.RoleMethod> = kit.StoreMethod<PgConnection, K>;

/** A Kysely instance or one of its transactions: what the role modules run SQL on. */
export type Db = Kysely<unknown> | Transaction<unknown>;

/** What `load` reads from a migrated schema. */
export interface LoadedSchema {
  readonly dimensions: number;
  readonly mode: VectorMode;
  /** Schema holding the `vector` extension (pgvector mode). */
  readonly extensionSchema: string | null;
  /** pgvector 0.8+ can continue an HNSW scan until enough rows pass a filter. */
  readonly iterativeScan: boolean;
  readonly schemaVersion: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class PgConnection {
  readonly options: ResolvedOptions;
  readonly db: Kysely<unknown>;
  readonly #ownsDb: boolean;
  closed = false;
  loaded: LoadedSchema | null = null;
  /** The planner statistics the searches use (see `search-stats.ts`), cached. */
  stats: SearchStats | null = null;
  /** Per-scope document frequencies of lexemes, and scope sizes (see `scopeFrequencies` in `search-stats.ts`). */
  readonly frequencyCache = new Map<string, { readonly n: number; readonly size: number }>();
  /** Search word → its `english` lexemes (see `lexical-search.ts`). */
  readonly stemCache = new Map<string, string[]>();
  /** Per-user tail of this process's enqueues, so turns of one user reach the database in call order. */
  readonly #enqueueTails = new Map<string, Promise<unknown>>();

  /** Does no I/O. */
  constructor(options: PostgresStoreOptions) {
    this.options = resolveOptions(options);
    if (options.db) {
      this.db = options.db;
      this.#ownsDb = false;
    } else if (options.pool) {
      // A Kysely over a caller's pool: never destroyed by us, since destroy() would end the pool.
      this.db = new Kysely({ dialect: new PostgresDialect({ pool: options.pool }) });
      this.#ownsDb = false;
    } else {
      // No fallback to DATABASE_URL here: the environment is @mem01/runtime's to read (openMemoryRuntime).
      const connectionString = options.connectionString;
      if (typeof connectionString !== 'string' || connectionString.trim() === '') {
        throw new ConfigError(
          'postgres: no connection string (pass connectionString, pool or db; @mem01/runtime opens DATABASE_URL)',
        );
      }
      const pool = new pg.Pool({
        connectionString,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: this.options.connectionTimeoutMs ?? 0,
        ...(this.options.statementTimeoutMs === null
          ? {}
          : { statement_timeout: this.options.statementTimeoutMs }),
      });
      // An idle client whose backend is terminated emits 'error'; without a listener that crashes the process.
      const warn = (err: Error) =>
        this.options.logger.warn(`mem01 postgres: connection error: ${kit.sanitize(err.message)}`);
      pool.on('error', warn);
      // A checked-out client whose backend dies emits 'error' too; the failing query reports it to the caller.
      pool.on('connect', (client) => client.on('error', warn));
      this.db = new Kysely({ dialect: new PostgresDialect({ pool }) });
      this.#ownsDb = true;
    }
  }

  /** A table of the store's schema, quoted. */
  t(name: string): RawBuilder<unknown> {
    return sql`${sql.id(this.options.schema, name)}`;
  }

  /** The loaded schema, once the store is known to be open and migrated (or loaded). */
  state(): LoadedSchema {
    if (this.closed) throw new ClosedError('postgres store');
    if (!this.loaded) throw new StoreError('postgres store is not migrated or loaded yet');
    return this.loaded;
  }

  limits() {
    return {
      statementTimeoutMs: this.options.statementTimeoutMs,
      connectionTimeoutMs: this.options.connectionTimeoutMs,
    };
  }

  /**
   * Runs `fn`, retrying after a rolled-back conflict (serialization/deadlock) and, when `idempotent`, after a
   * lost connection. Other driver errors become typed errors with a clear message.
   */
  async run<T>(
    operation: string,
    fn: () => Promise<T>,
    retry: { idempotent: boolean; applied?: () => Promise<boolean> } = { idempotent: false },
  ): Promise<T> {
    this.state();
    const attempts = 4;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const conflict = isRetryableConflict(err);
        const lost = isConnectionLoss(err);
        if (attempt < attempts && (conflict || (lost && (retry.idempotent || retry.applied)))) {
          await sleep(25 * 2 ** attempt);
          if (lost && retry.applied) {
            // The commit may have reached the server before the connection broke: check before re-running it.
            try {
              if (await retry.applied()) return undefined as T;
            } catch (checkErr) {
              if (!isConnectionLoss(checkErr)) throw toStoreError(checkErr, operation, this.limits());
              continue;
            }
          }
          continue;
        }
        throw toStoreError(err, operation, this.limits());
      }
    }
  }

  tx<T>(fn: (trx: Transaction<unknown>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /**
   * Runs `fn` after every earlier call of this store for the same users has settled. Acceptance order is the
   * order of the outbox sequence; without this, two calls racing on different pool connections could commit in
   * the opposite order of the calls. Registration is synchronous, so the wait graph follows call order.
   */
  inUserOrder<T>(userIds: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    const users = [...new Set(userIds)];
    const before = users.map((u) => this.#enqueueTails.get(u)).filter((p) => p !== undefined);
    const run = Promise.allSettled(before).then(fn);
    const tail = run.catch(() => undefined);
    for (const u of users) this.#enqueueTails.set(u, tail);
    void tail.then(() => {
      for (const u of users) if (this.#enqueueTails.get(u) === tail) this.#enqueueTails.delete(u);
    });
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.#ownsDb) await this.db.destroy();
  }
}
