/**
 * @mem01/store-sqlite: the embedded default mem01 store. One SQLite file (via `node:sqlite`) holds the transcript,
 * the beliefs (FTS5 BM25 lexical index, sqlite-vec or exact-cosine vector search) and the durable outbox.
 * Importing it works on any Node.js; opening a store needs Node.js >= 22.13 (`node:sqlite`), and fails with
 * `UnsupportedRuntimeError` before that.
 */
export { MIGRATIONS, type Migration, SQLITE_SCHEMA_VERSION } from './migrations.js';
export { loadNodeSqlite, MIN_NODE_VERSION } from './node-sqlite.js';
export { openSqliteStore, type SqliteStoreOptions } from './open.js';
export { SqliteStore } from './sqlite-store.js';
