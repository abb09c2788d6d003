// The extractor and embedder inside the real MemoryEngine with the in-memory store, against the fake server.
import { type EngineBudgets, MemoryEngine } from '@mem01/engine';
import { createMemoryStore } from '@mem01/store-memory';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIEmbedder, createOpenAIExtractor } from '../src/index.js';
import { extractionData, type FakeOpenAI, quotingResponder, startFakeOpenAI } from '../src/testing/index.js';
import { API_KEY, FAST_RETRY } from './helpers.js';

const fake: FakeOpenAI = await startFakeOpenAI({ embeddingDimensions: 64 });
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const scope = { userId: 'maya' };
const at = '2026-02-01T10:00:00.000Z';
const input = (position: number, role: 'user' | 'assistant', text: string) => ({
  scope,
  sessionId: 's1',
  position,
  role,
  text,
  at,
});

// A stand-in model: adds the city named after "live in", quoting the user turn.
fake.setResponses((request) => {
  const data = extractionData(request);
  const ops = [];
  for (const t of data.turns) {
    const m = t.role === 'user' ? /I live in (\w+)/.exec(t.text) : null;
    if (!m) continue;
    const existing = data.candidates.find((c) => c.attribute === 'home_city');
    const ev = [{ t: t.id, q: m[0] }];
    ops.push(
      existing
        ? {
            op: 'supersede',
            id: existing.id,
            kind: null,
            val: m[1],
            stmt: `The user lives in ${m[1]}.`,
            conf: 0.95,
            from: null,
            ev,
          }
        : {
            op: 'add',
            kind: 'fact',
            subj: 'user',
            attr: 'home_city',
            val: m[1],
            stmt: `The user lives in ${m[1]}.`,
            conf: 0.95,
            from: null,
            to: null,
            ev,
          },
    );
  }
  return { ops };
});

/** The engine on the in-memory store with the OpenAI extractor and embedder, and the engine's `budgets`. */
function engineWith(budgets?: Partial<EngineBudgets>) {
  const store = createMemoryStore();
  const common = { apiKey: API_KEY, baseURL: fake.url, retry: FAST_RETRY };
  const engine = new MemoryEngine({
    store,
    extractor: createOpenAIExtractor(common),
    embedder: createOpenAIEmbedder({ ...common, dimensions: 64 }),
    ...(budgets ? { config: { budgets } } : {}),
  });
  return { store, engine };
}

describe('inside MemoryEngine', () => {
  it('extracts, supersedes through candidates, and recalls', async () => {
    const { engine } = engineWith();
    await engine.accept([input(0, 'user', 'I live in Seattle.'), input(1, 'assistant', 'Nice city!')]);
    await engine.flush(scope);
    await engine.accept([input(2, 'user', 'Update: I live in Portland now.')]);
    await engine.flush(scope);
    const beliefs = await engine.recall(scope, 'where does the user live');
    expect(beliefs.map((b) => b.belief.value)).toEqual(['Portland']);
    const responses = fake.requestsFor('responses');
    expect(responses).toHaveLength(2);
    expect(extractionData(responses[1]!).candidates.map((c) => c.value)).toEqual(['Seattle']);
    const stats = engine.stats();
    expect(stats.llmCalls).toBe(2);
    expect(stats.inputTokens).toBe(responses[0]!.inputTokens + responses[1]!.inputTokens);
    await engine.close();
  });

  it('the engine counts the extractor’s reported usage in the store; a spent budget leaves the turn queued', async () => {
    const { engine, store } = engineWith({ llmCallsPerUser: 1 });
    await engine.accept([input(0, 'user', 'I live in Seattle.')]);
    await engine.flush(scope);
    const [first] = fake.requestsFor('responses');
    expect(await engine.usage(scope)).toMatchObject({
      llmCalls: { used: 1, limit: 1 },
      inputTokens: { used: first!.inputTokens, limit: null },
    });
    expect((await engine.usage(scope)).outputTokens.used).toBeGreaterThan(0);
    await engine.accept([input(1, 'user', 'I live in Denver.')]);
    await engine.flush(scope);
    expect(fake.requestsFor('responses')).toHaveLength(1);
    expect(engine.lastError(scope)).toMatch(/budget.*stay queued/);
    const backlog = await store.backlog({ now: new Date().toISOString(), userId: 'maya' });
    expect(backlog.queued).toBe(1);
    expect(backlog.dead).toBe(0);
    await engine.close();
  });
});

describe('embedder usage inside MemoryEngine', () => {
  it('the embeddings responses’ token counts reach the user’s budgets; a spent embedding budget holds extraction', async () => {
    const { engine, store } = engineWith({ embeddingCallsPerUser: 4 });
    await engine.accept([input(0, 'user', 'I live in Seattle.')]);
    await engine.flush(scope);
    // The candidates' query, then the belief and the turn's episode in one request.
    const sent = fake.requestsFor('embeddings');
    expect(sent).toHaveLength(2);
    const tokens = sent.reduce((n, r) => n + r.inputTokens, 0);
    expect(await engine.usage(scope)).toMatchObject({
      llmCalls: { used: 1, limit: null },
      inputTokens: { used: fake.requestsFor('responses')[0]!.inputTokens, limit: null },
      embeddingCalls: { used: 2, limit: 4 },
      embeddingTokens: { used: tokens, limit: null },
    });
    expect(engine.stats()).toMatchObject({ embeddingCalls: 2, embeddingTokens: tokens });
    // A query is a request; the same query again is a cache hit, which costs nothing.
    await engine.recall(scope, 'where does the user live');
    await engine.recall(scope, 'where does the user live');
    expect(fake.requestsFor('embeddings')).toHaveLength(3);
    expect((await engine.usage(scope)).embeddingCalls).toEqual({ used: 3, limit: 4 });
    await engine.recall(scope, 'which city does the user live in');
    expect((await engine.usage(scope)).embeddingCalls).toEqual({ used: 4, limit: 4 });
    // Spent: recall goes on lexically without a request, and the next turn waits for the window.
    expect((await engine.recall(scope, 'where does the user live now')).map((h) => h.belief.value)).toContain(
      'Seattle',
    );
    expect(fake.requestsFor('embeddings')).toHaveLength(4);
    await engine.accept([input(1, 'user', 'I live in Denver.')]);
    await engine.flush(scope);
    expect(engine.lastError(scope)).toMatch(/embedding_calls budget spent/);
    expect(fake.requestsFor('embeddings')).toHaveLength(4);
    expect(fake.requestsFor('responses')).toHaveLength(1);
    expect((await store.backlog({ now: new Date().toISOString(), userId: 'maya' })).queued).toBe(1);
    await engine.close();
  });
});

describe('quotingResponder (for smoke runs)', () => {
  it('turns every user turn into a grounded belief through the engine', async () => {
    const smoke = await startFakeOpenAI({ responses: quotingResponder(), embeddingDimensions: 64 });
    try {
      const common = { apiKey: API_KEY, baseURL: smoke.url };
      const engine = new MemoryEngine({
        store: createMemoryStore(),
        extractor: createOpenAIExtractor({ ...common }),
        embedder: createOpenAIEmbedder({ ...common, dimensions: 64 }),
      });
      await engine.accept([
        input(0, 'user', 'I work as a nurse at Harborview hospital.'),
        input(1, 'assistant', 'That sounds demanding.'),
        input(2, 'user', 'My sister Ana lives in Portland.'),
      ]);
      await engine.flush(scope);
      const page = await engine.list(scope, {});
      const beliefs = page.items.filter((b) => b.kind !== 'episode' && b.kind !== 'reply');
      expect(beliefs.map((b) => b.attribute).sort()).toEqual(['sister', 'work']);
      // The assistant's turn is kept as a reply, grounded in its own turn, never as a belief about the user.
      expect(page.items.filter((b) => b.kind === 'reply').map((b) => [b.value, b.evidence[0]?.role])).toEqual(
        [['That sounds demanding.', 'assistant']],
      );
      // Beside them, the two user turns as episodes (assistant turns never are).
      expect(page.items.filter((b) => b.kind === 'episode')).toHaveLength(2);
      for (const b of page.items) expect(b.evidence[0]?.role).toBe(b.kind === 'reply' ? 'assistant' : 'user');
      await engine.close();
    } finally {
      await smoke.close();
    }
  });
});
