/**
 * memSession and its helpers as the specification has them: `longTerm: false`, `onError`, `memoryInstructions`'
 * default mode and per-run user, `await using`, a `clearMemory` that deletes every belief, and listing what
 * one conversation taught.
 */
import { KeyValueExtractor, scriptedExtractor } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { Agent, RunContext } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, createMemoryTools, memoryInstructions, memSession } from '../src/index.js';
import { withFaults } from '../src/testing/index.js';
import { agentWith, echoModel, inputText, RecordingExtractor, runner } from './harness.js';

afterEach(() => closeSharedRuntimes());

const base = () => ({ store: createMemoryStore(), embedder: null, env: {} });

describe('longTerm: false', () => {
  it('keeps the transcript in the shared store but never recalls or extracts', async () => {
    const extractor = new RecordingExtractor();
    const options = { ...base(), userId: 'lt', extractor };
    const memory = memSession('with-memory', options);
    await runner().run(agentWith(echoModel()), 'home_city=Oslo', { session: memory, ...memory.runConfig() });
    await memory.flushMemory();
    const plain = memSession('plain', { ...options, longTerm: false });
    const model = echoModel();
    await runner().run(agentWith(model, 'Be brief.'), 'home_city=Rome', {
      session: plain,
      ...plain.runConfig(),
    });
    // No block, no policy: the run is what the SDK alone would send.
    expect(inputText(model.inputs[0]!)).not.toContain('mem01-memory');
    expect(model.lastCall?.request.systemInstructions).toBe('Be brief.');
    expect(await plain.getItems()).toHaveLength(2);
    expect(await options.store.getItems({ userId: 'lt' }, 'plain')).toHaveLength(2);
    await plain.flushMemory();
    expect(extractor.texts).not.toContain('home_city=Rome');
    expect((await memory.memoryHistory({ kinds: ['fact'] })).map((b) => b.value)).toEqual(['Oslo']);
    await memory.close();
    await plain.close();
  });
});

describe('onError', () => {
  it('memSession reports a failed recall and, at its next operation, a failed extraction, each once', async () => {
    const errors: Error[] = [];
    const { store, faults } = withFaults(createMemoryStore());
    let failExtraction = false;
    const extractor = scriptedExtractor(() => {
      if (failExtraction) throw new Error('upstream down, key sk-abcdefghijklmnopqrstuvwx');
      return { operations: [] };
    });
    const session = memSession('c', {
      userId: 'err',
      store,
      extractor,
      embedder: null,
      env: {},
      onError: (e) => {
        errors.push(e);
        throw new Error('a careless callback must not break the run');
      },
    });
    faults.fail('searchLexical', 1);
    await runner().run(agentWith(echoModel()), 'hello there', { session, ...session.runConfig() });
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/injected failure in searchLexical/);

    failExtraction = true;
    await session.addItems([{ role: 'user', content: 'remember this' }]);
    await session.flushMemory();
    await session.getItems(); // the next operation reports it
    await session.getItems(); // and only once
    const pipeline = errors.filter((e) => /memory pipeline failure/.test(e.message));
    expect(pipeline).toHaveLength(1);
    expect(pipeline[0]!.message).not.toContain('abcdefghijklmnop');
    await session.close();
  });

  it('memoryInstructions and createMemoryTools report what they fall back from', async () => {
    const errors: Error[] = [];
    const { store, faults } = withFaults(createMemoryStore());
    const options = { store, extractor: new KeyValueExtractor(), embedder: null, env: {}, userId: 'tools' };
    faults.fail('list');
    const text = await memoryInstructions('Base.', { ...options, onError: (e) => errors.push(e) })(
      new RunContext(undefined),
      new Agent({ name: 'a' }) as never,
    );
    expect(text).toBe('Base.');
    expect(errors.map((e) => e.message).join()).toMatch(/injected failure in list/);
    const model = new ScriptedModel([
      [functionCall('list_memories', { limit: null }, { callId: 'l1' })],
      [assistantMessage('done')],
    ]);
    const agent = new Agent({
      name: 'a',
      instructions: 'x',
      model,
      tools: await createMemoryTools({ ...options, onError: (e) => errors.push(e) }),
    });
    await runner().run(agent, 'what do you know?');
    expect(errors).toHaveLength(2);
  });
});

describe('memoryInstructions', () => {
  it('defaults to a profile, and takes the user from the run context on every run', async () => {
    const options = { ...base(), extractor: new KeyValueExtractor() };
    for (const [userId, city] of [
      ['ana', 'Lisbon'],
      ['ben', 'Oslo'],
    ] as const) {
      const s = memSession(`${userId}-c`, { ...options, userId });
      await s.addItems([{ role: 'user', content: `home_city=${city}` }]);
      await s.close();
    }
    const instructions = memoryInstructions<{ userId: string }>('Be brief.', {
      ...options,
      userId: (ctx) => (ctx.context as { userId: string }).userId,
    });
    const model = echoModel();
    const agent = new Agent<{ userId: string }>({ name: 'a', instructions, model });
    await runner().run(agent, 'hello', { context: { userId: 'ana' } });
    expect(model.lastCall?.request.systemInstructions).toContain('Lisbon');
    expect(model.lastCall?.request.systemInstructions).not.toContain('Oslo');
    await runner().run(agent, 'hello', { context: { userId: 'ben' } });
    expect(model.lastCall?.request.systemInstructions).toContain('Oslo');
    expect(model.lastCall?.request.systemInstructions).not.toContain('Lisbon');
  });
});

describe('await using, clearMemory and memory by conversation', () => {
  it('await using closes the session at the end of the block', async () => {
    let seen: ReturnType<typeof memSession> | undefined;
    {
      await using session = memSession('disposable', {
        ...base(),
        userId: 'd',
        extractor: new KeyValueExtractor(),
      });
      seen = session;
      await session.addItems([{ role: 'user', content: 'k=v' }]);
    }
    expect(seen?.isClosed).toBe(true);
  });

  it('clearMemory deletes every belief, superseded and retracted ones and episodes too, and returns a receipt', async () => {
    const options = { ...base(), userId: 'clear', extractor: new KeyValueExtractor() };
    const session = memSession('c1', options);
    await session.addItems([{ role: 'user', content: 'home_city=NYC' }]);
    await session.addItems([{ role: 'user', content: 'home_city=SF' }]);
    await session.addItems([{ role: 'user', content: 'pet=cat' }]);
    const pet = (await session.memoryHistory({ kinds: ['fact'] })).find((b) => b.value === 'cat')!;
    await (await session.runtime()).engine.retract(session.scope, pet.id);
    const before = await session.memoryHistory({ includeInvalidated: true });
    expect(before.map((b) => b.status)).toContain('superseded');
    expect(before.map((b) => b.status)).toContain('retracted');
    expect(await session.clearMemory()).toMatchObject({ beliefs: before.length, transcriptItems: 0 });
    // No tombstones: nothing of it stays.
    expect(await session.memoryHistory({ includeInvalidated: true })).toEqual([]);
    // The transcript is the session's, not memory's.
    expect(await session.getItems()).toHaveLength(3);
    await session.close();
  });

  it('memoryHistory lists what one conversation taught, and what the user said in it', async () => {
    const options = { ...base(), userId: 'conv', extractor: new KeyValueExtractor() };
    const first = memSession('first', options);
    const second = memSession('second', options);
    await first.addItems([{ role: 'user', content: 'drink=tea' }]);
    await second.addItems([{ role: 'user', content: 'food=ramen' }]);
    const fromFirst = await second.memoryHistory({ sessionId: 'first' });
    expect(fromFirst.map((b) => `${b.kind}:${b.value}`).sort()).toEqual(['episode:drink=tea', 'fact:tea']);
    expect(
      (await second.memoryHistory({ sessionId: 'second', kinds: ['episode'] })).map((b) => b.value),
    ).toEqual(['food=ramen']);
    await first.close();
    await second.close();
  });
});

describe('one session id, two users', () => {
  it('the second user reads nothing of the first one’s session, and their run fails with a typed owner error', async () => {
    const store = createMemoryStore();
    const options = { store, extractor: new KeyValueExtractor(), embedder: null, env: {} };
    const alice = memSession('conv-1', { ...options, userId: 'alice' });
    const model = echoModel();
    await runner().run(agentWith(model), 'city=Lisbon', { session: alice, ...alice.runConfig() });
    const bob = memSession('conv-1', { ...options, userId: 'bob' });
    expect(await bob.getItems()).toEqual([]);
    const calls = model.inputs.length;
    await expect(
      runner().run(agentWith(model), 'where do I live?', { session: bob, ...bob.runConfig() }),
    ).rejects.toMatchObject({ name: 'InvalidInputError', field: 'owner' });
    // Whatever reached the model in bob's run holds nothing of alice's.
    for (const input of model.inputs.slice(calls)) expect(inputText(input)).not.toContain('Lisbon');
    expect((await alice.getItems()).length).toBeGreaterThan(0);
    await alice.close();
    await bob.close();
  });
});
