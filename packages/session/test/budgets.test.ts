/**
 * Budgets reach the engine from memSession's options and the environment (`MEM01_*`), and a spent budget, counted in
 * the store, leaves the turns queued for every runtime sharing it.
 */
import type { Embedder, Extractor } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeSharedRuntimes,
  getMemoryUsage,
  type MemSessionOptions,
  memSession,
  openMemoryRuntime,
} from '../src/index.js';
import { agentWith, echoModel, inputText, runner } from './harness.js';

afterEach(() => closeSharedRuntimes());

function options(extra: Partial<MemSessionOptions> = {}): MemSessionOptions {
  return {
    userId: 'b-user',
    store: createMemoryStore(),
    extractor: new KeyValueExtractor(),
    embedder: null,
    env: {},
    ...extra,
  };
}

describe('budgets', () => {
  it('the environment sets them; options.budgets over engine.budgets over the environment', async () => {
    const env = {
      MEM01_LLM_CALLS_PER_USER: '40',
      MEM01_INPUT_TOKENS_PER_USER: '50000',
      MEM01_OUTPUT_TOKENS_PER_USER: '8000',
      MEM01_EMBEDDING_CALLS_PER_USER: '200',
      MEM01_EMBEDDING_TOKENS_PER_USER: '90000',
      MEM01_MAX_ACTIVE_BELIEFS_PER_USER: '500',
      MEM01_MAX_ACTIVE_TOKENS_PER_USER: '20000',
      MEM01_BUDGET_PERIOD_MS: '60000',
    };
    const fromEnv = memSession('c', options({ env }));
    expect((await fromEnv.runtime()).engine.config.budgets).toEqual({
      periodMs: 60_000,
      llmCallsPerUser: 40,
      inputTokensPerUser: 50_000,
      outputTokensPerUser: 8000,
      embeddingCallsPerUser: 200,
      embeddingTokensPerUser: 90_000,
      maxActiveBeliefsPerUser: 500,
      maxActiveTokensPerUser: 20_000,
    });
    await fromEnv.close();
    const layered = memSession(
      'c',
      options({
        env,
        engine: { budgets: { llmCallsPerUser: 5, outputTokensPerUser: 7 } },
        budgets: { llmCallsPerUser: 3 },
      }),
    );
    expect((await layered.runtime()).engine.config.budgets).toMatchObject({
      llmCallsPerUser: 3,
      outputTokensPerUser: 7,
      inputTokensPerUser: 50_000,
    });
    await layered.close();
    // None by default.
    const plain = memSession('c', options());
    expect((await plain.runtime()).engine.config.budgets).toMatchObject({
      llmCallsPerUser: null,
      outputTokensPerUser: null,
      maxActiveBeliefsPerUser: null,
      maxActiveTokensPerUser: null,
    });
    await plain.close();
    expect(() => memSession('c', options({ env: { MEM01_OUTPUT_TOKENS_PER_USER: 'lots' } }))).toThrow(
      /MEM01_OUTPUT_TOKENS_PER_USER/,
    );
    expect(() => memSession('c', options({ env: { MEM01_EMBEDDING_CALLS_PER_USER: '0' } }))).toThrow(
      /MEM01_EMBEDDING_CALLS_PER_USER must be a positive integer/,
    );
    expect(() => memSession('c', options({ env: { MEM01_BUDGET_PERIOD_MS: '5' } }))).toThrow(/periodMs/);
    const runtime = await openMemoryRuntime({
      store: createMemoryStore(),
      extractor: new KeyValueExtractor(),
      embedder: null,
      env: {},
    });
    expect(() => memSession('c', { userId: 'u', runtime, budgets: { llmCallsPerUser: 1 } })).toThrow(
      /budgets/,
    );
    await runtime.close();
  });

  it('two runtimes on one store count one budget: a spent one leaves the turns queued', async () => {
    const store = createMemoryStore();
    const kv = new KeyValueExtractor();
    const metered: Extractor = {
      name: 'metered',
      async extract(request) {
        return { ...(await kv.extract(request)), usage: { llmCalls: 1, outputTokens: 10 } };
      },
    };
    const env = { MEM01_LLM_CALLS_PER_USER: '1' };
    const a = await openMemoryRuntime({ store, extractor: metered, embedder: null, env, episodic: false });
    const b = await openMemoryRuntime({ store, extractor: metered, embedder: null, env, episodic: false });
    const scope = { userId: 'shared' };
    const at = new Date().toISOString();
    await a.engine.accept([{ scope, sessionId: 's1', position: 0, role: 'user', text: 'city=Oslo', at }]);
    await a.engine.flush(scope);
    await b.engine.accept([{ scope, sessionId: 's2', position: 0, role: 'user', text: 'pet=cat', at }]);
    await b.engine.flush(scope);
    expect(b.engine.lastError(scope)).toMatch(/llm_calls budget/);
    expect((await store.backlog({ now: at, userId: 'shared' })).queued).toBe(1);
    expect(kv.calls).toBe(1);
    await a.close();
    await b.close();
  });
});

describe('usage', () => {
  it('memoryUsage() and getMemoryUsage() report a user’s counts against the limits; a spent embedding budget leaves recall lexical', async () => {
    const kv = new KeyValueExtractor();
    const metered: Extractor = {
      name: 'metered',
      async extract(request) {
        return { ...(await kv.extract(request)), usage: { llmCalls: 1, inputTokens: 30, outputTokens: 5 } };
      },
    };
    const words = new WordHashEmbedder(64);
    let embedderCalls = 0;
    const semantic: Embedder = {
      model: 'metered-semantic-test',
      dimensions: 64,
      minSimilarity: 0.2,
      async embed(texts, options) {
        embedderCalls++;
        options?.onUsage?.({ embeddingCalls: 1, embeddingTokens: 4 * texts.length });
        return words.embed(texts);
      },
    };
    const env = { MEM01_EMBEDDING_CALLS_PER_USER: '3', MEM01_LLM_CALLS_PER_USER: '10' };
    const store = createMemoryStore();
    // Replies off: the arithmetic below counts the user's turn alone (a reply is embedded too, one call more).
    const session = memSession(
      'usage-1',
      options({ store, extractor: metered, embedder: semantic, env, engine: { replies: false } }),
    );
    const model = echoModel();
    const agent = agentWith(model);
    // The first run recalls (one query embedding); its turn is extracted after it: candidates and the commit.
    await runner().run(agent, 'home_city=Oslo', { session, ...session.runConfig() });
    await session.flushMemory();
    const usage = await session.memoryUsage();
    expect(usage).toMatchObject({
      userId: 'b-user',
      periodMs: 3_600_000,
      counting: true,
      llmCalls: { used: 1, limit: 10 },
      inputTokens: { used: 30, limit: null },
      outputTokens: { used: 5, limit: null },
      embeddingCalls: { used: 3, limit: 3 },
      // The queries' 4 tokens each, and the commit's statement and episode.
      embeddingTokens: { used: 16, limit: null },
    });
    expect(embedderCalls).toBe(3);
    expect(Date.parse(usage.windowEnd) - Date.parse(usage.windowStart)).toBe(3_600_000);
    expect(usage.activeBeliefs.used).toBeGreaterThanOrEqual(1);
    expect(await getMemoryUsage({ session })).toEqual(usage);
    // Spent: a run in a new conversation (no history to carry the city) still gets the belief, recalled
    // lexically, and the embedder is not called for it.
    const next = memSession('usage-2', options({ store, extractor: metered, embedder: semantic, env }));
    await runner().run(agent, 'what is my home city?', { session: next, ...next.runConfig() });
    expect(inputText(model.inputs.at(-1) ?? [])).toContain('Oslo');
    expect(embedderCalls).toBe(3);
    await session.close();
    await next.close();
  });
});
