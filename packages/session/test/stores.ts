/**
 * The three stores the session's end-to-end tests run on (memory, a SQLite file, PostgreSQL in a schema of its own),
 * each test file's own: files and schemas are removed after its tests, and nothing else is touched.
 */
import { join } from 'node:path';
import type { FullStore } from '@mem01/engine';
import { createMemoryStore } from '@mem01/store-memory';
import { openPostgresStore } from '@mem01/store-postgres';
import { openSqliteStore } from '@mem01/store-sqlite';
import { dropPgSchema, quiet, TEST_PG_URL, type TempDir, tempDir } from '@mem01/test-kit';
import { afterAll } from 'vitest';

export { quiet };
export const PG_URL = TEST_PG_URL;

/** The stores of one test file, named; `prefix` names its temp directories and Postgres schemas. */
export function testStores(prefix: string): { readonly name: string; open(): Promise<FullStore> }[] {
  const dirs: TempDir[] = [];
  const schemas: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) dir.remove();
    for (const schema of schemas) await dropPgSchema(schema);
  });
  return [
    { name: 'memory', open: async () => createMemoryStore() },
    {
      name: 'SQLite',
      open: async () => {
        const dir = tempDir(`mem01session-${prefix}-`);
        dirs.push(dir);
        return openSqliteStore({ path: join(dir.path, 'memory.db'), logger: quiet });
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
