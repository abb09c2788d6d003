/**
 * Opening while the server restarts: its first connections are dropped (as a server shutting down or starting up
 * does). The store retries with a growing pause, within `openRetryMs`, and opens once the server answers; a
 * permanent failure still fails, with the password kept out of the message. A migration whose connection is
 * terminated is retried the same way and reports the termination, not the failed cleanup after it; a migration
 * that fails in SQL is not retried.
 */
import { createServer, type Server, Socket } from 'node:net';
import { StoreError } from '@mem01/engine';
import { quiet } from '@mem01/test-kit';
import { Kysely, PostgresDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore, POSTGRES_SCHEMA_VERSION } from '../src/index.js';
import { migrationProvider } from '../src/migrations.js';
import { connectClient, dropSchema, REAL_URL, retryConnect, uniqueSchema, withAppName } from './helpers.js';

/** A TCP proxy to the real server that drops the first `drops` connections at once. */
async function flakyProxy(
  drops: number,
): Promise<{ url: string; dropped: () => number; close: () => Promise<void> }> {
  const target = new URL(REAL_URL);
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (dropped < drops) {
      dropped++;
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.connect(Number(target.port || 5432), target.hostname, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(REAL_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('opening while the server restarts', () => {
  it('retries dropped connections and opens once the server answers', async () => {
    const proxy = await flakyProxy(3);
    cleanups.push(proxy.close);
    const schema = uniqueSchema('reopen');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    const warnings: string[] = [];
    const store = await openPostgresStore({
      connectionString: proxy.url,
      schema,
      dimensions: 4,
      vector: 'exact',
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    cleanups.push(() => store.close());
    expect(proxy.dropped()).toBe(3);
    expect(warnings.filter((w) => /cannot open yet/.test(w)).length).toBeGreaterThan(0);
    expect((await store.info()).schemaVersion).toBeGreaterThan(0);
  }, 60_000);

  it('gives up after openRetryMs with a clear error, and never prints the password', async () => {
    const proxy = await flakyProxy(Number.POSITIVE_INFINITY);
    cleanups.push(proxy.close);
    const url = new URL(proxy.url);
    url.username = 'postgres';
    url.password = 'hunter2-secret';
    const err = await openPostgresStore({
      connectionString: url.toString(),
      schema: uniqueSchema('never'),
      openRetryMs: 3000,
      logger: quiet,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(proxy.dropped()).toBeGreaterThan(1);
    expect(String((err as Error).message)).not.toContain('hunter2');
  }, 60_000);

  it('does not retry what waiting cannot fix (a bad option fails at once)', async () => {
    const proxy = await flakyProxy(0);
    cleanups.push(proxy.close);
    await expect(
      openPostgresStore({ connectionString: proxy.url, schema: uniqueSchema('nomig'), migrate: false }),
    ).rejects.toThrow(/not migrated/);
  });
});

/** A schema at version 1, as an older mem01 left it, so that opening it has a migration to apply. */
async function schemaAtVersion1(schema: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: REAL_URL, max: 1 });
  // A first connection while the shared server has a free slot; the pool keeps it for the migration below.
  (await retryConnect(() => pool.connect())).release();
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    await db.schema.createSchema(schema).execute();
    const ctx = { schema, dimensions: 4, mode: 'exact' as const, extensionSchema: null };
    const result = await new Migrator({
      db,
      provider: migrationProvider(ctx, 1),
      migrationTableSchema: schema,
    }).migrateToLatest();
    if (result.error) throw result.error;
  } finally {
    await db.destroy();
  }
}

/**
 * Opens `schema` under `app` while another session holds a lock on its beliefs table, so the migration to version 2
 * waits on it; terminates that waiting backend (the test's own, by its unique application name), then lets go.
 */
async function openWithMigrationKilled(
  schema: string,
  app: string,
  options: { openRetryMs?: number; warnings: string[] },
): Promise<unknown> {
  const locker = await connectClient(REAL_URL);
  // Another session: inside the locker's transaction pg_stat_activity would show one snapshot throughout.
  const killer = await connectClient(REAL_URL);
  try {
    // While the store waits here it holds kysely's migration lock, which is one per database: should this test
    // die, the server ends the locker soon, so no other run's migrations wait on it for long.
    await locker.query(`set idle_in_transaction_session_timeout = '20s'`);
    await locker.query('begin');
    await locker.query(`lock table "${schema}".beliefs in access exclusive mode`);
    let settled = false;
    const opening = openPostgresStore({
      connectionString: withAppName(app),
      schema,
      vector: 'exact',
      ...(options.openRetryMs === undefined ? {} : { openRetryMs: options.openRetryMs }),
      logger: { info: () => {}, warn: (m) => options.warnings.push(m) },
    }).then(
      (store) => store,
      (err: unknown) => err,
    );
    void opening.then(() => {
      settled = true;
    });
    // Wait for the migration to block on the table lock (not on an advisory lock another run's migration holds).
    while (!settled) {
      const r = await killer.query(
        `select count(pg_terminate_backend(pid)) as n from pg_stat_activity
          where application_name = $1 and wait_event_type = 'Lock' and wait_event = 'relation'`,
        [app],
      );
      if (Number(r.rows[0].n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(settled).toBe(false);
    await locker.query('rollback');
    return await opening;
  } finally {
    await locker.end();
    await killer.end();
  }
}

describe('a migration whose connection dies', () => {
  it('reports the termination as the cause, not the failed rollback and lock release after it', async () => {
    const schema = uniqueSchema('mkill');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    await schemaAtVersion1(schema);
    const warnings: string[] = [];
    const err = await openWithMigrationKilled(schema, `mem01-mkill-${schema}`, { openRetryMs: 0, warnings });
    expect(err).toBeInstanceOf(StoreError);
    const message = (err as Error).message;
    expect(message).toMatch(
      /^postgres: migrate: the database connection was lost \(terminating connection due to administrator command\)/,
    );
    expect((err as Error).cause).toMatchObject({ code: '57P01' });
    expect(warnings.filter((w) => /cannot open yet/.test(w))).toEqual([]);
  }, 60_000);

  it('is retried within openRetryMs, and the store opens migrated', async () => {
    const schema = uniqueSchema('mretry');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    await schemaAtVersion1(schema);
    const warnings: string[] = [];
    const store = await openWithMigrationKilled(schema, `mem01-mretry-${schema}`, {
      openRetryMs: 30_000,
      warnings,
    });
    expect(store).not.toBeInstanceOf(Error);
    const opened = store as Awaited<ReturnType<typeof openPostgresStore>>;
    cleanups.push(() => opened.close());
    expect((await opened.info()).schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    expect(
      warnings.filter((w) => /cannot open yet .*terminating connection due to administrator command/.test(w)),
    ).toHaveLength(1);
    const scope = { userId: 'u' };
    expect(await opened.get(scope, 'missing')).toBeNull();
  }, 60_000);

  it('a migration that fails in SQL is not retried', async () => {
    const schema = uniqueSchema('msql');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    await schemaAtVersion1(schema);
    // Version 2 creates this table: finding it there already is an error no retry can fix.
    const client = await connectClient(REAL_URL);
    await client.query(`create table "${schema}".operations (x int)`);
    await client.end();
    const warnings: string[] = [];
    const err = await openPostgresStore({
      connectionString: REAL_URL,
      schema,
      vector: 'exact',
      openRetryMs: 30_000,
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toMatch(
      /postgres: migrate failed \[42P07\]: relation "operations" already exists/,
    );
    expect((err as Error).cause).toMatchObject({ code: '42P07' });
    expect(warnings).toEqual([]);
  }, 60_000);
});

describe('migrating beside other schemas', () => {
  it('reads the catalog of its own schema only (a scan of every schema fails when another process drops one)', async () => {
    const schema = uniqueSchema('beside');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    const catalog: { sql: string; parameters: readonly unknown[] }[] = [];
    const pool = new pg.Pool({ connectionString: REAL_URL, max: 2 });
    (await retryConnect(() => pool.connect())).release();
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (/pg_namespace|pg_class|pg_attribute/.test(event.query.sql)) catalog.push(event.query);
      },
    });
    cleanups.push(() => db.destroy());
    const store = await openPostgresStore({ db, schema, vector: 'exact', dimensions: 4 });
    cleanups.push(() => store.close());
    expect((await store.info()).schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    expect(catalog.length).toBeGreaterThan(0);
    for (const q of catalog) {
      expect(q.sql).not.toMatch(/pg_attribute/);
      expect(q.parameters).toContain(schema);
    }
  });
});
