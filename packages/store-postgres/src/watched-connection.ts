/**
 * The Kysely the migration runs on: one connection of the store's own Kysely, watched, and introspected only within
 * the store's schema.
 *
 * - Kysely's Migrator releases its advisory lock in a `finally`: when the connection dies mid-migration, the
 *   rollback and then that release fail too, and the error the Migrator reports is the last of them ("Postgres
 *   connection has been discarded"), which says nothing of what happened and is not recognisable as a lost
 *   connection. This Kysely keeps the first error, so `migrate` can report it and opening can tell whether
 *   retrying may help.
 * - To find its own tables the Migrator lists every column of every table in the database, calling
 *   `has_schema_privilege` and `pg_get_serial_sequence` by name: a schema another process drops meanwhile fails the
 *   migration ("schema ... does not exist"), and the scan grows with every schema on the server. The introspector
 *   here looks only at the store's schema.
 */
import {
  type CompiledQuery,
  type ControlledTransaction,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresQueryCompiler,
  type QueryResult,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

/** The first error since the last statement that succeeded: the start of the current run of failures. */
export class FailureChain {
  #first: { readonly error: unknown } | null = null;

  /** The error that started the current run of failures, if any. */
  get first(): { readonly error: unknown } | null {
    return this.#first;
  }

  succeeded(): void {
    this.#first = null;
  }

  failed(error: unknown): void {
    // A failure handled by the caller (a rolled-back savepoint) is followed by a success, which clears it.
    this.#first ??= { error };
  }
}

/**
 * Runs `fn` with a Kysely on one connection of `db` (held for the whole call), whose statements, transactions
 * included, are recorded in `chain`. Its transactions are controlled transactions of `db`'s own driver, so a
 * rollback that fails still makes that driver discard the connection instead of returning it to the pool.
 */
export function withWatchedConnection<T>(
  db: Kysely<unknown>,
  schema: string,
  chain: FailureChain,
  fn: (db: Kysely<unknown>) => Promise<T>,
): Promise<T> {
  return db.connection().execute((conn) => {
    const watched = new Kysely<unknown>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new WatchedDriver(conn, chain),
        createIntrospector: (k) => new SchemaIntrospector(k, schema),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    return fn(watched);
  });
}

/** What the Migrator asks (does its schema exist, which tables does it hold), answered for one schema only. */
class SchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #schema: string;

  constructor(db: Kysely<unknown>, schema: string) {
    this.#db = db;
    this.#schema = schema;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const r = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace where nspname = ${this.#schema}`.execute(this.#db);
    return r.rows.map((row) => ({ name: row.name }));
  }

  /** The schema's tables, without columns (the Migrator only looks for its own tables by name). */
  async getTables(): Promise<TableMetadata[]> {
    const r = await sql<{ name: string; kind: string }>`
      select c.relname as name, c.relkind as kind from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = ${this.#schema} and c.relkind in ('r', 'v', 'p', 'f')`.execute(this.#db);
    return r.rows.map((row) => ({
      name: row.name,
      schema: this.#schema,
      isView: row.kind === 'v',
      isForeign: row.kind === 'f',
      columns: [],
    }));
  }
}

class WatchedDriver implements Driver {
  readonly #conn: Kysely<unknown>;
  readonly #chain: FailureChain;
  #trx: ControlledTransaction<unknown> | null = null;
  readonly #connection: DatabaseConnection;

  constructor(conn: Kysely<unknown>, chain: FailureChain) {
    this.#conn = conn;
    this.#chain = chain;
    this.#connection = {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        this.#watch(() => (this.#trx ?? this.#conn).executeQuery<R>(query)),
      streamQuery: () => {
        throw new Error('streaming is not supported on the migration connection');
      },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    this.#trx = await this.#watch(() => this.#conn.startTransaction().execute());
  }

  async commitTransaction(): Promise<void> {
    const trx = this.#end();
    await this.#watch(() => trx.commit().execute());
  }

  async rollbackTransaction(): Promise<void> {
    const trx = this.#end();
    await this.#watch(() => trx.rollback().execute());
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {}

  #end(): ControlledTransaction<unknown> {
    const trx = this.#trx;
    if (!trx) throw new Error('no transaction in progress on the migration connection');
    this.#trx = null;
    return trx;
  }

  async #watch<R>(fn: () => Promise<R>): Promise<R> {
    try {
      const result = await fn();
      this.#chain.succeeded();
      return result;
    } catch (err) {
      this.#chain.failed(err);
      throw err;
    }
  }
}
