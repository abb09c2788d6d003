import { MemoryAdmin } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, memSession, searchMemories } from '../src/index.js';
import { agentWith, echoModel, runner } from './harness.js';
import { quiet, testStores } from './stores.js';

afterEach(() => closeSharedRuntimes());

const STORES = testStores('grants');

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
