import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { openPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../src/index.js';

/** The machine's PostgreSQL server (no pgvector: the exact-cosine fallback). */
export const REAL_URL = process.env.MEM01_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type Target = 'real' | 'pglite';

export function urlOf(target: Target): string {
  return target === 'real' ? REAL_URL : inject('pgliteUrl');
}

export function uniqueSchema(prefix = 't'): string {
  return `mem01_${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
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
      vector: this.target === 'real' ? 'auto' : 'pgvector',
      logger: { info: () => {}, warn: () => {} },
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
