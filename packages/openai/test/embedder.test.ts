import { ConfigError, DimensionMismatchError, InvalidInputError } from '@mem01/engine';
import type { Usage } from '@mem01/engine/provider-kit';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createOpenAIEmbedder,
  OpenAIAbortedError,
  OpenAIProviderError,
  type UsageEvent,
} from '../src/index.js';
import { type FakeOpenAI, fakeEmbedding, startFakeOpenAI } from '../src/testing/index.js';
import { API_KEY, FAST_RETRY } from './helpers.js';

const fake: FakeOpenAI = await startFakeOpenAI();
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function embedder(extra: Parameters<typeof createOpenAIEmbedder>[0] = {}) {
  return createOpenAIEmbedder({ apiKey: API_KEY, baseURL: fake.url, retry: FAST_RETRY, ...extra });
}
const inputsOf = (i: number) => (fake.requestsFor('embeddings')[i]!.body as { input: string[] }).input;

describe('OpenAI embedder over HTTP', () => {
  it('defaults to text-embedding-3-small with 1536 dimensions, not sending `dimensions`', async () => {
    const e = embedder();
    expect(e.model).toBe('text-embedding-3-small');
    expect(e.dimensions).toBe(1536);
    const [v] = await e.embed(['I live in Lisbon']);
    expect(v).toBeInstanceOf(Float32Array);
    expect(v!.length).toBe(1536);
    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(body.model).toBe('text-embedding-3-small');
    expect('dimensions' in body).toBe(false);
    // The fake's vector, decoded from the client's default base64 encoding.
    const expected = fakeEmbedding('I live in Lisbon', 1536);
    expect(Array.from(v!).slice(0, 50)).toEqual(expected.slice(0, 50).map((x) => Math.fround(x)));
    expect(embedder({ model: 'text-embedding-3-large' }).dimensions).toBe(3072);
  });

  it('passes `dimensions` through when set', async () => {
    const e = embedder({ dimensions: 256 });
    const vs = await e.embed(['a b c']);
    expect((fake.requests[0]!.body as { dimensions: number }).dimensions).toBe(256);
    expect(vs[0]!.length).toBe(256);
  });

  it('batches requests by batchSize and keeps order', async () => {
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const vs = await embedder({ batchSize: 2, dimensions: 64 }).embed(texts);
    expect(fake.requests).toHaveLength(3);
    expect([inputsOf(0), inputsOf(1), inputsOf(2)]).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    vs.forEach((v, i) => {
      expect(Array.from(v)).toEqual(fakeEmbedding(texts[i]!, 64).map((x) => Math.fround(x)));
    });
  });

  it('serves repeated texts from the cache, and sends duplicates once', async () => {
    const events: UsageEvent[] = [];
    const e = embedder({ dimensions: 32, onUsage: (ev) => events.push(ev) });
    const first = await e.embed(['tea', 'coffee', 'tea']);
    expect(inputsOf(0)).toEqual(['tea', 'coffee']);
    expect(first[0]).toBe(first[2]);
    const second = await e.embed(['coffee', 'water']);
    expect(inputsOf(1)).toEqual(['water']);
    expect(Array.from(second[0]!)).toEqual(Array.from(first[1]!));
    await e.embed(['tea']);
    expect(fake.requests).toHaveLength(2);
    expect(e.stats()).toEqual({ hits: 2, misses: 3, requests: 2 });
    expect(events.map((ev) => [ev.usage.embeddingCalls, ev.cacheHits])).toEqual([
      [1, 0],
      [1, 1],
      [0, 1],
    ]);
  });

  it('keys a shared cache by model, dimensions and a content hash: no text, no key', async () => {
    const shared = new Map<string, Float32Array>();
    await embedder({ dimensions: 16, cache: shared }).embed(['my secret diary entry']);
    await embedder({ dimensions: 16, cache: shared, apiKey: 'sk-other-key-000000000' }).embed([
      'my secret diary entry',
    ]);
    expect(fake.requests).toHaveLength(1);
    await embedder({ dimensions: 8, cache: shared }).embed(['my secret diary entry']);
    expect(fake.requests).toHaveLength(2);
    const keys = [...shared.keys()];
    expect(keys).toHaveLength(2);
    for (const k of keys) {
      expect(k.startsWith('text-embedding-3-small:')).toBe(true);
      expect(k).not.toContain('diary');
      expect(k).not.toContain(API_KEY);
      expect(k).not.toContain('sk-');
    }
  });

  it('throws DimensionMismatchError on a wrong-length vector and caches nothing', async () => {
    fake.script('embeddings', { type: 'vectors', vectors: [[0.1, 0.2, 0.3]] });
    const e = embedder({ dimensions: 8 });
    await expect(e.embed(['x y'])).rejects.toThrow(DimensionMismatchError);
    await expect(e.embed(['x y'])).resolves.toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries 429 and 500 on embeddings', async () => {
    fake.script('embeddings', { type: 'rate_limit', retryAfterMs: 30 }, { type: 'status', status: 502 });
    const vs = await embedder({ dimensions: 8 }).embed(['hello']);
    expect(vs).toHaveLength(1);
    expect(fake.requests).toHaveLength(3);
  });

  it('rejects bad input before any request', async () => {
    const e = embedder();
    await expect(e.embed(['ok', ''])).rejects.toThrow(InvalidInputError);
    await expect(e.embed([42 as unknown as string])).rejects.toThrow(InvalidInputError);
    expect(fake.requests).toHaveLength(0);
    expect(await e.embed([])).toEqual([]);
  });

  it('the removed budgets option and budgetUsed() are a ConfigError that names the engine’s budgets', async () => {
    expect(() => embedder({ dimensions: 8, budgets: { embeddingCallsPerUser: 1 } })).toThrow(
      /createOpenAIEmbedder\(\{ budgets \}\) is no longer supported: budgets are the engine’s/,
    );
    expect(() => embedder({ dimensions: 8, budgets: {} })).toThrow(ConfigError);
    expect(() => embedder({ dimensions: 8 }).budgetUsed('u1')).toThrow(ConfigError);
    expect(fake.requests).toHaveLength(0);
  });

  it('reports each request’s usage to the caller (the engine): the response’s tokens, zeros for a cache hit', async () => {
    const e = embedder({ dimensions: 8, batchSize: 2 });
    const reports: Usage[] = [];
    const onUsage = (u: Usage) => reports.push(u);
    await e.embed(['one', 'two', 'three'], { scope: { userId: 'u1' }, onUsage });
    const sent = fake.requestsFor('embeddings');
    expect(sent).toHaveLength(2);
    // The fake answers `usage.prompt_tokens` from what each request sent.
    expect(reports).toEqual(sent.map((r) => ({ embeddingCalls: 1, embeddingTokens: r.inputTokens })));
    reports.length = 0;
    await e.embed(['two', 'one'], { onUsage });
    expect(reports).toEqual([{ embeddingCalls: 0, embeddingTokens: 0 }]);
    // The response's own counts, whatever the estimate: prompt_tokens, else total_tokens, else chars / 4.
    const reply = (usage: unknown) => ({
      type: 'json' as const,
      body: {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 8 }, (_, i) => i / 8) }],
        ...(usage === undefined ? {} : { usage }),
      },
    });
    fake.script(
      'embeddings',
      reply({ prompt_tokens: 77, total_tokens: 80 }),
      reply({ total_tokens: 55 }),
      reply(undefined),
    );
    reports.length = 0;
    for (const text of ['four', 'five', 'sixteen chars ok']) await e.embed([text], { onUsage });
    expect(reports).toEqual([
      { embeddingCalls: 1, embeddingTokens: 77 },
      { embeddingCalls: 1, embeddingTokens: 55 },
      { embeddingCalls: 1, embeddingTokens: 4 },
    ]);
    // A failing callback breaks nothing.
    const thrown = await e.embed(['six'], {
      onUsage: () => {
        throw new Error('accounting down');
      },
    });
    expect(thrown).toHaveLength(1);
  });

  it('times out a slow embeddings reply, retries, and can be cancelled', async () => {
    fake.script('embeddings', { type: 'slow', delayMs: 3000 });
    const vs = await embedder({ dimensions: 8, timeoutMs: 200 }).embed(['slow one']);
    expect(vs).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);

    fake.script('embeddings', { type: 'slow', delayMs: 3000 }, { type: 'slow', delayMs: 3000 });
    await expect(
      embedder({ dimensions: 8, timeoutMs: 200, maxAttempts: 2 }).embed(['slow two']),
    ).rejects.toThrow(OpenAIProviderError);

    fake.script('embeddings', { type: 'slow', delayMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(
      embedder({ dimensions: 8 }).embed(['slow three'], { signal: controller.signal }),
    ).rejects.toThrow(OpenAIAbortedError);
  });
});
