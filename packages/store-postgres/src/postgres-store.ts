/**
 * `PostgresStore`: a mem01 store on PostgreSQL. A thin facade over the role modules, which share one
 * `PgConnection`: `beliefs.ts` (commit, reads, history, import), `forget.ts`, `lexical-search.ts` (tsvector/GIN,
 * with its note on how it approximates BM25), `vector-search.ts` (pgvector HNSW or exact cosine), `outbox.ts`,
 * `transcript.ts`, `admin.ts` (erase, clearAll), `governance.ts` (operation keys, grants, budgets, access counts); the
 * schema is in `migrations.ts` and `schema.ts`, the options in `options.ts`.
 */

import type { FullStore } from '@mem01/engine';
import type { StoreCapabilities, StoreInfo } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Kysely } from 'kysely';
import * as admin from './admin.js';
import * as beliefs from './beliefs.js';
import { PgConnection, STORE_NAME } from './connection.js';
import { isTransientOpenFailure } from './errors.js';
import { forget } from './forget.js';
import * as governance from './governance.js';
import { searchLexical } from './lexical-search.js';
import { MAX_TEXT_BYTES, type PostgresStoreOptions, type ResolvedOptions } from './options.js';
import * as outbox from './outbox.js';
import * as schema from './schema.js';
import * as transcript from './transcript.js';
import { searchVector } from './vector-search.js';

export { POSTGRES_SCHEMA_VERSION } from './migrations.js';

/**
 * Opens (and by default migrates) a PostgreSQL store.
 *
 * @example
 * const store = await openPostgresStore({ connectionString: 'postgres://localhost/app' });
 */
export async function openPostgresStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore(options);
  const deadline = Date.now() + store.options.openRetryMs;
  // A server that is restarting refuses or drops connections for a while: every process starting then would fail.
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    try {
      if (store.options.migrate) await store.migrate();
      else await store.load();
      return store;
    } catch (err) {
      if (!isTransientOpenFailure(err) || Date.now() + pause > deadline) {
        await store.close();
        throw err;
      }
      store.options.logger.warn(
        `mem01 postgres: cannot open yet (${kit.describeError(err)}); retrying in ${pause} ms`,
      );
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}

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
 * A mem01 store on PostgreSQL: beliefs with a generated `tsvector` (GIN) and pgvector HNSW or exact cosine,
 * transcripts, and a durable outbox shared by worker processes on many hosts.
 *
 * Concurrency: every multi-statement write is one transaction; one active belief per key is a partial unique
 * index; outbox claims lock the user's oldest pending entry with `FOR UPDATE SKIP LOCKED` and refuse users whose
 * previous claim is still leased, so one user's turns are extracted in acceptance order across processes.
 */
export class PostgresStore
  extends kit.storeClass<PgConnection>(ROLES, { maxTextBytes: () => MAX_TEXT_BYTES })
  implements FullStore
{
  readonly name = STORE_NAME;
  readonly #c: PgConnection;

  /** Use {@link openPostgresStore}; the constructor does no I/O. */
  constructor(options: PostgresStoreOptions = {}) {
    const c = new PgConnection(options);
    super(c);
    this.#c = c;
  }

  /** @internal */
  get options(): ResolvedOptions {
    return this.#c.options;
  }

  /** The capabilities of the active vector mode (before `migrate`/`load`: as configured). */
  get capabilities(): StoreCapabilities {
    const mode = this.#c.loaded?.mode ?? (this.#c.options.vector === 'exact' ? 'exact' : 'pgvector');
    return {
      vectorSearch: mode === 'pgvector' ? 'index' : 'exact',
      vectorIndex: mode === 'pgvector' ? 'pgvector-hnsw' : 'exact-cosine',
      lexicalIndex: 'tsvector-gin',
      durableOutbox: true,
      multiProcess: true,
      ownerLiveness: true,
    };
  }

  /** The Kysely instance the store uses (for tests and tooling). */
  get db(): Kysely<unknown> {
    return this.#c.db;
  }

  get schema(): string {
    return this.#c.options.schema;
  }

  /**
   * Creates the schema and applies pending migrations. Safe to run from several processes at once: the
   * preparation holds a transaction-scoped advisory lock and kysely's Migrator holds its own advisory lock.
   * Throws `SchemaTooNewError` when the database was written by a newer version.
   */
  migrate(): Promise<void> {
    return schema.migrate(this.#c);
  }

  /** Reads the schema version, mode and dimensions of an already migrated schema. */
  load(): Promise<void> {
    return schema.load(this.#c);
  }

  async info(): Promise<StoreInfo> {
    const state = this.#c.state();
    return {
      name: this.name,
      schemaVersion: state.schemaVersion,
      capabilities: this.capabilities,
      dimensions: state.dimensions,
      outbox: await this.backlog({ now: kit.isoNow() }),
    };
  }

  /**
   * Runs ANALYZE on the beliefs table and re-reads the statistics the searches use (lexeme rarity, common words,
   * each user's share of the rows) on the next search. Autovacuum does the same on its own schedule; call this
   * after a bulk import to have the searches use the new data's statistics at once.
   */
  analyze(): Promise<void> {
    return admin.analyze(this.#c);
  }

  /** Every outbox entry of a user in acceptance order (diagnostics and tests). */
  outboxEntries(userId: string): ReturnType<typeof outbox.outboxEntries> {
    return outbox.outboxEntries(this.#c, userId);
  }

  close(): Promise<void> {
    return this.#c.close();
  }
}
