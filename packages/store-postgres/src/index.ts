/**
 * @mem01/store-postgres: a mem01 store on PostgreSQL (kysely + pg), with pgvector HNSW or an exact-cosine
 * fallback, and a durable outbox that several worker processes share.
 */

export type { VectorMode } from './migrations.js';
export type { PostgresStoreOptions } from './options.js';
export { openPostgresStore, POSTGRES_SCHEMA_VERSION, PostgresStore } from './postgres-store.js';
