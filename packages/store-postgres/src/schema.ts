/**
 * Opening a PostgreSQL schema: creating it and applying the migrations (`migrations.ts`) under advisory locks, or
 * loading an already migrated one; the vector mode (pgvector HNSW or exact cosine) is fixed at the first migration.
 */
import {
  CapabilityError,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  SchemaTooNewError,
  StoreError,
} from '@mem01/engine';
import { sql, type Transaction } from 'kysely';
import { Migrator } from 'kysely/migration';
import { type Db, type PgConnection, STORE_NAME } from './connection.js';
import { migrationError, toStoreError } from './errors.js';
import { migrationProvider, POSTGRES_SCHEMA_VERSION, type VectorMode } from './migrations.js';
import { DEFAULT_DIMENSIONS } from './options.js';
import { FailureChain, withWatchedConnection } from './watched-connection.js';

/**
 * Creates the schema and applies pending migrations. Safe to run from several processes at once: the
 * preparation holds a transaction-scoped advisory lock and kysely's Migrator holds its own advisory lock.
 * Throws `SchemaTooNewError` when the database was written by a newer version.
 */
export async function migrate(c: PgConnection): Promise<void> {
  const o = c.options;
  // One connection for the whole migration, watched: when it dies, the error reported is the one that started
  // the failure, not the failed rollback or lock release after it.
  const chain = new FailureChain();
  try {
    await withWatchedConnection(c.db, o.schema, chain, async (db) => {
      const prep = await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`mem01:migrate:${o.schema}`}))`.execute(trx);
        await sql`create schema if not exists ${sql.id(o.schema)}`.execute(trx);
        const meta = await readMeta(c, trx);
        let mode: VectorMode;
        if (meta) {
          mode = meta.mode;
          if (o.vector === 'pgvector' && mode !== 'pgvector') {
            throw new ConfigError(
              `postgres schema ${o.schema} was created without pgvector (exact cosine); vector: 'pgvector' cannot be used with it`,
            );
          }
        } else if (o.vector === 'exact') {
          mode = 'exact';
        } else {
          mode = (await ensureVectorExtension(trx)) ? 'pgvector' : 'exact';
          if (mode === 'exact') {
            if (o.vector === 'pgvector') {
              throw new CapabilityError(
                STORE_NAME,
                'the pgvector extension (CREATE EXTENSION vector failed)',
              );
            }
            o.logger.warn(
              `mem01 postgres: the pgvector extension is not available; embeddings are stored as real[] and searched by exact cosine (schema ${o.schema})`,
            );
          }
        }
        const extensionSchema = mode === 'pgvector' ? await vectorExtensionSchema(trx) : null;
        return { mode, extensionSchema, dimensions: meta?.dimensions ?? o.dimensions ?? DEFAULT_DIMENSIONS };
      });
      const migrator = new Migrator({
        db,
        provider: migrationProvider({ schema: o.schema, ...prep }),
        migrationTableSchema: o.schema,
      });
      const result = await migrator.migrateToLatest();
      if (result.error) throw result.error;
    });
  } catch (err) {
    throw migrationError(err, chain.first, c.limits());
  }
  await load(c);
}

/** Reads the schema version, mode and dimensions of an already migrated schema. */
export async function load(c: PgConnection): Promise<void> {
  const o = c.options;
  try {
    const meta = await readMeta(c, c.db);
    if (!meta) throw new StoreError(`postgres schema ${o.schema} is not migrated (open with migrate: true)`);
    if (meta.version < POSTGRES_SCHEMA_VERSION) {
      throw new StoreError(
        `postgres schema ${o.schema} has version ${meta.version}, older than ${POSTGRES_SCHEMA_VERSION}; run migrate()`,
      );
    }
    if (o.dimensions !== null && o.dimensions !== meta.dimensions) {
      throw new DimensionMismatchError(
        meta.dimensions,
        o.dimensions,
        `postgres schema ${o.schema} dimensions`,
      );
    }
    let iterativeScan = false;
    let extensionSchema: string | null = null;
    if (meta.mode === 'pgvector') {
      const ext = await sql<{ extversion: string; ns: string }>`
        select extversion, extnamespace::regnamespace::text as ns from pg_extension where extname = 'vector'`.execute(
        c.db,
      );
      const row = ext.rows[0];
      if (!row)
        throw new CorruptStoreError(`postgres schema ${o.schema} uses pgvector but the extension is missing`);
      extensionSchema = row.ns.replace(/^"|"$/g, '');
      const [major = 0, minor = 0] = row.extversion.split('.').map(Number);
      iterativeScan = major > 0 || minor >= 8;
    }
    c.loaded = {
      dimensions: meta.dimensions,
      mode: meta.mode,
      extensionSchema,
      iterativeScan,
      schemaVersion: meta.version,
    };
  } catch (err) {
    throw toStoreError(err, 'load', c.limits());
  }
}

async function readMeta(
  c: PgConnection,
  db: Db,
): Promise<{ version: number; dimensions: number; mode: VectorMode } | null> {
  const exists = await sql<{
    t: string | null;
  }>`select to_regclass(${`${c.options.schema}.meta`})::text as t`.execute(db);
  if (!exists.rows[0]?.t) return null;
  const rows = await sql<{ key: string; value: string }>`select key, value from ${c.t('meta')}`.execute(db);
  const map = new Map(rows.rows.map((r) => [r.key, r.value]));
  const version = Number(map.get('schema_version'));
  const dimensions = Number(map.get('dimensions'));
  const mode = map.get('vector_mode');
  if (
    !Number.isInteger(version) ||
    !Number.isInteger(dimensions) ||
    (mode !== 'pgvector' && mode !== 'exact')
  ) {
    throw new CorruptStoreError(`postgres schema ${c.options.schema}: unreadable meta table`);
  }
  if (version > POSTGRES_SCHEMA_VERSION) {
    throw new SchemaTooNewError(`postgres schema ${c.options.schema}`, version, POSTGRES_SCHEMA_VERSION);
  }
  return { version, dimensions, mode };
}

async function ensureVectorExtension(trx: Transaction<unknown>): Promise<boolean> {
  const present = await sql`select 1 from pg_extension where extname = 'vector'`.execute(trx);
  if (present.rows.length > 0) return true;
  await sql`savepoint mem01_vector`.execute(trx);
  try {
    await sql`select pg_advisory_xact_lock(hashtext('mem01:create-extension-vector'))`.execute(trx);
    await sql`create extension if not exists vector`.execute(trx);
    await sql`release savepoint mem01_vector`.execute(trx);
    return true;
  } catch {
    await sql`rollback to savepoint mem01_vector`.execute(trx);
    return false;
  }
}

async function vectorExtensionSchema(db: Db): Promise<string> {
  const r = await sql<{ ns: string }>`
    select extnamespace::regnamespace::text as ns from pg_extension where extname = 'vector'`.execute(db);
  return (r.rows[0]?.ns ?? 'public').replace(/^"|"$/g, '');
}
