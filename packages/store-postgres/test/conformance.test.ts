import type { ProcessIdentity } from '@mem01/engine/store-kit';
import { runStoreConformance } from '@mem01/store-conformance';
import { quiet } from '@mem01/test-kit';
import { afterAll, describe } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../src/index.js';
import {
  connectClient,
  dropSchema,
  realHasPgvector,
  type Target,
  uniqueSchema,
  urlOf,
  vectorModeOf,
} from './helpers.js';

const TABLES =
  'beliefs, audit, outbox, transcript_sessions, transcript_items, transcript_operations, operations, capture_grants, budget_usage';

/**
 * One schema per dimension per run (migrated by the store on first use, dropped after the run); every `open`
 * starts from empty tables. `openSecond` is another pool on the same schema.
 */
function harness(target: Target) {
  const schemas = new Map<number, string>();
  let last = '';
  const vector = vectorModeOf(target);
  const open = (schema: string, dimensions?: number, leaseOwner?: ProcessIdentity): Promise<PostgresStore> =>
    openPostgresStore({
      leaseOwner,
      connectionString: urlOf(target),
      schema,
      dimensions,
      vector,
      logger: quiet,
      maxConnections: 4,
    });
  afterAll(async () => {
    for (const schema of schemas.values()) await dropSchema(urlOf(target), schema);
  });
  return {
    async open({ dimensions }: { dimensions: number }) {
      const existing = schemas.get(dimensions);
      if (existing) {
        const client = await connectClient(urlOf(target));
        // DELETE, not TRUNCATE: the tables are tiny, and TRUNCATE's new files cost fsyncs on a busy machine.
        await client.query(
          TABLES.split(', ')
            .map((t) => `delete from "${existing}".${t}`)
            .join(';'),
        );
        await client.end();
      } else {
        schemas.set(dimensions, uniqueSchema(`c${target}${dimensions}`));
      }
      last = schemas.get(dimensions)!;
      return open(last, dimensions);
    },
    async openSecond() {
      return open(last);
    },
    /** Another pool on the same schema whose claims are recorded for `leaseOwner`. */
    async openAs(leaseOwner: ProcessIdentity) {
      return open(last, undefined, leaseOwner);
    },
    /** A session with no owner (NULL), as sessions appended without one before owners were required are. */
    async writeUnownedSession(sessionId: string, items: readonly unknown[]) {
      const client = await connectClient(urlOf(target));
      try {
        await client.query('begin');
        await client.query(`insert into "${last}".transcript_sessions (session_id) values ($1)`, [sessionId]);
        for (const [position, item] of items.entries()) {
          await client.query(
            `insert into "${last}".transcript_items (session_id, position, item) values ($1, $2, $3)`,
            [sessionId, position, JSON.stringify(item)],
          );
        }
        await client.query('commit');
      } finally {
        await client.end();
      }
    },
  };
}

describe('real server, exact cosine', () => runStoreConformance('postgres', harness('real')));
describe.runIf(realHasPgvector)('real server with pgvector HNSW', () =>
  runStoreConformance('postgres', harness('real-pgvector')),
);
describe('PGlite with pgvector HNSW', () => runStoreConformance('postgres', harness('pglite')));
