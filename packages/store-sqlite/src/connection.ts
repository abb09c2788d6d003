/**
 * The store's connection and what every role module shares: prepared statements, the error mapping, write
 * transactions (`BEGIN IMMEDIATE`), the search executor (search workers or this connection), scope ids and the
 * store's settings.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { ClosedError, type Logger, Mem01Error } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { mapDriverError } from './errors.js';
import type { TermStatsCache } from './lexical-search.js';
import { type ReadBatch, runSteps, type SqlValue, unitCosine } from './read-batch.js';
import type { SearchPool } from './search-pool.js';

export const STORE_NAME = 'sqlite';

/** Port methods of this store: functions of its connection (see the store kit's `StoreMethod`). */
export type Method<K extends kit.RoleMethod> = kit.StoreMethod<Connection, K, true>;
export type AsyncMethod<K extends kit.RoleMethod> = kit.StoreMethod<Connection, K>;

export interface ConnectionInit {
  readonly path: string;
  /** The store opened the handle (and closes it). */
  readonly owned: boolean;
  readonly vectorMode: 'sqlite-vec' | 'exact';
  readonly dimensions: number | null;
  readonly maxTextBytes: number;
  readonly logger: Logger;
  /** Search workers on their own read connections, or null to search on this connection. */
  readonly pool: SearchPool | null;
  /** Embeddings a scope needs before it enters the sqlite-vec index. */
  readonly vectorIndexMin: number;
  /** Term and scope counts of the lexical search, shared by every connection of this store. */
  readonly termStats: TermStatsCache;
  /** The process this store's outbox claims are recorded for. */
  readonly owner: kit.ProcessIdentity;
}

export class Connection {
  readonly db: DatabaseSync;
  readonly path: string;
  readonly owned: boolean;
  readonly vectorMode: 'sqlite-vec' | 'exact';
  readonly maxTextBytes: number;
  readonly logger: Logger;
  readonly pool: SearchPool | null;
  readonly vectorIndexMin: number;
  readonly termStats: TermStatsCache;
  readonly owner: kit.ProcessIdentity;
  /** The encoded {@link owner}, as outbox rows hold it. */
  readonly ownerKey: string;
  /** The embedding dimension, once known (configured, or fixed by the first embedding in the file). */
  dimensions: number | null;
  closed = false;
  readonly #statements = new Map<string, StatementSync>();

  constructor(db: DatabaseSync, init: ConnectionInit) {
    this.db = db;
    this.path = init.path;
    this.owned = init.owned;
    this.vectorMode = init.vectorMode;
    this.dimensions = init.dimensions;
    this.maxTextBytes = init.maxTextBytes;
    this.logger = init.logger;
    this.pool = init.pool;
    this.vectorIndexMin = init.vectorIndexMin;
    this.termStats = init.termStats;
    this.owner = init.owner;
    this.ownerKey = kit.processIdentity.encode(init.owner);
  }

  /** The statement for `sql`, prepared once. */
  stmt(sql: string): StatementSync {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  get(sql: string, ...params: SqlValue[]): Row | undefined {
    return this.stmt(sql).get(...params) as Row | undefined;
  }

  all(sql: string, ...params: SqlValue[]): Row[] {
    return this.stmt(sql).all(...params) as Row[];
  }

  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, ...params: SqlValue[]): number {
    return Number(this.stmt(sql).run(...params).changes);
  }

  /** Runs `fn` on an open store, mapping driver errors to typed errors. */
  op<T>(action: string, fn: () => T): T {
    if (this.closed) throw new ClosedError(`sqlite store ${this.path}`);
    try {
      return fn();
    } catch (err) {
      throw mapDriverError(err, this.path, action);
    }
  }

  /** `BEGIN IMMEDIATE` takes the write lock up front, so concurrent writers queue (busy timeout) instead of failing
   * with a stale snapshot, and every check inside `fn` sees the latest committed state. */
  tx<T>(action: string, fn: () => T): T {
    return this.op(action, () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const out = fn();
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.db.isTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  /** Runs a read-only search on a search worker when there are any, else on this connection, mapping errors. */
  async search<T>(action: string, fn: (exec: ReadBatch) => Promise<T>): Promise<T> {
    if (this.closed) throw new ClosedError(`sqlite store ${this.path}`);
    try {
      return await fn(this.pool ? this.pool.exec : this.#readBatch);
    } catch (err) {
      if (err instanceof Mem01Error) throw err;
      if (this.closed) throw new ClosedError(`sqlite store ${this.path}`);
      throw mapDriverError(err, this.path, action);
    }
  }

  /** The in-thread executor: the steps run synchronously on this connection. */
  readonly #readBatch: ReadBatch = (steps) => {
    try {
      return Promise.resolve(runSteps(this.db, (sql) => this.stmt(sql), unitCosine, steps) as Row[][]);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  scopeId(scope: { userId: string; namespace: string }): number | null {
    const row = this.get(
      'SELECT id FROM scopes WHERE user_id = ? AND namespace = ?',
      scope.userId,
      scope.namespace,
    );
    return row ? Number(row.id) : null;
  }

  ensureScopeId(scope: { userId: string; namespace: string }): number {
    this.run(
      'INSERT OR IGNORE INTO scopes (user_id, namespace) VALUES (?, ?)',
      scope.userId,
      scope.namespace,
    );
    return this.scopeId(scope)!;
  }

  /** The dimension fixed in the file (another connection may have fixed it since this one opened). */
  readDimensions(): number | null {
    if (this.dimensions !== null) return this.dimensions;
    const row = this.get("SELECT value FROM meta WHERE key = 'dimensions'");
    this.dimensions = row ? Number(row.value) : null;
    return this.dimensions;
  }

  /** Releases what the store opened; the statement cache goes, a caller-owned handle stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool?.close();
    this.#statements.clear();
    if (this.owned) {
      try {
        this.db.exec('PRAGMA optimize');
      } catch {
        // best effort
      }
      this.db.close();
    }
  }
}
