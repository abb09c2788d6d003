/**
 * What the MCP server returns to a client, and what it logs, carries no secret in any form: a failing extractor and a
 * failing store (a real SQLite file whose lexical search throws a driver error carrying a credential), in strict and
 * failure-open engines, reached with the SDK's own client in-process.
 */
import { join } from 'node:path';
import { MemoryEngine } from '@mem01/engine';
import { CREDENTIAL_FORMS, leakedSecret, WordHashEmbedder } from '@mem01/engine/testing';
import { openSqliteStore } from '@mem01/store-sqlite';
import { failingExtractor, failingMethod, failureCase, failureOf, quiet } from '@mem01/test-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryServer } from '../src/index.js';
import { tempDirForFile } from './helpers.js';

const dir = tempDirForFile();

describe('the MCP server returns and logs no secret, in any form', () => {
  for (const strict of [true, false]) {
    it(`failing extractor and store, ${strict ? 'strict' : 'failure-open'}: every form`, async () => {
      let n = 0;
      for (const form of CREDENTIAL_FORMS) {
        const [c] = fc.sample(failureCase(form), 1);
        if (!c) throw new Error('no sample');
        const store = openSqliteStore({
          path: join(dir.path, `leak-${strict}-${n++}.db`),
          dimensions: 16,
          logger: quiet,
        });
        const engine = new MemoryEngine({
          store: failingMethod(store, 'searchLexical', () => failureOf(c)),
          extractor: failingExtractor(() => failureOf(c)),
          embedder: new WordHashEmbedder(16),
          config: { strict, maxAttempts: 1 },
        });
        const logs: string[] = [];
        const server = createMemoryServer({
          engine,
          access: { mode: 'single', userId: 'alice' },
          log: (line) => logs.push(line),
        });
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await server.connect(serverSide);
        const client = new Client({ name: 'secrets-test', version: '1.0.0' });
        await client.connect(clientSide);

        const results = [
          await client.callTool({ name: 'add_memory', arguments: { text: 'I live in Lisbon.', wait: true } }),
          await client.callTool({ name: 'search_memory', arguments: { query: 'where do I live' } }),
          await client.callTool({ name: 'list_memories', arguments: {} }),
        ];
        await client.close();
        await engine.close();
        await store.close();

        const all = [JSON.stringify(results), ...logs].join('\n');
        expect(leakedSecret(all, c.parts), `${form.id}: ${all}`).toBeNull();
        // The failures reached the client (masked), not a silent success.
        expect(
          results.some((r) => r.isError === true),
          form.id,
        ).toBe(true);
        expect(all, form.id).toMatch(/upstream failed|internal_error/);
      }
    });
  }
});
