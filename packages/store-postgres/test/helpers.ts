import { type Belief, type BeliefSource, createBelief, type Scope } from '@mem01/engine';
import { quiet, TEST_PG_URL, uniquePgName } from '@mem01/test-kit';
import pg from 'pg';
import { inject } from 'vitest';
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../src/index.js';

/** The machine's PostgreSQL server. Whether it has pgvector is detected in global-setup.ts, never assumed. */
export const REAL_URL = TEST_PG_URL;

/**
 * Where a test runs:
 * - `real`: the machine's server in exact-cosine mode, asked for explicitly (`vector: 'exact'`), whatever the
 *   server offers;
 * - `real-pgvector`: the machine's server with pgvector HNSW, only where the server has the extension;
 * - `pglite`: PGlite with pgvector HNSW, always available.
 */
export type Target = 'real' | 'real-pgvector' | 'pglite';

/** The real server has pgvector (detected in global-setup.ts). */
export const realHasPgvector: boolean = inject('realHasPgvector');

/** Every target this machine offers. */
export const TARGETS: readonly Target[] = realHasPgvector
  ? ['real', 'real-pgvector', 'pglite']
  : ['real', 'pglite'];

export function urlOf(target: Target): string {
  return target === 'pglite' ? inject('pgliteUrl') : REAL_URL;
}

/** The vector mode a target runs in. */
export function vectorModeOf(target: Target): 'exact' | 'pgvector' {
  return target === 'real' ? 'exact' : 'pgvector';
}

/** Targets search with HNSW (approximate) rather than exactly. */
export function usesHnsw(target: Target): boolean {
  return vectorModeOf(target) === 'pgvector';
}

/** `REAL_URL` with an `application_name`: a test that terminates backends picks only those of its own name. */
export function withAppName(name: string): string {
  // The server cuts longer names to 63 bytes, and a kill by the full name would then match nothing.
  if (Buffer.byteLength(name) > 63) throw new Error(`application_name longer than 63 bytes: ${name}`);
  const url = new URL(REAL_URL);
  url.searchParams.set('application_name', name);
  return url.toString();
}

export function uniqueSchema(prefix = 't'): string {
  return uniquePgName(prefix);
}

/** How long a test waits for a free connection slot on a server that other test runs have filled. */
const CONNECT_RETRY_MS = 60_000;

/**
 * Runs `connect`, retrying while the server refuses for lack of connection slots (53300) or is starting up
 * (57P03). The machine's server is shared with other checkouts' test runs, whose pools can fill
 * `max_connections` for a while; the store itself retries the same way when it opens (`openRetryMs`).
 */
export async function retryConnect<T>(connect: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + CONNECT_RETRY_MS;
  for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await connect();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if ((code !== '53300' && code !== '57P03') || Date.now() + pause > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** A connected client of its own (see {@link retryConnect}). */
export async function connectClient(url: string): Promise<pg.Client> {
  return retryConnect(async () => {
    const client = new pg.Client({ connectionString: url });
    // A server that resets the socket on goodbye (pglite-socket does) must not crash the test process.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  });
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = await connectClient(url);
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** Opens stores on unique schemas and drops them all in `cleanup`. */
export class StoreFactory {
  readonly #opened: PostgresStore[] = [];
  readonly #schemas = new Set<string>();
  lastSchema: string | null = null;
  constructor(readonly target: Target) {}

  get url(): string {
    return urlOf(this.target);
  }

  async open(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const schema = options.schema ?? uniqueSchema(this.target);
    this.#schemas.add(schema);
    this.lastSchema = schema;
    const store = await openPostgresStore({
      connectionString: this.url,
      vector: vectorModeOf(this.target),
      logger: quiet,
      maxConnections: 4,
      ...options,
      schema,
    });
    this.#opened.push(store);
    return store;
  }

  async cleanup(): Promise<void> {
    for (const s of this.#opened.splice(0)) await s.close();
    for (const schema of this.#schemas) await dropSchema(this.url, schema);
    this.#schemas.clear();
  }
}

/** Fact number `i` of a bulk test: a distinct key (`k<i>`) and value per number, full confidence. */
export function numberedFact(scope: Scope, i: number, at: string, source: BeliefSource = 'manual'): Belief {
  return createBelief({
    scope,
    kind: 'fact',
    subject: 'user',
    attribute: `k${i}`,
    value: `${i}`,
    statement: `Fact ${i}.`,
    confidence: 1,
    source,
    at,
  });
}
