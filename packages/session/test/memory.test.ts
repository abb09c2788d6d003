/** Injection, recall counts, run config reuse, FIFO, isolation, failure modes and lifecycle, through the real Runner. */
import { inspect } from 'node:util';
import { ClosedError, type EngineStore, type FullStore, Mem01Error } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import {
  Agent,
  Runner,
  type Span,
  type SpanData,
  setTraceProcessors,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeSharedRuntimes,
  memSession,
  openMemoryRuntime,
  RunConfigReusedError,
  sharedRuntimeCount,
} from '../src/index.js';
import { withFaults } from '../src/testing/index.js';
import { agentWith, echoModel, RecordingExtractor, runner, testSession } from './harness.js';

afterEach(async () => {
  await closeSharedRuntimes();
  setTraceProcessors([]);
  setTracingDisabled(true);
});

const hasBlock = (input: unknown) => JSON.stringify(input).includes('<mem01-memory');

describe('injection', () => {
  it('reaches the model, yet is absent from storage and from extractor input', async () => {
    const { session, store, extractor, embedder } = testSession('inject');
    const model = echoModel();
    const agent = agentWith(model, 'Caller instructions stay.');
    // Said in an earlier conversation: the current one's own turns are in the model's history, not in the block.
    const earlier = testSession('inject-earlier', { store, extractor, embedder }).session;
    await runner().run(agent, 'home_city=NYC', { session: earlier, ...earlier.runConfig() });
    await earlier.close();
    await runner().run(agent, 'which home city do I have?', { session, ...session.runConfig() });
    // Only so that the recording extractor below has seen the second run's turn.
    await session.flushMemory();

    const last = model.calls.at(-1)!;
    expect(hasBlock(last.request.input)).toBe(true);
    expect(JSON.stringify(last.request.input)).toContain("The user's home city is NYC.");
    expect(last.request.systemInstructions).toMatch(/^Caller instructions stay\.\n\nMemory policy/);
    // the block sits right before the latest user message
    const input = last.request.input as Array<{ role?: string; content?: unknown }>;
    expect(hasBlock(input.at(-2))).toBe(true);
    expect(input.at(-1)?.content).toBe('which home city do I have?');

    expect(hasBlock(await session.getItems())).toBe(false);
    expect(hasBlock(await (store as FullStore).getItems(session.scope, 'inject'))).toBe(false);
    expect(hasBlock(await (store as FullStore).getItems(session.scope, 'inject-earlier'))).toBe(false);
    expect(await session.getItems()).toHaveLength(2);
    expect(extractor.texts.some((t) => t.includes('mem01-memory'))).toBe(false);
    expect(extractor.texts).toContain('which home city do I have?');
    await session.close();
  });

  it('stores every item but extracts only textual user and assistant messages', async () => {
    const { session, extractor } = testSession('kinds', {
      extractor: new RecordingExtractor({ batchChars: 100_000 }),
    });
    const items = [
      { role: 'system', content: 'system=secret-prompt' },
      { role: 'developer', content: 'developer=note' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'a=1' },
          { type: 'input_image', image: 'https://x/y.png' },
        ],
      },
      { role: 'user', content: [{ type: 'input_image', image: 'https://x/z.png' }] },
      { type: 'function_call', callId: 'c1', name: 'f', arguments: '{"b":"2"}', status: 'completed' },
      { type: 'function_call_result', callId: 'c1', name: 'f', status: 'completed', output: 'tool=3' },
      { type: 'reasoning', content: [{ type: 'input_text', text: 'reasoning=4' }] },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'reply=5' }],
      },
      // looks like a memory block but was not injected by this runtime: an ordinary user message
      { role: 'user', content: '<mem01-memory trust="untrusted">\nc=6\n</mem01-memory>' },
    ];
    await session.addItems(items as never);
    await session.flushMemory();
    expect(await session.getItems()).toEqual(items);
    expect(extractor.requests.flatMap((r) => r.turns.map((t) => `${t.role}:${t.text}`))).toEqual([
      'user:a=1',
      'assistant:reply=5',
      'user:<mem01-memory trust="untrusted">\nc=6\n</mem01-memory>',
    ]);
    await session.close();
  });

  it('passing only `session` keeps plain short-term behaviour', async () => {
    const { session, extractor } = testSession('plain');
    const model = echoModel();
    await runner().run(agentWith(model), 'pet=dog', { session });
    await session.flushMemory();
    await runner().run(agentWith(model), 'what pet do I have?', { session });
    expect(model.calls.some((c) => hasBlock(c.request.input))).toBe(false);
    expect(model.calls.at(-1)?.request.systemInstructions).toBe('You are helpful.');
    expect((await session.getItems()).length).toBe(4);
    // turns are still remembered for later runs that use the hooks
    expect(extractor.texts).toContain('pet=dog');
    await session.close();
  });

  it('recalls once per run across a tool loop and records a content-free span', async () => {
    const spans: Span<SpanData>[] = [];
    // NODE_ENV=test disables tracing by default; a local processor replaces the exporter (no network).
    setTracingDisabled(false);
    setTraceProcessors([
      {
        onTraceStart: async () => {},
        onTraceEnd: async () => {},
        onSpanStart: async () => {},
        onSpanEnd: async (span) => {
          spans.push(span);
        },
        shutdown: async () => {},
        forceFlush: async () => {},
      },
    ]);
    const { session, store, extractor, embedder } = testSession('tool-loop');
    const earlier = testSession('tool-loop-earlier', { store, extractor, embedder }).session;
    await earlier.addItems([{ role: 'user', content: 'home_city=Oslo' }]);
    await earlier.close();
    let toolCalls = 0;
    const weather = tool({
      name: 'weather',
      description: 'weather',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        toolCalls++;
        return `rain in ${city}`;
      },
    });
    const model = new ScriptedModel([
      [functionCall('weather', { city: 'Oslo' }, { callId: 'c1' })],
      [functionCall('weather', { city: 'Bergen' }, { callId: 'c2' })],
      [assistantMessage('Rainy everywhere.')],
    ]);
    const agent = new Agent({ name: 'a', instructions: 'x', model, tools: [weather] });
    await new Runner().run(agent, 'weather in my home city?', { session, ...session.runConfig() });
    expect(toolCalls).toBe(2);
    expect(model.calls).toHaveLength(3);
    for (const call of model.calls) expect(hasBlock(call.request.input)).toBe(true);
    const recallSpans = spans.filter(
      (s) => s.spanData.type === 'custom' && s.spanData.name === 'mem01.recall',
    );
    expect(recallSpans).toHaveLength(1);
    const data = (recallSpans[0]!.spanData as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({ recalled: 1, injected: 1, omitted: 0 });
    expect(data.bytes).toBeGreaterThan(0);
    expect(typeof data.ms).toBe('number');
    expect(JSON.stringify(data)).not.toMatch(/Oslo|home/i);
    await session.close();
  });
});

describe('run config', () => {
  it('fails clearly when one config is used for a second run', async () => {
    const { session } = testSession('reuse');
    const agent = agentWith(echoModel());
    const config = session.runConfig();
    await runner().run(agent, 'first', { session, ...config });
    const second = runner().run(agent, 'second', { session, ...config });
    await expect(second).rejects.toBeInstanceOf(RunConfigReusedError);
    await expect(runner().run(agent, 'third', { session, ...config })).rejects.toMatchObject({
      code: 'run_config_reused',
    });
    await session.close();
  });

  it('fails clearly when one config is used by two concurrent runs', async () => {
    const { session } = testSession('reuse-concurrent');
    const agent = agentWith(echoModel());
    const config = session.runConfig();
    const results = await Promise.allSettled([
      runner().run(agent, 'a', { session, ...config }),
      runner().run(agent, 'b', { session, ...config }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(RunConfigReusedError);
    expect(rejected.reason.message).toMatch(/runConfig\(\) again/);
    await session.close();
  });
});

describe('concurrency', () => {
  it('keeps one user’s writes in FIFO order across two sessions sharing a runtime', async () => {
    const store = createMemoryStore();
    const extractor = new RecordingExtractor({ delayMs: () => Math.random() * 5 });
    const embedder = new WordHashEmbedder();
    const a = memSession('conv-a', { userId: 'u1', store, extractor, embedder, episodic: false });
    const b = memSession('conv-b', { userId: 'u1', store, extractor, embedder, episodic: false });
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 10; i++) {
      const s = i % 2 === 0 ? a : b;
      writes.push(s.addItems([{ role: 'user', content: `counter=${i}` }]));
    }
    await Promise.all(writes);
    expect(sharedRuntimeCount()).toBe(1);
    await a.flushMemory();
    const order = extractor.texts.map((t) => Number(t.split('=')[1]));
    const accepted = [...order].sort((x, y) => x - y);
    expect(order).toEqual(accepted);
    const active = await a.memoryHistory();
    expect(active.map((x) => x.value)).toEqual(['9']);
    const all = await b.memoryHistory({ includeInvalidated: true });
    expect(all.filter((x) => x.status === 'superseded')).toHaveLength(9);
    await a.close();
    expect(sharedRuntimeCount()).toBe(1);
    await b.close();
    expect(sharedRuntimeCount()).toBe(0);
  });

  it('shares a runtime only between identical settings', async () => {
    const store = createMemoryStore();
    const extractor = new RecordingExtractor();
    const a = memSession('s-a', { userId: 'u1', store, extractor, embedder: null });
    const b = memSession('s-b', { userId: 'u2', store, extractor, embedder: null });
    const c = memSession('s-c', { userId: 'u1', store, extractor, embedder: null, strict: true });
    const d = memSession('s-d', { userId: 'u1', store: createMemoryStore(), extractor, embedder: null });
    await Promise.all([a, b, c, d].map((s) => s.getItems()));
    expect(await a.runtime()).toBe(await b.runtime());
    expect(sharedRuntimeCount()).toBe(3);
    for (const s of [a, b, c, d]) await s.close();
    expect(sharedRuntimeCount()).toBe(0);
  });

  it('never shows one user’s beliefs to another', async () => {
    const store = createMemoryStore();
    const extractor = new RecordingExtractor();
    const embedder = new WordHashEmbedder();
    const alice = memSession('alice-1', { userId: 'alice', store, extractor, embedder });
    const bob = memSession('bob-1', { userId: 'bob', store, extractor, embedder });
    const model = echoModel();
    await runner().run(agentWith(model), 'home_city=Lisbon', { session: alice, ...alice.runConfig() });
    await runner().run(agentWith(model), 'what is my home city?', { session: bob, ...bob.runConfig() });
    expect(JSON.stringify(model.calls.at(-1)?.request.input)).not.toContain('Lisbon');
    // Bob's memory holds only what Bob said.
    expect((await bob.memoryHistory({ includeInvalidated: true })).map((b) => b.value)).toEqual([
      'what is my home city?',
    ]);
    const beliefs = await alice.memoryHistory();
    expect(beliefs.map((x) => x.value).sort()).toEqual(['Lisbon', 'home_city=Lisbon']);
    for (const belief of beliefs) {
      await expect(bob.forgetMemory(belief.id)).rejects.toMatchObject({ code: 'not_found' });
      await expect(bob.correctMemory(belief.id, 'Porto')).rejects.toMatchObject({ code: 'not_found' });
    }
    // Bob's question and the model's reply to it (replies are erased with the rest).
    expect((await bob.clearMemory()).beliefs).toBe(2);
    expect(await bob.memoryHistory({ includeInvalidated: true })).toEqual([]);
    expect((await alice.memoryHistory()).map((x) => x.value).sort()).toEqual(['Lisbon', 'home_city=Lisbon']);
    await alice.close();
    await bob.close();
  });
});

describe('failure modes', () => {
  async function seeded(strict: boolean) {
    const { store, faults } = withFaults(createMemoryStore());
    const extractor = new RecordingExtractor();
    const session = memSession(`faults-${strict}`, {
      userId: 'u1',
      store,
      extractor,
      embedder: new WordHashEmbedder(),
      strict,
    });
    await session.addItems([{ role: 'user', content: 'home_city=Rome' }]);
    await session.flushMemory();
    return { session, faults, store };
  }

  it('failure-open: a failing store degrades to no memory and records a sanitized error', async () => {
    const { session, faults } = await seeded(false);
    faults.fail('searchLexical');
    const model = echoModel();
    const result = await runner().run(agentWith(model), 'what is my home city?', {
      session,
      ...session.runConfig(),
    });
    expect(result.finalOutput).toBe('ok 0');
    expect(hasBlock(model.calls[0]?.request.input)).toBe(false);
    expect(model.calls[0]?.request.systemInstructions).toBe('You are helpful.');
    expect(session.lastMemoryError).toMatch(/injected failure in searchLexical/);
    faults.heal();
    await runner().run(agentWith(model), 'what is my home city?', { session, ...session.runConfig() });
    expect(hasBlock(model.calls.at(-1)?.request.input)).toBe(true);
    expect(session.lastMemoryError).toBeNull();

    // an extraction that cannot commit is recorded, and the run still works
    faults.fail('commit');
    await session.addItems([{ role: 'user', content: 'pet=cat' }]);
    await session.flushMemory();
    expect(session.lastMemoryError).toMatch(/injected failure in commit/);
    await session.close();
  });

  it('strict: the same failures fail the run and the memory calls', async () => {
    const { session, faults } = await seeded(true);
    faults.fail('searchLexical');
    await expect(
      runner().run(agentWith(echoModel()), 'what is my home city?', { session, ...session.runConfig() }),
    ).rejects.toThrow(/injected failure in searchLexical/);
    faults.heal();
    faults.fail('commit');
    await session.addItems([{ role: 'user', content: 'pet=cat' }]);
    await expect(session.flushMemory()).rejects.toThrow(/injected failure in commit/);
    await session.close();
  });

  describe('strict set through the engine settings is the strict the session runs with', () => {
    const question = 'what is my home city?';

    /** The session is strict: a failing recall (lexical search) fails the run. Closes the session. */
    async function expectStrictRecallFailure(
      session: ReturnType<typeof memSession>,
      faults: ReturnType<typeof withFaults>['faults'],
    ): Promise<void> {
      expect(session.strict).toBe(true);
      faults.fail('searchLexical');
      await expect(
        runner().run(agentWith(echoModel()), question, { session, ...session.runConfig() }),
      ).rejects.toThrow(/injected failure in searchLexical/);
      await session.close();
    }

    it('memSession(id, { engine: { strict: true } }) surfaces a recall failure', async () => {
      const { store, faults } = withFaults(createMemoryStore());
      const session = memSession('strict-engine', {
        userId: 'u1',
        store,
        extractor: new RecordingExtractor(),
        embedder: new WordHashEmbedder(),
        engine: { strict: true },
      });
      await expectStrictRecallFailure(session, faults);
    });

    it('openMemoryRuntime({ engine: { strict: true } }) opens a strict engine, and a session over it is strict', async () => {
      const { store, faults } = withFaults(createMemoryStore());
      const runtime = await openMemoryRuntime({
        store,
        extractor: new RecordingExtractor(),
        embedder: new WordHashEmbedder(),
        engine: { strict: true },
        env: {},
      });
      expect(runtime.engine.config.strict).toBe(true);
      expect(runtime.description.strict).toBe(true);
      const session = memSession('strict-runtime', { userId: 'u1', runtime });
      await expectStrictRecallFailure(session, faults);
      await runtime.close();
    });

    it('strict and engine.strict that disagree are refused', () => {
      expect(() =>
        memSession('strict-both', { userId: 'u1', strict: false, engine: { strict: true }, env: {} }),
      ).toThrow(/strict and engine.strict disagree/);
    });
  });

  it('a transcript that cannot be written fails addItems (the Session contract), in both modes', async () => {
    const { session, faults } = await seeded(false);
    faults.fail('appendItems');
    await expect(session.addItems([{ role: 'user', content: 'x' }])).rejects.toThrow(/appendItems/);
    await session.close();
  });
});

describe('lifecycle and memory management', () => {
  it('close drains accepted writes; objects passed in stay open', async () => {
    const store = createMemoryStore();
    const extractor = new RecordingExtractor({ delayMs: () => 30 });
    const session = memSession('drain', { userId: 'u1', store, extractor, embedder: null, episodic: false });
    await session.addItems([
      { role: 'user', content: 'a=1' },
      { role: 'user', content: 'b=2' },
      { role: 'user', content: 'c=3' },
    ]);
    await session.close();
    const page = await store.list({ userId: 'u1' });
    expect(page.items.map((x) => x.value).sort()).toEqual(['1', '2', '3']);
    await expect(session.getItems()).rejects.toBeInstanceOf(ClosedError);
    expect(() => session.runConfig()).toThrow(ClosedError);
    await session.close(); // idempotent
  });

  it('closeSharedRuntimes drains and closes runtimes still held by sessions', async () => {
    const { session, store } = testSession('shutdown', {
      extractor: new KeyValueExtractor({ delayMs: () => 20 }),
      episodic: false,
    });
    await session.addItems([{ role: 'user', content: 'k=v' }]);
    await closeSharedRuntimes();
    expect(sharedRuntimeCount()).toBe(0);
    expect((await (store as EngineStore).list({ userId: 'u1' })).items).toHaveLength(1);
    await expect(session.getItems()).rejects.toBeInstanceOf(ClosedError);
  });

  it('manages memory: history, correct, forget with reason, clear; clearSession keeps beliefs', async () => {
    const { session } = testSession('manage', { episodic: false });
    await session.addItems([
      { role: 'user', content: 'home_city=NYC; rent=2400' },
      {
        role: 'assistant',
        content: [{ type: 'output_text', text: 'noted' }],
        status: 'completed',
        type: 'message',
      } as never,
    ]);
    const history = await session.memoryHistory();
    expect(history.map((b) => b.value).sort()).toEqual(['2400', 'NYC']);
    const city = history.find((b) => b.attribute === 'home_city')!;
    const corrected = await session.correctMemory(city.id, 'San Francisco');
    expect(corrected.source).toBe('correction');
    expect((await session.memoryHistory({ includeInvalidated: true })).map((b) => b.status).sort()).toEqual([
      'active',
      'active',
      'superseded',
    ]);
    expect(await session.memoryHistory({ limit: 1 })).toHaveLength(1);
    const rent = history.find((b) => b.attribute === 'rent')!;
    const tomb = await session.forgetMemory(rent.id, { reason: 'user asked' });
    expect(tomb.status).toBe('forgotten');
    expect(JSON.stringify(tomb)).not.toContain('2400');
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect((await session.memoryHistory()).map((b) => b.value)).toEqual(['San Francisco']);
    // The active San Francisco, the superseded New York, the rent's tombstone and the model's reply.
    expect((await session.clearMemory()).beliefs).toBe(4);
    expect(await session.memoryHistory({ includeInvalidated: true })).toEqual([]);
    await expect(session.memoryHistory({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
    await session.close();
  });

  it('works with a separate transcript store (turns accepted after the append, idempotently)', async () => {
    const transcript = createMemoryStore();
    const store = createMemoryStore();
    const session = memSession('split', {
      userId: 'u1',
      store,
      transcript,
      extractor: new RecordingExtractor(),
      embedder: null,
      episodic: false,
    });
    await session.applyHistoryTransaction({
      operationId: 'op',
      transaction: { type: 'append_items', items: [{ role: 'user', content: 'city=Kyiv' }] },
    });
    await session.applyHistoryTransaction({
      operationId: 'op',
      transaction: { type: 'append_items', items: [{ role: 'user', content: 'city=Kyiv' }] },
    });
    await session.flushMemory();
    expect(await transcript.getItems(session.scope, 'split')).toHaveLength(1);
    expect(await store.getItems(session.scope, 'split')).toEqual([]);
    expect((await session.memoryHistory({ includeInvalidated: true })).map((b) => b.value)).toEqual(['Kyiv']);
    await session.close();
  });

  it('validates input before writing anything', () => {
    expect(() => memSession('', { userId: 'u1', store: createMemoryStore() })).toThrow(Mem01Error);
    expect(() => memSession('s', { userId: '', store: createMemoryStore() })).toThrow(/userId/);
    expect(() => memSession('s', { userId: 'u', store: {} as never })).toThrow(/EngineStore/);
  });
});

describe('history transactions', () => {
  it('converges on retries, refuses a different transaction and checks suffixes', async () => {
    const { session } = testSession('tx');
    const items = [{ role: 'user' as const, content: 'k=1' }];
    await session.applyHistoryTransaction({
      operationId: 'op1',
      transaction: { type: 'append_items', items },
    });
    await session.applyHistoryTransaction({
      operationId: 'op1',
      transaction: { type: 'append_items', items },
    });
    expect(await session.getItems()).toHaveLength(1);
    await expect(
      session.applyHistoryTransaction({
        operationId: 'op1',
        transaction: { type: 'append_items', items: [{ role: 'user', content: 'other' }] },
      }),
    ).rejects.toThrow();
    await session.applyHistoryTransaction({
      operationId: 'op2',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: items,
        replacement: [{ role: 'user', content: 'k=2' }],
      },
    });
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'k=2' }]);
    await expect(
      session.applyHistoryTransaction({
        operationId: 'op3',
        transaction: { type: 'replace_suffix', expectedSuffix: items, replacement: [] },
      }),
    ).rejects.toThrow();
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'k=2' }]);
    await session.close();
  });
});

describe('secrets', () => {
  it('never shows keys or connection strings in inspect output or errors', async () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-supersecretvalue123456',
      DATABASE_URL: 'postgres://me:hunter2pass@127.0.0.1:1/nowhere',
    };
    const session = memSession('secret', { userId: 'u1', env, extractor: new KeyValueExtractor() });
    const shown = `${inspect(session, { depth: 10 })} ${JSON.stringify(session)}`;
    expect(shown).not.toContain('supersecret');
    expect(shown).not.toContain('hunter2');
    const err = await session.getItems().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const text = `${String(err)} ${(err as Error).stack} ${inspect(err, { depth: 5 })}`;
    expect(text).not.toContain('supersecret');
    expect(text).not.toContain('hunter2');
    await session.close();
  });
});
