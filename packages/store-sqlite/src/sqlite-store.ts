/**
 * `SqliteStore`: the embedded mem01 store. A thin facade over the role modules, which share one `Connection`:
 * `beliefs.ts` (commit, reads, history, import), `forget.ts`, `lexical-search.ts` (FTS5), `vector-search.ts`
 * (sqlite-vec or exact cosine), `outbox.ts`, `transcript.ts`, `admin.ts` (erase, clearAll), `governance.ts`
 * (operation keys, grants, budgets, access counts); the schema is in `migrations.ts`, opening in `open.ts`.
 */
import type { DatabaseSync } from 'node:sqlite';
import { type FullStore, InvalidInputError } from '@mem01/engine';
import type { StoreCapabilities, StoreInfo } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import * as admin from './admin.js';
import * as beliefs from './beliefs.js';
import { Connection, type ConnectionInit, STORE_NAME } from './connection.js';
import { finishScrub, flushForgotten, forget, scrubPending } from './forget.js';
import * as governance from './governance.js';
import { searchLexical } from './lexical-search.js';
import * as outbox from './outbox.js';
import * as transcript from './transcript.js';
import { searchVector } from './vector-search.js';

/** The port methods, from the role modules. */
const ROLES = {
  ...beliefs,
  ...admin,
  ...governance,
  ...outbox,
  ...transcript,
  forget,
  searchLexical,
  searchVector,
};

/**
 * The embedded mem01 store: transcript, beliefs (FTS5 + sqlite-vec or exact cosine) and the durable outbox in one
 * SQLite file, via `node:sqlite`. Every multi-statement operation runs in `BEGIN IMMEDIATE … COMMIT`, so several
 * processes can share one file. Create it with {@link openSqliteStore}.
 */
export class SqliteStore
  extends kit.storeClass<Connection>(ROLES, { maxTextBytes: (c) => c.maxTextBytes })
  implements FullStore
{
  readonly name = STORE_NAME;
  /** Absolute path of the database file (`:memory:` or the handle's location for a caller-owned handle). */
  readonly path: string;
  readonly capabilities: StoreCapabilities;
  /** Is sqlite-vec loaded and used for vector search? */
  readonly vectorMode: 'sqlite-vec' | 'exact';
  readonly #c: Connection;

  /** @internal Use {@link openSqliteStore}. */
  constructor(db: DatabaseSync, init: ConnectionInit) {
    const c = new Connection(db, init);
    super(c);
    this.#c = c;
    this.path = init.path;
    this.vectorMode = init.vectorMode;
    this.capabilities = Object.freeze({
      vectorSearch: init.vectorMode === 'sqlite-vec' ? 'index' : 'exact',
      vectorIndex: init.vectorMode === 'sqlite-vec' ? 'sqlite-vec' : 'exact-cosine',
      lexicalIndex: 'fts5-bm25',
      durableOutbox: true,
      multiProcess: true,
      ownerLiveness: true,
    });
  }

  /** How many search worker threads are running (0 when searches run on this connection). For diagnostics. */
  get searchWorkersRunning(): number {
    return this.#c.pool?.running ?? 0;
  }

  async info(): Promise<StoreInfo> {
    const backlog = await this.backlog({ now: kit.isoNow() });
    return {
      name: this.name,
      schemaVersion: admin.schemaVersion(this.#c),
      capabilities: this.capabilities,
      dimensions: this.#c.op('info', () => this.#c.readDimensions()),
      outbox: backlog,
    };
  }

  /** Writes the WAL back into the database file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`), without
   * waiting. Throws `StoreError` when another connection's read transaction blocks it. */
  checkpoint(): void {
    admin.checkpoint(this.#c);
  }

  /**
   * True while text forgotten on this connection may still be in the WAL file: `forget` checkpoints at once, but a
   * read transaction on another connection (another process, say) that began before the forget keeps those WAL
   * frames until it ends. The store then retries the checkpoint in the background (every 50 ms to 1 s) until it
   * succeeds, and once more at `close()`.
   */
  get scrubPending(): boolean {
    return scrubPending(this.#c);
  }

  /**
   * Resolves once no forgotten text is left in the WAL (at once when nothing is pending). Rejects with `StoreError`
   * when another connection still reads the old frames after `timeoutMs` (default 30 s).
   */
  flushForgotten(options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0)
      throw new InvalidInputError('timeoutMs', 'must be a non-negative integer');
    return flushForgotten(this.#c, timeoutMs);
  }

  async close(): Promise<void> {
    if (!this.#c.closed) finishScrub(this.#c);
    await this.#c.close();
  }
}
