import { TEST_PG_URL as REAL_URL } from '@mem01/test-kit';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startPgliteServer } from './pglite-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteUrl: string;
    /** The real server can create the `vector` extension (pgvector is installed there). */
    realHasPgvector: boolean;
    /** A server without pgvector: the real one when it lacks it, else a PGlite started without it. */
    noPgvectorUrl: string;
  }
}

/** Whether the server offers pgvector: a capability of the machine, detected rather than assumed. */
async function offersPgvector(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  // A server that resets the socket on goodbye (pglite-socket does) must not fail the whole run.
  client.on('error', () => {});
  await client.connect();
  try {
    const r = await client.query(`select 1 from pg_available_extensions where name = 'vector'`);
    return (r.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/**
 * One PGlite (pgvector) server for the whole run, on a random 127.0.0.1 port. The real server is probed for
 * pgvector; when it has it, a PGlite without pgvector stands in for "a server without the extension".
 */
export default async function setup(project: TestProject) {
  const server = await startPgliteServer();
  const realHasPgvector = await offersPgvector(REAL_URL);
  const bare = realHasPgvector ? await startPgliteServer({ pgvector: false }) : null;
  project.provide('pgliteUrl', server.url);
  project.provide('realHasPgvector', realHasPgvector);
  project.provide('noPgvectorUrl', bare?.url ?? REAL_URL);
  return async () => {
    await bare?.stop();
    await server.stop();
  };
}
