/**
 * The `MemoryEngine` facade and `MemoryAdmin`, on the real in-process store: the read barrier, acceptance with a
 * transcript, strict mode, the lifecycle through the one planner, and the relevance floor. The conformance suite
 * runs the pipeline on every store; these pin the facade's own behaviour in the engine's package.
 */
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryEngine } from '../src/engine.js';
import { ClosedError, InvalidInputError, StoreError } from '../src/errors.js';
import { MemoryAdmin } from '../src/memory-admin.js';
import type { Embedder, EngineStore, FullStore } from '../src/ports.js';
import { KeyValueExtractor, scriptedExtractor, WordHashEmbedder } from '../src/testing/index.js';

let createMemoryStore: () => FullStore;
beforeAll(async () => {
  // The real in-process store, from its source. It is not a declared dependency: that would be a cycle in the
  // package graph (the store depends on the engine). Vitest resolves its own '@mem01/engine' imports to this source.
  const path = '../../store-memory/src/index.js';
  ({ createMemoryStore } = (await import(/* @vite-ignore */ path)) as { createMemoryStore: () => FullStore });
});

const AT = '2026-01-01T00:00:00.000Z';
const scope = { userId: 'u1' };
const turn = (position: number, text: string) => ({
  scope,
  sessionId: 's1',
  position,
  role: 'user' as const,
  text,
  at: AT,
});

function engineOn(store: EngineStore, options: Partial<ConstructorParameters<typeof MemoryEngine>[0]> = {}) {
  const extractor = new KeyValueExtractor();
  const engine = new MemoryEngine({ store, extractor, embedder: new WordHashEmbedder(16), ...options });
  return { engine, extractor };
}

describe('the read barrier', () => {
  it('accept does not wait for extraction; the next read of the user does', async () => {
    const { engine, extractor } = engineOn(createMemoryStore());
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    expect(extractor.calls).toBe(0);
    expect((await engine.recall(scope, 'home city')).map((h) => h.belief.value)).toEqual(['Lisbon']);
    expect(extractor.calls).toBe(1);
    await engine.close();
  });

  it('appendTranscript stores items and accepts turns in one step, and the barrier knows about them', async () => {
    const store = createMemoryStore();
    const { engine } = engineOn(store);
    const items = [
      { role: 'user', content: 'pet=cat' },
      { role: 'assistant', content: 'ok' },
    ];
    const result = await engine.appendTranscript(scope, 'conv', items, {
      turns: [{ index: 0, role: 'user', text: 'pet=cat', at: AT }],
    });
    expect(result).toMatchObject({ positions: [0, 1], duplicate: false, accepted: 1 });
    // The fact drawn from the turn, and the turn itself as an episode.
    expect((await engine.list(scope)).items.map((b) => `${b.kind}:${b.value}`).sort()).toEqual([
      'episode:pet=cat',
      'fact:cat',
    ]);
    expect(await store.getItems(scope, 'conv')).toEqual(items);
    await engine.close();
  });

  it('reads of another user do not wait for this user', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const store = createMemoryStore();
    const engine = new MemoryEngine({
      store,
      extractor: scriptedExtractor(async () => {
        await gate;
        return { operations: [] };
      }),
    });
    await engine.accept([turn(0, 'slow')]);
    void engine.flush(scope);
    await expect(engine.recall({ userId: 'other' }, 'anything')).resolves.toEqual([]);
    release();
    await engine.close();
  });
});

describe('strict mode', () => {
  it('raises a failure once, at the user’s next operation, with its cause chain sanitised', async () => {
    const key = 'sk-proj-ZZZZZZZZZZZZZZZZZZZZZZZZ';
    const engine = new MemoryEngine({
      store: createMemoryStore(),
      extractor: scriptedExtractor(() => {
        throw new Error('extractor failed', { cause: new Error(`bad key ${key}`) });
      }),
      config: { strict: true },
    });
    await engine.accept([turn(0, 'x=1')]);
    const err = await engine.list(scope).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(inspect(err, { depth: 10 })).toContain('extractor failed');
    expect(inspect(err, { depth: 10 })).not.toContain('ZZZZZZZZ');
    await expect(engine.list(scope)).resolves.toMatchObject({ items: [] });
    await engine.close();
  });

  it('refuses an oversized turn in appendTranscript before writing anything; failure-open stores it', async () => {
    const store = createMemoryStore();
    const big = 'x'.repeat(300_000);
    const strict = engineOn(store, { config: { strict: true } }).engine;
    await expect(
      strict.appendTranscript(scope, 'c', [{ role: 'user', content: big }], {
        turns: [{ index: 0, role: 'user', text: big, at: AT }],
      }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(await store.getItems(scope, 'c')).toEqual([]);
    const open = engineOn(store).engine;
    await open.appendTranscript(scope, 'c', [{ role: 'user', content: big }], {
      turns: [{ index: 0, role: 'user', text: big, at: AT }],
    });
    expect(await store.getItems(scope, 'c')).toHaveLength(1);
    expect(open.lastError(scope)).toMatch(/text/);
    await strict.close();
    await open.close();
  });

  it('a store failure is raised as a StoreError and the user recovers', async () => {
    const store = createMemoryStore();
    let failures = 1;
    const faulty = new Proxy(store, {
      get(target, prop) {
        if (prop === 'claim' && failures > 0) {
          return async () => {
            failures--;
            throw new StoreError('database is locked');
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const { engine } = engineOn(faulty, { config: { strict: true } });
    await engine.accept([turn(0, 'city=Rome')]);
    await expect(engine.recall(scope, 'city')).rejects.toBeInstanceOf(StoreError);
    expect((await engine.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Rome']);
    await engine.close();
  });
});

describe('lifecycle through the planner', () => {
  it('correct supersedes and retires the episodes of the corrected belief’s turn', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { episodic: true } });
    await engine.accept([turn(0, 'home_city=NYC'), turn(1, 'rent=2400')]);
    const [nyc] = (await engine.list(scope)).items.filter((b) => b.value === 'NYC');
    const sf = await engine.correct(scope, nyc!.id, 'SF');
    const all = await engine.history(scope);
    const episode = all.find((b) => b.kind === 'episode' && b.value === 'home_city=NYC');
    expect(episode).toMatchObject({ status: 'superseded', supersededBy: sf.id });
    expect(all.find((b) => b.id === nyc!.id)?.validTo).not.toBeNull();
    // The episode of the other turn is still current.
    expect(all.find((b) => b.kind === 'episode' && b.value === 'rent=2400')?.status).toBe('active');
    expect((await engine.recall(scope, 'home city NYC')).map((h) => h.belief.value)).not.toContain(
      'home_city=NYC',
    );
    await engine.close();
  });

  it('a fact and its correction extracted in one batch: the stale turn’s episode is retired, its other fact stays', async () => {
    for (const batchChars of [0, 1000]) {
      const { engine } = engineOn(createMemoryStore(), {
        extractor: new KeyValueExtractor({ batchChars }),
        config: { episodic: true },
      });
      await engine.accept([
        { ...turn(0, 'home_city=NYC; rent=2400'), sessionId: 'conv-1' },
        { ...turn(0, 'home_city=SF'), sessionId: 'conv-2' },
      ]);
      const all = await engine.history(scope);
      const sf = all.find((b) => b.kind !== 'episode' && b.value === 'SF')!;
      expect(all.find((b) => b.kind === 'episode' && b.value.includes('NYC'))).toMatchObject({
        status: 'superseded',
        supersededBy: sf.id,
      });
      expect(all.find((b) => b.kind !== 'episode' && b.value === '2400')?.status).toBe('active');
      expect(all.find((b) => b.kind === 'episode' && b.value === 'home_city=SF')?.status).toBe('active');
      const block = await engine.context(scope, 'home city');
      expect(block.text).toContain('SF');
      expect(block.text).not.toContain('NYC');
      await engine.close();
    }
  });

  it('approve and reject act on pending beliefs only; wrong states are clear errors', async () => {
    const { engine } = engineOn(createMemoryStore(), {
      extractor: new KeyValueExtractor({ confidence: 0.3 }),
    });
    await engine.accept([turn(0, 'pet=cat'), turn(1, 'car=vw')]);
    const pending = (await engine.list(scope, { statuses: ['pending'] })).items;
    const cat = pending.find((b) => b.value === 'cat')!;
    const vw = pending.find((b) => b.value === 'vw')!;
    expect((await engine.approve(scope, cat.id)).status).toBe('active');
    await expect(engine.approve(scope, cat.id)).rejects.toThrow(/only pending beliefs can be approved/);
    expect((await engine.reject(scope, vw.id, { expectedVersion: vw.version })).status).toBe('retracted');
    await engine.close();
  });
});

describe('MemoryAdmin', () => {
  it('reads and manages beliefs without an extractor, and refuses calls once closed', async () => {
    const store = createMemoryStore();
    const admin = new MemoryAdmin({ store, embedder: new WordHashEmbedder(16) });
    const b = await admin.remember(scope, { kind: 'fact', attribute: 'city', value: 'Oslo' });
    expect((await admin.recall(scope, 'city')).map((h) => h.belief.id)).toEqual([b.id]);
    expect((await admin.correct(scope, b.id, 'Bergen')).value).toBe('Bergen');
    await admin.close();
    await expect(admin.list(scope)).rejects.toBeInstanceOf(ClosedError);
  });
});

describe('the relevance floor', () => {
  it('recalls nothing for a question whose informative word nothing holds', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { episodic: true } });
    await engine.accept([
      turn(0, 'my name is Alex'),
      turn(1, 'I live in NYC'),
      turn(2, 'we named the dog Rex'),
      turn(3, 'the conference name tags were a mess'),
    ]);
    // "name" is common in this memory and "sister" is in none of it: nothing here is about a sister.
    expect(await engine.recall(scope, "What is my sister's name?")).toEqual([]);
    expect((await engine.recall(scope, 'What is the name of my dog?'))[0]?.belief.value).toBe(
      'we named the dog Rex',
    );
    expect((await engine.recall(scope, 'Where do I live?')).map((h) => h.belief.value)).toEqual([
      'I live in NYC',
    ]);
    const off = engineOn(createMemoryStore(), {
      config: { episodic: true, ranking: { minCoverage: 0 } },
    }).engine;
    await off.accept([turn(0, 'my name is Alex')]);
    expect(await off.recall(scope, "What is my sister's name?")).toHaveLength(1);
    await engine.close();
    await off.close();
  });
});

describe('pseudo-relevance feedback', () => {
  it('searches only the words the best results add, never the query’s words again nor the subject', async () => {
    const store = createMemoryStore();
    const searched: string[] = [];
    const search = store.searchLexical.bind(store);
    store.searchLexical = (s, query, options) => {
      searched.push(query);
      return search(s, query, options);
    };
    const { engine } = engineOn(store, { config: { episodic: false } });
    await engine.accept([
      turn(0, 'trip=Lisbon harbour ferry'),
      turn(1, 'trip_plan=Lisbon harbour tram'),
      turn(2, 'hotel=harbour view'),
      turn(3, 'car=blue'),
    ]);
    await engine.flush(scope); // extraction searches too (the candidates it offers); only recall's searches count
    searched.length = 0;
    const hits = await engine.recall(scope, 'the trip to Lisbon');
    expect(hits.length).toBeGreaterThan(0);
    // The first search has the query's words; feedback adds the words two of the best results share ("harbour"),
    // without the query's words (already matched) or "user" (the subject every statement names).
    expect(searched).toHaveLength(2);
    expect(searched[1]!.split(' ')).toContain('harbour');
    for (const word of [...searched[0]!.split(' '), 'user'])
      expect(searched[1]!.split(' ')).not.toContain(word);
    await engine.close();
  });
});

describe('long turns', () => {
  it('a turn over maxTextBytes is kept as several episodes, nothing dropped; forgetting a fact from it forgets them all', async () => {
    const store = createMemoryStore();
    const { engine } = engineOn(store, {
      config: { episodic: true, maxTextBytes: 1024, maxTurnBytes: 8192 },
    });
    const sentences = Array.from(
      { length: 60 },
      (_, i) => `Paragraph ${i} talks about topic number ${i} at length.`,
    );
    const long = `home_city=Lisbon\n${sentences.join(' ')}`;
    expect(new TextEncoder().encode(long).byteLength).toBeGreaterThan(3000);
    await engine.accept([turn(0, long)]);
    const episodes = (await engine.list(scope, { limit: 100 })).items.filter((b) => b.kind === 'episode');
    expect(episodes.length).toBeGreaterThan(2);
    for (const e of episodes) {
      expect(new TextEncoder().encode(e.statement).byteLength).toBeLessThanOrEqual(1024);
      expect(e.evidence[0]).toMatchObject({ sessionId: 's1', position: 0, at: AT });
      expect(e.validFrom).toBe(AT);
    }
    // Every sentence made it into some episode.
    const kept = episodes.map((e) => e.statement).join(' ');
    for (const s of sentences) expect(kept).toContain(s);
    expect((await engine.recall(scope, 'topic number 42')).map((h) => h.belief.kind)).toContain('episode');
    // The belief drawn from the turn retires every part of it.
    const city = (await engine.list(scope)).items.find((b) => b.attribute === 'home_city')!;
    await engine.forget(scope, city.id);
    const left = (await engine.list(scope, { limit: 100 })).items.filter((b) => b.kind === 'episode');
    expect(left).toEqual([]);
    await engine.close();
  });

  it('a turn over maxTurnBytes is refused with a clear error', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { maxTextBytes: 1024, maxTurnBytes: 4096 } });
    await expect(engine.accept([turn(0, 'x'.repeat(5000))])).rejects.toThrow(
      /5000 bytes, over the limit of 4096/,
    );
    await engine.close();
  });
});

describe('one extraction per message', () => {
  it('a user message saved twice in a conversation (session and saveTurn) is extracted once; said again after a change, it counts', async () => {
    const store = createMemoryStore();
    const { engine, extractor } = engineOn(store);
    const save = (text: string) =>
      engine.appendTranscript(scope, 'conv', [{ role: 'user', content: text }], {
        turns: [{ index: 0, role: 'user', text, at: new Date().toISOString() }],
      });
    expect((await save('colour=red')).accepted).toBe(1);
    expect((await save('colour=red')).accepted).toBe(0);
    expect(await store.getItems(scope, 'conv')).toHaveLength(2);
    expect((await save('colour=green')).accepted).toBe(1);
    // Back to red after green: a new message, not a repeat.
    expect((await save('colour=red')).accepted).toBe(1);
    expect((await engine.recall(scope, 'colour', { kinds: ['fact'] })).map((h) => h.belief.value)).toEqual([
      'red',
    ]);
    expect(extractor.seen).toHaveLength(3);
    // Another conversation says the same words: a different message.
    expect(
      (
        await engine.appendTranscript(scope, 'conv-2', [{ role: 'user', content: 'colour=red' }], {
          turns: [{ index: 0, role: 'user', text: 'colour=red', at: new Date().toISOString() }],
        })
      ).accepted,
    ).toBe(1);
    await engine.close();
  });
});

describe('embedder usage and budgets', () => {
  it('an embedder that reports nothing counts one call per call; reported requests and tokens are counted as given', async () => {
    const store = createMemoryStore();
    const budgets = { embeddingCallsPerUser: 100 };
    // The offline embedder reports no usage: each call of the engine counts as one.
    const { engine } = engineOn(store, { config: { budgets } });
    await engine.accept([turn(0, 'city=Oslo; pet=cat')]);
    await engine.flush(scope);
    // One call embedded both statements (and the turn's episode); the lexical embedder embeds no queries.
    expect((await engine.usage(scope)).embeddingCalls).toEqual({ used: 1, limit: 100 });
    expect(engine.stats()).toMatchObject({ embeddingCalls: 1, embeddingTokens: 0 });
    // Writes outside extraction embed for the user too: remember, then correct.
    const b = await engine.remember(scope, { kind: 'fact', attribute: 'team', value: 'Rosenborg' });
    await engine.correct(scope, b.id, 'Molde');
    expect((await engine.usage(scope)).embeddingCalls).toEqual({ used: 3, limit: 100 });
    await engine.close();
    // A semantic embedder with a cache: a call served without a request reports 0 calls, and costs nothing.
    const words = new WordHashEmbedder(16);
    const cache = new Map<string, Float32Array>();
    const cached: Embedder = {
      model: 'cached-test',
      dimensions: 16,
      minSimilarity: 0.2,
      async embed(texts, options) {
        const missing = texts.filter((t) => !cache.has(t));
        if (missing.length === 0) options?.onUsage?.({ embeddingCalls: 0, embeddingTokens: 0 });
        else {
          for (const [i, v] of (await words.embed(missing)).entries()) cache.set(missing[i]!, v);
          options?.onUsage?.({ embeddingCalls: 1, embeddingTokens: 5 * missing.length });
        }
        return texts.map((t) => cache.get(t)!);
      },
    };
    const other = { userId: 'u2' };
    const second = new MemoryEngine({
      store,
      extractor: new KeyValueExtractor(),
      embedder: cached,
      config: { episodic: false, budgets },
    });
    await second.recall(other, 'where is home');
    await second.recall(other, 'where is home');
    expect(await second.usage(other)).toMatchObject({
      embeddingCalls: { used: 1, limit: 100 },
      embeddingTokens: { used: 5, limit: null },
    });
    expect(second.stats()).toMatchObject({ embeddingCalls: 1, embeddingTokens: 5 });
    // The first user's counters are theirs alone.
    expect((await second.usage(scope)).embeddingCalls.used).toBe(3);
    await second.close();
  });

  it('a spent embedding-token budget holds extraction and leaves recall lexical', async () => {
    const store = createMemoryStore();
    let calls = 0;
    const words = new WordHashEmbedder(16);
    const costly: Embedder = {
      model: 'costly-test',
      dimensions: 16,
      minSimilarity: 0.2,
      async embed(texts, options) {
        calls++;
        options?.onUsage?.({ embeddingCalls: 1, embeddingTokens: 600 });
        return words.embed(texts);
      },
    };
    const engine = new MemoryEngine({
      store,
      extractor: new KeyValueExtractor(),
      embedder: costly,
      config: { episodic: false, budgets: { embeddingTokensPerUser: 1000 } },
    });
    await engine.accept([turn(0, 'city=Oslo')]);
    await engine.flush(scope);
    expect(calls).toBe(2);
    expect((await engine.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Oslo']);
    expect(calls).toBe(2);
    await engine.accept([turn(1, 'pet=cat')]);
    await engine.flush(scope);
    expect(engine.lastError(scope)).toMatch(/embedding_tokens budget spent/);
    expect(await engine.usage(scope)).toMatchObject({ embeddingTokens: { used: 1200, limit: 1000 } });
    await engine.close();
  });

  it('usage() does not wait for the user’s queued turns', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const kv = new KeyValueExtractor();
    const engine = new MemoryEngine({
      store: createMemoryStore(),
      extractor: {
        name: 'held',
        async extract(request) {
          await gate;
          return { ...(await kv.extract(request)), usage: { llmCalls: 1 } };
        },
      },
      config: { budgets: { llmCallsPerUser: 5 } },
    });
    await engine.accept([turn(0, 'city=Oslo')]);
    // The extraction is held: usage answers from the store meanwhile, and the read barrier would not.
    expect((await engine.usage(scope)).llmCalls).toEqual({ used: 0, limit: 5 });
    release();
    await engine.flush(scope);
    expect((await engine.usage(scope)).llmCalls).toEqual({ used: 1, limit: 5 });
    await engine.close();
  });
});
