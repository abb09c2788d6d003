/**
 * `InMemoryStore`: every mem01 port in process. A thin facade over the role modules, which share one `MemoryState`:
 * `beliefs.ts` (commit, reads, history, import, forget), `lexical-search.ts`, `vector-search.ts`, `outbox.ts`,
 * `transcript.ts` and `admin.ts`.
 */

import { type FullStore, InvalidInputError } from '@mem01/engine';
import type { StoreCapabilities, StoreInfo } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import * as admin from './admin.js';
import * as beliefs from './beliefs.js';
import * as governance from './governance.js';
import { searchLexical } from './lexical-search.js';
import * as outbox from './outbox.js';
import { MAX_TEXT_BYTES, MemoryState } from './state.js';
import * as transcript from './transcript.js';
import { searchVector } from './vector-search.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Fixed embedding dimension. Without it, the first embedding written fixes it; every later embedding and query
   * vector must have the same length.
   */
  readonly dimensions?: number | undefined;
}

/**
 * Schema version reported by {@link InMemoryStore.info}; the memory store has no persisted schema. 2: operation keys,
 * capture grants, budget counters, host metadata, origins and access counts (as SQLite 5 and Postgres 2). 3: captures
 * bound to their grant, and grants with keys and host ids (as SQLite 7 and Postgres 4).
 */
export const MEMORY_SCHEMA_VERSION = 3;

const CAPABILITIES: StoreCapabilities = Object.freeze({
  vectorSearch: 'exact',
  vectorIndex: 'exact-cosine',
  lexicalIndex: 'inverted-bm25',
  durableOutbox: false,
  multiProcess: false,
  // Its outbox lives and dies with the process: no claim outlives its holder.
  ownerLiveness: false,
});

/** The port methods, from the role modules. */
const ROLES = {
  ...beliefs,
  ...admin,
  ...governance,
  ...outbox,
  ...transcript,
  searchLexical,
  searchVector,
};

/**
 * Every mem01 port in process, with the semantics of a database store: records are copied in and out, commits are
 * validated completely before anything is applied (so they are atomic), and one scope never sees another's data.
 * Nothing is durable: the outbox and everything else are lost with the process.
 *
 * Lexical search is BM25 over a per-scope inverted index of stemmed, stop-word-free terms, maintained on every
 * commit and forget; vector search is exact cosine over the scope's unit-length embeddings.
 */
export class InMemoryStore
  extends kit.storeClass<MemoryState>(ROLES, {
    maxTextBytes: () => MAX_TEXT_BYTES,
    guard: (state) => state.assertOpen(),
  })
  implements FullStore
{
  readonly name = 'memory';
  readonly capabilities: StoreCapabilities = CAPABILITIES;
  readonly #state: MemoryState;

  constructor(options: MemoryStoreOptions = {}) {
    const d = options.dimensions;
    if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 1)) {
      throw new InvalidInputError('dimensions', `must be a positive integer, got ${String(d)}`);
    }
    const state = new MemoryState(d ?? null);
    super(state);
    this.#state = state;
  }

  async info(): Promise<StoreInfo> {
    this.#state.assertOpen();
    return {
      name: this.name,
      schemaVersion: MEMORY_SCHEMA_VERSION,
      capabilities: this.capabilities,
      dimensions: this.#state.dimensions,
      outbox: outbox.countBacklog(this.#state, Date.now(), null),
    };
  }

  async close(): Promise<void> {
    this.#state.closed = true;
  }
}

/** Creates an empty in-memory store. */
export function createMemoryStore(options: MemoryStoreOptions = {}): InMemoryStore {
  return new InMemoryStore(options);
}
