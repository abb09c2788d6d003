/**
 * Budgets reach the engine from memSession's options and the environment (`MEM01_*`), and a spent budget, counted in
 * the store, leaves the turns queued for every runtime sharing it.
 */
import type { Extractor } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, type MemSessionOptions, memSession, openMemoryRuntime } from '../src/index.js';

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
      MEM01_MAX_ACTIVE_BELIEFS_PER_USER: '500',
      MEM01_BUDGET_PERIOD_MS: '60000',
    };
    const fromEnv = memSession('c', options({ env }));
    expect((await fromEnv.runtime()).engine.config.budgets).toEqual({
      periodMs: 60_000,
      llmCallsPerUser: 40,
      inputTokensPerUser: 50_000,
      outputTokensPerUser: 8000,
      maxActiveBeliefsPerUser: 500,
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
    });
    await plain.close();
    expect(() => memSession('c', options({ env: { MEM01_OUTPUT_TOKENS_PER_USER: 'lots' } }))).toThrow(
      /MEM01_OUTPUT_TOKENS_PER_USER/,
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
