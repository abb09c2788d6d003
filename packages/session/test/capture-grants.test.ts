/**
 * Capture grants bound to what they captured, as a host using the session sees them, through the real `Runner` with
 * an offline model, on the memory, SQLite and PostgreSQL stores: turns a run saves while a grant is active are bound
 * to it; once the host revokes it, the next run's block, `searchMemories` and `memoryHistory()` leave that memory out,
 * while `memoryHistory({ includeInvalidated: true })` still shows the records with their grant.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FullStore, MemoryAdmin } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { openPostgresStore } from '@mem01/store-postgres';
import { openSqliteStore } from '@mem01/store-sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, memSession, searchMemories } from '../src/index.js';
import { agentWith, echoModel, runner } from './harness.js';

const quiet = { info: () => {}, warn: () => {} };
const PG_URL = process.env.MEM01_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

const dirs: string[] = [];
const pgSchemas: string[] = [];
afterEach(() => closeSharedRuntimes());
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  if (pgSchemas.length === 0) return;
  // pg through the Postgres store's own dependency: this package does not depend on the driver.
  const pg = createRequire(createRequire(import.meta.url).resolve('@mem01/store-postgres'))('pg') as {
    Client: new (o: {
      connectionString: string;
    }) => { connect(): Promise<void>; query(sql: string): Promise<unknown>; end(): Promise<void> };
  };
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const schema of pgSchemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
});

const STORES: { readonly name: string; open(): Promise<FullStore> }[] = [
  { name: 'memory', open: async () => createMemoryStore() },
  {
    name: 'SQLite',
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mem01session-grants-'));
      dirs.push(dir);
      return openSqliteStore({ path: join(dir, 'memory.db'), logger: quiet });
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const schema = `session_grants_${process.pid}_${pgSchemas.length}`;
      pgSchemas.push(schema);
      return openPostgresStore({ connectionString: PG_URL, schema, logger: quiet, maxConnections: 2 });
    },
  },
];

describe.each(STORES)('capture grants through the session on the $name store', (kind) => {
  it('a revoked grant takes what it captured out of the block, search and history; includeInvalidated keeps it', async () => {
    const store = await kind.open();
    try {
      const options = {
        userId: 'gina',
        store,
        extractor: new KeyValueExtractor(),
        embedder: new WordHashEmbedder(384),
        env: {},
        logger: quiet,
      };
      const session = memSession('grant-conv', options);
      const admin = new MemoryAdmin({ store });
      const grant = await admin.grantCapture(
        { userId: 'gina' },
        { intent: 'Remember where you live', key: 'consent-1', policyId: 'privacy-v2', principalId: 'gina' },
      );
      const model = echoModel();
      const agent = agentWith(model);
      await runner().run(agent, 'home_city=Lisbon', { session, ...session.runConfig() });
      await session.flushMemory();
      const [lisbon] = await session.memoryHistory({ kinds: ['fact'] });
      expect([lisbon?.value, lisbon?.grantId]).toEqual(['Lisbon', grant.id]);
      await runner().run(agent, 'which home_city do I have?', { session, ...session.runConfig() });
      expect(JSON.stringify(model.calls.at(-1)?.request.input)).toContain('Lisbon');

      expect(await admin.revokeCapture({ userId: 'gina' }, { id: grant.id })).toBe(1);
      await runner().run(agent, 'which home_city do I have now?', { session, ...session.runConfig() });
      const block = JSON.stringify(model.calls.at(-1)?.request.input).match(
        /<mem01-memory[\s\S]*?<\/mem01-memory>/,
      )?.[0];
      expect(block).toContain('(no relevant notes recalled)');
      expect(block).not.toContain('Lisbon');
      expect(await searchMemories({ session, query: 'home city Lisbon' })).toEqual([]);
      // The question itself was captured with no grant active: it is the only current memory left (an episode).
      expect((await session.memoryHistory()).map((b) => [b.kind, b.grantId])).toEqual([
        ['episode', undefined],
      ]);
      const kept = await session.memoryHistory({ includeInvalidated: true, kinds: ['fact'] });
      expect(kept.map((b) => [b.value, b.status, b.grantId])).toEqual([['Lisbon', 'active', grant.id]]);
      await session.close();
    } finally {
      await closeSharedRuntimes();
      await store.close();
    }
  });
});
