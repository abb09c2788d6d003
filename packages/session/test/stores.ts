/**
 * The three stores the session's end-to-end tests run on (memory, a SQLite file, PostgreSQL in a schema of its own),
 * each test file's own: files and schemas are removed after its tests, and nothing else is touched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FullStore } from '@mem01/engine';
import { createMemoryStore } from '@mem01/store-memory';
import { openPostgresStore } from '@mem01/store-postgres';
import { openSqliteStore } from '@mem01/store-sqlite';
import { afterAll } from 'vitest';

export const quiet = { info: () => {}, warn: () => {} };
export const PG_URL = process.env.MEM01_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

export type PgClient = {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
};

/** A pg client, through the Postgres store's own dependency: this package does not depend on the driver. */
export function pgClient(connectionString = PG_URL): PgClient {
  const pg = createRequire(createRequire(import.meta.url).resolve('@mem01/store-postgres'))('pg') as {
    Client: new (o: { connectionString: string }) => PgClient;
  };
  return new pg.Client({ connectionString });
}

/** The stores of one test file, named; `prefix` names its temp directories and Postgres schemas. */
export function testStores(prefix: string): { readonly name: string; open(): Promise<FullStore> }[] {
  const dirs: string[] = [];
  const schemas: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (schemas.length === 0) return;
    const client = pgClient();
    await client.connect();
    try {
      for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
    } finally {
      await client.end();
    }
  });
  return [
    { name: 'memory', open: async () => createMemoryStore() },
    {
      name: 'SQLite',
      open: async () => {
        const dir = mkdtempSync(join(tmpdir(), `mem01session-${prefix}-`));
        dirs.push(dir);
        return openSqliteStore({ path: join(dir, 'memory.db'), logger: quiet });
      },
    },
    {
      name: 'PostgreSQL',
      open: async () => {
        const schema = `session_${prefix}_${process.pid}_${schemas.length}`;
        schemas.push(schema);
        return openPostgresStore({ connectionString: PG_URL, schema, logger: quiet, maxConnections: 2 });
      },
    },
  ];
}
