/**
 * `@mem01/store-memory`: every mem01 store port in process, with the semantics of the database stores.
 * @packageDocumentation
 */

export {
  createMemoryStore,
  InMemoryStore,
  MEMORY_SCHEMA_VERSION,
  type MemoryStoreOptions,
} from './memory-store.js';
