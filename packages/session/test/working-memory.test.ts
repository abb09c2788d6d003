import { ConfigError, type FullStore, InvalidInputError } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import type { AgentInputItem } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeSharedRuntimes,
  getMemoryContext,
  type MemSessionOptions,
  memSession,
  searchMemories,
} from '../src/index.js';
import { agentWith, echoModel, runner } from './harness.js';
import { quiet, testStores } from './stores.js';

afterEach(() => closeSharedRuntimes());

const STORES = testStores('wm');

/** The memory block of a model call's input. */
function blockOf(input: string | readonly AgentInputItem[] | undefined): string {
  const block = JSON.stringify(input).match(/<mem01-memory[\s\S]*?<\/mem01-memory>/)?.[0];
  expect(block).toBeDefined();
  return block as string;
}

function optionsOn(store: FullStore, extra: Partial<MemSessionOptions> = {}): MemSessionOptions {
  return {
    userId: 'wendy',
    store,
    extractor: new KeyValueExtractor(),
    // The Postgres store's default dimension.
    embedder: new WordHashEmbedder(384),
    env: {},
    logger: quiet,
    ...extra,
  };
}

describe.each(STORES)('working memory on the $name store', (kind) => {
  it('the latest turns of this conversation are not in the block; the same facts from another conversation are', async () => {
    const store = await kind.open();
    try {
      const options = optionsOn(store);
      const model = echoModel();
      const agent = agentWith(model);
      const older = memSession('wm-older', options);
      await runner().run(agent, 'home_city=Lisbon', { session: older, ...older.runConfig() });
      await older.close();

      const session = memSession('wm-now', options);
      expect(session.workingMemorySize).toBe('all');
      for (const text of ['car=Volvo', 'pet=heron']) {
        await runner().run(agent, text, { session, ...session.runConfig() });
      }
      const question = 'which car, pet and home_city do I have?';
      await runner().run(agent, question, { session, ...session.runConfig() });
      const input = model.calls.at(-1)?.request.input;
      const block = blockOf(input);
      // Said in another conversation: recalled.
      expect(block).toContain('Lisbon');
      // Said in this one: the model reads it in the history, so the block does not repeat it.
      expect(block).not.toMatch(/Volvo|heron/);
      expect(JSON.stringify(input)).toContain('car=Volvo');
      expect(JSON.stringify(input)).toContain('pet=heron');
      // Only the injected block leaves them out: the helpers recall from everything.
      const searched = await searchMemories({ session, query: 'car' });
      expect(searched.map((r) => r.belief.value).join(' ')).toContain('Volvo');
      expect((await getMemoryContext({ session, query: 'which pet do I have?' })).text).toContain('heron');
      await session.close();

      // Seen from the next conversation, they are long-term memory like any other.
      const next = memSession('wm-next', options);
      await runner().run(agent, question, { session: next, ...next.runConfig() });
      const nextBlock = blockOf(model.calls.at(-1)?.request.input);
      expect(nextBlock).toContain('Volvo');
      expect(nextBlock).toContain('heron');
      expect(nextBlock).toContain('Lisbon');
      await next.close();
    } finally {
      await closeSharedRuntimes();
      await store.close();
    }
  });
});

describe('workingMemorySize', () => {
  it('a count leaves out the latest user turns only: an earlier turn of the conversation is recalled', async () => {
    const options = optionsOn(createMemoryStore(), { workingMemorySize: 2 });
    const session = memSession('wm-two', options);
    const model = echoModel();
    const agent = agentWith(model);
    for (const text of ['car=Volvo', 'pet=heron', 'bike=Brompton']) {
      await runner().run(agent, text, { session, ...session.runConfig() });
    }
    await runner().run(agent, 'which car, pet and bike do I have?', { session, ...session.runConfig() });
    const block = blockOf(model.calls.at(-1)?.request.input);
    expect(block).toContain('Volvo');
    expect(block).not.toMatch(/heron|Brompton/);
    await session.close();
  });

  it('0 recalls from the current conversation too (from the option, or MEM01_WORKING_MEMORY_SIZE); the option wins', async () => {
    const store = createMemoryStore();
    const model = echoModel();
    const agent = agentWith(model);
    const asked = async (sessionId: string, extra: Partial<MemSessionOptions>) => {
      const session = memSession(sessionId, optionsOn(store, extra));
      await runner().run(agent, `car=Volvo ${sessionId}`, { session, ...session.runConfig() });
      await runner().run(agent, 'which car do I have?', { session, ...session.runConfig() });
      await session.close();
      return blockOf(model.calls.at(-1)?.request.input);
    };
    expect(await asked('zero', { workingMemorySize: 0 })).toContain('Volvo zero');
    expect(await asked('zero-env', { env: { MEM01_WORKING_MEMORY_SIZE: '0' } })).toContain('Volvo zero-env');
    expect(
      await asked('all-over-env', { env: { MEM01_WORKING_MEMORY_SIZE: '0' }, workingMemorySize: 'all' }),
    ).not.toContain('Volvo all-over-env');
    expect(
      memSession('env-all', optionsOn(store, { env: { MEM01_WORKING_MEMORY_SIZE: ' ALL ' } }))
        .workingMemorySize,
    ).toBe('all');
  });

  it('a malformed size is refused when the session is created: InvalidInputError, or ConfigError naming the variable', () => {
    const store = createMemoryStore();
    for (const workingMemorySize of [-1, 1.5, Number.POSITIVE_INFINITY, 'some' as never, null as never]) {
      expect(() => memSession('bad', optionsOn(store, { workingMemorySize }))).toThrow(
        expect.objectContaining({ name: InvalidInputError.name, field: 'workingMemorySize' }),
      );
    }
    for (const value of ['lots', '-1', '2.5']) {
      expect(() =>
        memSession('bad', optionsOn(store, { env: { MEM01_WORKING_MEMORY_SIZE: value } })),
      ).toThrow(ConfigError);
      expect(() =>
        memSession('bad', optionsOn(store, { env: { MEM01_WORKING_MEMORY_SIZE: value } })),
      ).toThrow(/MEM01_WORKING_MEMORY_SIZE/);
    }
  });
});
