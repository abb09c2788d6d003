import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, getMemoryContext, memSession, searchMemories } from '../src/index.js';
import { agentWith, echoModel, runner } from './harness.js';
import { quiet, testStores } from './stores.js';

afterEach(() => closeSharedRuntimes());

const STORES = testStores('clear');

describe.each(STORES)('clearMemory on the $name store', (kind) => {
  it('deletes every record of the user in this namespace, leaves the transcripts byte-identical, and recall finds nothing', async () => {
    const store = await kind.open();
    try {
      const options = {
        userId: 'clara',
        store,
        extractor: new KeyValueExtractor(),
        // The Postgres store's default dimension.
        embedder: new WordHashEmbedder(384),
        env: {},
        logger: quiet,
      };
      const session = memSession('clear-conv', options);
      const work = memSession('clear-work', { ...options, namespace: 'work' });
      const other = memSession('clear-other', { ...options, userId: 'otto' });
      const model = echoModel();
      const agent = agentWith(model);
      for (const text of ['home_city=Lisbon', 'home_city=Porto', 'pet=heron']) {
        await runner().run(agent, text, { session, ...session.runConfig() });
      }
      await runner().run(agent, 'editor=vim', { session: work, ...work.runConfig() });
      await runner().run(agent, 'home_city=Lisbon', { session: other, ...other.runConfig() });
      await session.flushMemory();
      const pet = (await session.memoryHistory({ kinds: ['fact'] })).find((b) => b.value === 'heron')!;
      await session.forgetMemory(pet.id);
      const history = await session.memoryHistory({ includeInvalidated: true });
      // The model's replies are kept too (listed when asked for), and erased with the rest.
      const replies = await session.memoryHistory({ includeInvalidated: true, kinds: ['reply'] });
      expect(replies.length).toBeGreaterThan(0);
      expect(new Set(history.map((b) => b.status))).toEqual(new Set(['active', 'superseded', 'forgotten']));

      // A turn accepted but not yet extracted: clearMemory waits for it, so it is erased too, not written after.
      await runner().run(agent, 'drink=tea', { session, ...session.runConfig() });
      const transcript = JSON.stringify(await session.getItems());
      const workTranscript = JSON.stringify(await work.getItems());
      const otherTranscript = JSON.stringify(await other.getItems());
      const receipt = await session.clearMemory();
      // The tea turn's fact, episode and reply were written before the erase, and erased with the rest.
      expect(receipt).toMatchObject({
        beliefs: history.length + replies.length + 3,
        transcriptItems: 0,
        operations: 0,
        grants: 0,
      });
      expect(receipt.outboxEntries).toBeGreaterThanOrEqual(4);
      expect(receipt.auditEvents).toBeGreaterThan(0);

      expect(await session.memoryHistory({ includeInvalidated: true })).toEqual([]);
      await session.flushMemory();
      expect(await session.memoryHistory({ includeInvalidated: true })).toEqual([]);
      expect(await searchMemories({ session, query: 'home city Lisbon Porto heron tea' })).toEqual([]);
      expect((await getMemoryContext({ session, query: 'where do I live?' })).beliefs).toEqual([]);
      // The transcripts are untouched, byte for byte.
      expect(JSON.stringify(await session.getItems())).toBe(transcript);
      expect(JSON.stringify(await work.getItems())).toBe(workTranscript);
      expect(JSON.stringify(await other.getItems())).toBe(otherTranscript);

      // The next run recalls nothing of the erased memory, and memory starts again from it.
      await runner().run(agent, 'which home_city do I have?', { session, ...session.runConfig() });
      const block = JSON.stringify(model.calls.at(-1)?.request.input).match(
        /<mem01-memory[\s\S]*?<\/mem01-memory>/,
      )?.[0];
      expect(block).toContain('(no relevant notes recalled)');
      expect(block).not.toMatch(/\b(Lisbon|Porto|heron|tea)\b/);
      await runner().run(agent, 'home_city=Faro', { session, ...session.runConfig() });
      expect((await session.memoryHistory({ kinds: ['fact'] })).map((b) => b.value)).toEqual(['Faro']);

      // The user's other namespace and the other user keep everything.
      expect((await work.memoryHistory({ kinds: ['fact'] })).map((b) => b.value)).toEqual(['vim']);
      expect((await other.memoryHistory({ kinds: ['fact'] })).map((b) => b.value)).toEqual(['Lisbon']);
      for (const s of [session, work, other]) await s.close();
    } finally {
      await closeSharedRuntimes();
      await store.close();
    }
  });
});
