/**
 * The PostgreSQL server tests use: `MEM01_TEST_PG_URL`, else the machine's server at 127.0.0.1:5432 (trust auth,
 * database `test`). Whether it has pgvector is for each test to detect, never to assume.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** `MEM01_TEST_PG_URL` (empty counts as unset), else `postgres://postgres@127.0.0.1:5432/test`. */
export const TEST_PG_URL = process.env.MEM01_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A name no other test run uses, for a schema or a database: `mem01_<prefix>_<time>_<random>`, lower case, only
 * letters, digits and `_` (safe to quote in SQL).
 */
export function uniquePgName(prefix: string): string {
  return `mem01_${prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/** Runs `fn` with a connected client of `url` (default {@link TEST_PG_URL}), closed afterwards. */
export async function withPgClient<T>(fn: (client: pg.Client) => Promise<T>, url = TEST_PG_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'mem01-test' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops a schema a test created (and everything in it), if it exists. */
export async function dropPgSchema(schema: string, url = TEST_PG_URL): Promise<void> {
  await withPgClient((c) => c.query(`drop schema if exists "${checkName(schema)}" cascade`), url);
}

/** Creates a database of its own for a test; returns its URL (the server's URL with that database). */
export async function createPgDatabase(name: string, url = TEST_PG_URL): Promise<string> {
  await withPgClient((c) => c.query(`create database "${checkName(name)}"`), url);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return own.toString();
}

/** Drops a database a test created, ending its connections first. */
export async function dropPgDatabase(name: string, url = TEST_PG_URL): Promise<void> {
  await withPgClient((c) => c.query(`drop database if exists "${checkName(name)}" with (force)`), url);
}

function checkName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a test schema or database name: ${name}`);
  return name;
}
