/**
 * The read barrier on every read path, the way users call them: a run saves a turn, and the very next read —
 * another run, a tool, a helper, a management call — sees it. No `flushMemory()` between them, and no tick to let
 * extraction start: a user makes neither.
 */
import { WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { Agent, RunContext, Runner, setTraceProcessors } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeSharedRuntimes,
  createMemoryTools,
  getMemoryContext,
  type MemSession,
  memoryInstructions,
  memSession,
  searchMemories,
} from '../src/index.js';
import { agentWith, echoModel, inputText, RecordingExtractor, runner } from './harness.js';

afterEach(() => closeSharedRuntimes());

interface Setup {
  readonly session: MemSession;
  readonly extractor: RecordingExtractor;
}

/** One user's conversation whose first run says where they live; nothing is flushed afterwards. */
async function afterOneRun(text = 'home_city=Lisbon'): Promise<Setup> {
  const extractor = new RecordingExtractor();
  const session = memSession('conversation-1', {
    userId: 'barrier-user',
    store: createMemoryStore(),
    extractor,
    embedder: new WordHashEmbedder(),
  });
  // (Episodes are on: memoryHistory lists the turns too; the checks below look at the beliefs drawn from them.)
  await runner().run(agentWith(echoModel()), text, { session, ...session.runConfig() });
  return { session, extractor };
}

describe('back-to-back runs and every read path see the previous run, with no flush between', () => {
  it('the run hook: the next run recalls the previous turn (5 of 5)', async () => {
    for (let trial = 0; trial < 5; trial++) {
      const { session } = await afterOneRun();
      const model = echoModel();
      await runner().run(agentWith(model), 'which home city do I have?', { session, ...session.runConfig() });
      expect(inputText(model.inputs[0]!)).toContain('Lisbon');
      await session.close();
    }
  });

  it('the run hook inside a trace (recall starts as the run prepares its input): 5 of 5', async () => {
    // Tracing on, exporting nowhere: the SDK then opens a trace per run, and recall starts right away.
    setTraceProcessors([]);
    const traced = new Runner();
    for (let trial = 0; trial < 5; trial++) {
      const extractor = new RecordingExtractor();
      const session = memSession('traced', {
        userId: `traced-${trial}`,
        store: createMemoryStore(),
        extractor,
        embedder: new WordHashEmbedder(),
      });
      await traced.run(agentWith(echoModel()), 'home_city=Lisbon', { session, ...session.runConfig() });
      const model = echoModel();
      await traced.run(agentWith(model), 'which home city do I have?', { session, ...session.runConfig() });
      expect(inputText(model.inputs[0]!)).toContain('Lisbon');
      await session.close();
    }
  });

  it('createMemoryTools: the agent searching memory finds it', async () => {
    const { session } = await afterOneRun();
    const model = new ScriptedModel([
      [functionCall('search_memories', { query: 'home city', limit: null }, { callId: 's1' })],
      [assistantMessage('done')],
    ]);
    const agent = new Agent({
      name: 'a',
      instructions: 'x',
      model,
      tools: await createMemoryTools({ session }),
    });
    await runner().run(agent, 'where do I live?');
    const results = ((model.lastCall?.request.input ?? []) as { type?: string; output?: unknown }[]).filter(
      (i) => i.type === 'function_call_result',
    );
    expect(JSON.stringify(results)).toContain('Lisbon');
    await session.close();
  });

  it('getMemoryContext', async () => {
    const { session } = await afterOneRun();
    expect((await getMemoryContext({ session, query: 'home city' })).text).toContain('Lisbon');
    await session.close();
  });

  it('searchMemories', async () => {
    const { session } = await afterOneRun();
    const hits = await searchMemories({ session, query: 'home city' });
    expect(hits.map((h) => h.belief.value)).toContain('Lisbon');
    await session.close();
  });

  it('memoryInstructions, as the agent its instructions', async () => {
    const { session } = await afterOneRun();
    const model = echoModel();
    const agent = new Agent({
      name: 'a',
      instructions: memoryInstructions('Be brief.', { session, mode: 'profile' }),
      model,
    });
    await runner().run(agent, 'hello');
    expect(model.lastCall?.request.systemInstructions).toContain('Lisbon');
    // And called directly, as a host composing its own instructions would.
    const fresh = await afterOneRun('home_city=Porto');
    const text = await memoryInstructions('Be brief.', { session: fresh.session, mode: 'profile' })(
      new RunContext(undefined),
      agent as never,
    );
    expect(text).toContain('Porto');
    await session.close();
    await fresh.session.close();
  });

  it('memoryHistory', async () => {
    const { session } = await afterOneRun();
    expect((await session.memoryHistory()).map((b) => b.value)).toContain('Lisbon');
    await session.close();
  });

  it('correctMemory waits for the previous run before it corrects', async () => {
    const { session, extractor } = await afterOneRun();
    const lisbon = (await session.memoryHistory()).find((b) => b.kind === 'fact');
    await runner().run(agentWith(echoModel()), 'pet=cat', { session, ...session.runConfig() });
    const corrected = await session.correctMemory(lisbon!.id, 'Lisboa');
    // The previous run's turn was extracted before the correction was planned.
    expect(extractor.texts).toContain('pet=cat');
    expect(corrected.value).toBe('Lisboa');
    const facts = (await session.memoryHistory()).filter((b) => b.kind === 'fact');
    expect(facts.map((b) => `${b.attribute}=${b.value}`).sort()).toEqual(['home_city=Lisboa', 'pet=cat']);
    await session.close();
  });

  it('forgetMemory waits for the previous run before it forgets', async () => {
    const { session, extractor } = await afterOneRun();
    const lisbon = (await session.memoryHistory()).find((b) => b.kind === 'fact');
    await runner().run(agentWith(echoModel()), 'pet=cat', { session, ...session.runConfig() });
    await session.forgetMemory(lisbon!.id);
    expect(extractor.texts).toContain('pet=cat');
    // The fact and the turn it came from are gone; the new fact and its turn remain.
    expect((await session.memoryHistory()).map((b) => b.value).sort()).toEqual(['cat', 'pet=cat']);
    await session.close();
  });

  it('a second session of the same user, opened right after, recalls the first one', async () => {
    const store = createMemoryStore();
    const options = { userId: 'u-two', store, extractor: new RecordingExtractor(), embedder: null };
    const first = memSession('c-1', options);
    await runner().run(agentWith(echoModel()), 'home_city=Oslo', { session: first, ...first.runConfig() });
    const second = memSession('c-2', options);
    const model = echoModel();
    await runner().run(agentWith(model), 'home city?', { session: second, ...second.runConfig() });
    expect(inputText(model.inputs[0]!)).toContain('Oslo');
    await first.close();
    await second.close();
  });
});
