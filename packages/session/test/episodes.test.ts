/**
 * What a memSession user gets by default: beliefs and what they said (dated episodes), a relevance floor, and the
 * ways to opt out; plus the settings that reach the engine (`engine`, a caller-owned runtime, the environment).
 */
import { FORGOTTEN_MARKER } from '@mem01/engine/binding-kit';
import { WordHashEmbedder } from '@mem01/engine/testing';
import { createLocalEmbedder, createLocalExtractor } from '@mem01/local';
import { createMemoryStore } from '@mem01/store-memory';
import type { AgentInputItem } from '@openai/agents';
import { assistantMessage, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeSharedRuntimes,
  getMemoryContext,
  type MemSessionOptions,
  memSession,
  openMemoryRuntime,
  saveTurn,
  searchMemories,
} from '../src/index.js';
import { agentWith, echoModel, inputText, RecordingExtractor, runner } from './harness.js';

afterEach(() => closeSharedRuntimes());

/** The offline defaults (local extractor and embedder) on an in-memory store, no environment. */
function offline(extra: Partial<MemSessionOptions> = {}): MemSessionOptions {
  return {
    userId: 'ep-user',
    store: createMemoryStore(),
    extractor: createLocalExtractor(),
    embedder: createLocalEmbedder(),
    env: {},
    ...extra,
  };
}

async function say(options: MemSessionOptions, conversation: string, text: string): Promise<string> {
  const session = memSession(conversation, options);
  const model = echoModel();
  await runner().run(agentWith(model), text, { session, ...session.runConfig() });
  await session.close();
  return inputText(model.inputs[0]!);
}

/** One run whose model answers `answer`; returns the input the model saw. */
async function exchange(options: MemSessionOptions, conversation: string, text: string, answer: string) {
  const session = memSession(conversation, options);
  const model = new ScriptedModel();
  const inputs: AgentInputItem[][] = [];
  model.enqueue(
    modelResponder((call) => {
      const input = call.request.input;
      inputs.push(typeof input === 'string' ? [{ role: 'user', content: input }] : [...input]);
      return [assistantMessage(answer)];
    }),
  );
  await runner().run(agentWith(model), text, { session, ...session.runConfig() });
  await session.close();
  return inputText(inputs[0]!);
}

describe('the assistant’s replies', () => {
  it('are recalled, labelled, when a later conversation asks what the assistant said, and only then', async () => {
    const options = offline();
    await exchange(
      options,
      'c1',
      'My newspaper flower vase keeps getting soggy. Any idea how to protect it?',
      'I recommend sealing the newspaper flower vase with two coats of Mod Podge.',
    );
    const asked = await say(
      options,
      'c2',
      'In our previous chat, which sealant did you recommend for the vase?',
    );
    expect(asked).toMatch(/\[assistant said \d{4}-\d{2}-\d{2}\] .*Mod Podge/);
    // A question about the user's own vase does not bring the assistant's words back.
    expect(await say(options, 'c3', 'What is my vase made of?')).not.toContain('[assistant said ');
    // Off: the assistant's turns are context only, as before.
    const off = offline({ engine: { replies: false } });
    await exchange(off, 'c1', 'How do I protect my vase?', 'I recommend two coats of Mod Podge.');
    expect(await say(off, 'c2', 'In our previous chat, which sealant did you recommend?')).not.toContain(
      '[assistant said ',
    );
  });
});

describe('episodes by default', () => {
  it('recalls what the user said, dated, even where no belief was drawn from it', async () => {
    const options = offline();
    await say(options, 'c1', 'We finally booked the cabin in Tromsø for the northern lights in February.');
    const seen = await say(options, 'c2', 'Which cabin did we book?');
    expect(seen).toMatch(/\[user said \d{4}-\d{2}-\d{2}\] .*cabin in Tromsø/);
  });

  it('with episodic: false (or MEM01_EPISODIC=off) recalls beliefs only, no episode', async () => {
    const off = offline({ episodic: false });
    await say(off, 'c1', 'We finally booked the cabin in Tromsø for the northern lights in February.');
    expect(await say(off, 'c2', 'Which cabin did we book?')).not.toContain('[user said ');
    const viaEnv = offline({ env: { MEM01_EPISODIC: 'off' } });
    await say(viaEnv, 'c1', 'We finally booked the cabin in Tromsø for the northern lights in February.');
    expect(await say(viaEnv, 'c2', 'Which cabin did we book?')).not.toContain('[user said ');
    expect(() => memSession('x', offline({ env: { MEM01_EPISODIC: 'maybe' } }))).toThrow(/MEM01_EPISODIC/);
  });

  it('the helpers recall episodes by default and take the opt-out too', async () => {
    const options = offline();
    await say(options, 'c1', 'My favourite bakery is the one on Rua Augusta.');
    const { userId, store, extractor, embedder } = options;
    const shared = { userId, store, extractor, embedder, env: {} };
    expect((await getMemoryContext({ ...shared, query: 'Which bakery do I like?' })).text).toContain(
      'Rua Augusta',
    );
    const beliefsOnly = await searchMemories({
      ...shared,
      episodic: false,
      query: 'Which bakery do I like?',
    });
    expect(beliefsOnly.every((h) => h.belief.kind !== 'episode')).toBe(true);
  });

  it('a moved user is recalled where they live now, and not in their old words', async () => {
    const options = offline();
    await say(options, 'c1', 'I live in NYC and pay $2,400 rent');
    await say(options, 'c2', 'I moved to SF');
    const seen = await say(options, 'c3', 'Where do I live and what is my rent?');
    expect(seen).toMatch(/SF|San Francisco/);
    expect(seen).toContain('2,400');
    expect(seen).not.toMatch(/NYC|New York/);
  });

  it('forgetting a fact forgets every turn that names it, in any conversation; the transcripts agree', async () => {
    const options = offline();
    await say(options, 'c1', 'I live in Lisbon.');
    await say(options, 'c2', 'Are the trams in Lisbon running late tonight?');
    await say(options, 'c3', 'My sister visits in June.');
    const question = 'Which trams did I ask about, and where do I live?';
    expect(await say(options, 'q1', question)).toContain('trams in Lisbon');
    const session = memSession('c1', options);
    const fact = (await session.memoryHistory()).find(
      (b) => b.kind !== 'episode' && b.value.includes('Lisbon'),
    );
    await session.forgetMemory(fact!.id);
    await session.close();

    const seen = await say(options, 'q2', question);
    expect(seen).not.toContain('Lisbon');
    const c2 = memSession('c2', options);
    // The user's turn is gone as its episode is; the reply keeps its structure.
    expect((await c2.getItems())[0]).toMatchObject({ role: 'user', content: FORGOTTEN_MARKER });
    expect(JSON.stringify(await c2.getItems())).not.toContain('Lisbon');
    expect(JSON.stringify(await c2.memoryHistory({ includeInvalidated: true }))).not.toContain('Lisbon');
    await c2.close();
    expect(await say(options, 'q3', 'Who visits in June?')).toContain('My sister visits in June.');
  });

  it('nothing relevant stays nothing recalled: a shared word alone is not relevance', async () => {
    const options = offline();
    for (const [i, text] of [
      'My name is Alex by the way',
      'We named the dog Rex after my grandfather',
      'The conference name tags were a mess',
      'I prefer aisle seats on long flights',
    ].entries()) {
      await say(options, `c${i}`, text);
    }
    expect(await say(options, 'q1', "What is my sister's name?")).toContain('(no relevant notes recalled)');
    expect(await say(options, 'q2', "What's my dog called?")).toContain('Rex');
  });
});

describe('engine settings reach the engine', () => {
  it('`engine` sets the lease and other engine settings, checked at memSession()', async () => {
    const session = memSession('c', offline({ engine: { leaseMs: 1234, recallLimit: 3 } }));
    const runtime = await session.runtime();
    expect(runtime.engine.config).toMatchObject({ leaseMs: 1234, recallLimit: 3, episodic: true });
    await session.close();
    expect(() => memSession('c', offline({ engine: { leaseMs: -1 } }))).toThrow(/leaseMs/);
  });

  it('the environment tunes the engine (MEM01_BLOCK_BYTES, MEM01_RECALL_LIMIT, MEM01_PENDING_BELOW)', async () => {
    const session = memSession(
      'c',
      offline({ env: { MEM01_BLOCK_BYTES: '600', MEM01_RECALL_LIMIT: '4', MEM01_PENDING_BELOW: '0.7' } }),
    );
    const runtime = await session.runtime();
    expect(runtime.engine.config).toMatchObject({ blockBytes: 600, recallLimit: 4, pendingBelow: 0.7 });
    expect(runtime.blockBytes).toBe(600);
    await session.close();
    // The deprecated names still work: the option `budgetBytes` and the variable MEM01_BUDGET_BYTES.
    const old = memSession('c', offline({ budgetBytes: 500 }));
    expect((await old.runtime()).blockBytes).toBe(500);
    await old.close();
    const oldEnv = memSession('c', offline({ env: { MEM01_BUDGET_BYTES: '700' } }));
    expect((await oldEnv.runtime()).engine.config.blockBytes).toBe(700);
    await oldEnv.close();
    expect(() => memSession('c', offline({ env: { MEM01_RECALL_LIMIT: 'ten' } }))).toThrow(
      /MEM01_RECALL_LIMIT/,
    );
  });

  it('a runtime from openMemoryRuntime is used as it is and stays the caller’s', async () => {
    const store = createMemoryStore();
    const runtime = await openMemoryRuntime({
      store,
      extractor: createLocalExtractor(),
      embedder: null,
      env: {},
    });
    const a = memSession('a', { userId: 'u', runtime });
    const b = memSession('b', { userId: 'u', runtime });
    expect(await a.runtime()).toBe(runtime);
    const model = echoModel();
    await runner().run(agentWith(model), 'I keep bees on the roof.', { session: a, ...a.runConfig() });
    await runner().run(agentWith(model), 'What do I keep on the roof?', { session: b, ...b.runConfig() });
    expect(inputText(model.inputs[1]!)).toContain('bees');
    await a.close();
    await b.close();
    expect(runtime.engine.isClosed).toBe(false);
    await runtime.close();
    expect(() => memSession('c', { userId: 'u', runtime, store })).toThrow(/runtime is given/);
  });
});

describe('strict mode and turns that cannot be accepted', () => {
  it('strict addItems refuses an oversized turn before writing anything; failure-open stores it and says why', async () => {
    const huge = 'x'.repeat(300_000);
    const strict = memSession('big', offline({ strict: true, embedder: new WordHashEmbedder() }));
    await expect(strict.addItems([{ role: 'user', content: huge }])).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(await strict.getItems()).toEqual([]);
    await strict.close();
    const open = memSession('big', offline({ embedder: new WordHashEmbedder() }));
    await open.addItems([{ role: 'user', content: huge }]);
    expect(await open.getItems()).toHaveLength(1);
    expect(open.lastMemoryError).toMatch(/text: is 300000 bytes, over the limit/);
    await open.close();
  });

  it('a turn refused in a run is reported at once (onError, lastMemoryError with size and limit) and stays reported', async () => {
    const errors: Error[] = [];
    const options = offline({ embedder: new WordHashEmbedder(), onError: (e) => errors.push(e) });
    const session = memSession('refused', options);
    const huge = `I live in Oslo. ${'x'.repeat(1_000_000)}`;
    await runner().run(agentWith(echoModel()), huge, { session, ...session.runConfig() });
    // Reported by the time the run returns, not at some later operation.
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/turns\[0\]\.text: is 1000016 bytes, over the limit of 262144/),
    ]);
    expect(errors[0]).toMatchObject({ code: 'invalid_input' });
    // The assistant's reply in the same run is extracted successfully; the refusal is still what the user sees.
    await session.flushMemory();
    expect(session.lastMemoryError).toMatch(/is 1000016 bytes, over the limit of 262144/);
    expect(await session.getItems()).toHaveLength(2);
    // The next run whose turns are accepted whole replaces it.
    await runner().run(agentWith(echoModel()), 'I work as a nurse.', { session, ...session.runConfig() });
    await session.flushMemory();
    expect(session.lastMemoryError).toBeNull();
    expect(errors).toHaveLength(1);
    await session.close();
  });

  it('strict: a run whose turn is refused fails, and nothing of it is stored', async () => {
    const session = memSession('refused-strict', offline({ strict: true, embedder: new WordHashEmbedder() }));
    const huge = 'y'.repeat(500_000);
    await expect(
      runner().run(agentWith(echoModel()), huge, { session, ...session.runConfig() }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/500000 bytes, over the limit/),
    });
    expect(await session.getItems()).toEqual([]);
    await session.close();
  });

  it('a long pasted turn (over 16 KiB) is kept whole in the transcript and recalled from its parts', async () => {
    const options = offline();
    const filler = Array.from({ length: 400 }, (_, i) => `Line ${i} of the pasted report is routine.`).join(
      ' ',
    );
    const pasted = `${filler} The budget for the Oslo office is 40,000 euros. ${filler}`;
    expect(new TextEncoder().encode(pasted).byteLength).toBeGreaterThan(16_384);
    await say(options, 'c1', pasted);
    expect(await say(options, 'c2', 'What is the budget for the Oslo office?')).toContain('40,000 euros');
  });
});

describe('one extraction per message', () => {
  it('the same user message saved through the session and through saveTurn is extracted once', async () => {
    const extractor = new RecordingExtractor();
    const options = { userId: 'once', store: createMemoryStore(), extractor, embedder: null, env: {} };
    const session = memSession('conv', options);
    await runner().run(agentWith(echoModel()), 'pet=parrot', { session, ...session.runConfig() });
    await saveTurn({ ...options, session, sessionId: 'conv', user: 'pet=parrot', assistant: 'Noted.' });
    await session.flushMemory();
    expect(extractor.texts.filter((t) => t === 'pet=parrot')).toHaveLength(1);
    expect(await session.getItems()).toHaveLength(4);
    await session.close();
  });
});
