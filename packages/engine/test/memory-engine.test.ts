/**
 * The `MemoryEngine` facade and `MemoryAdmin`, on the real in-process store: the read barrier, acceptance with a
 * transcript, strict mode, the lifecycle through the one planner, and the relevance floor. The conformance suite
 * runs the pipeline on every store; these pin the facade's own behaviour in the engine's package.
 */
import { inspect } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EngineConfigInput, MAX_QUERY_CHARS } from '../src/config.js';
import { MemoryEngine } from '../src/engine.js';
import {
  CapabilityError,
  ClosedError,
  DuplicateActiveBeliefError,
  InvalidInputError,
  InvalidRecordError,
  StoreError,
} from '../src/errors.js';
import { MemoryAdmin } from '../src/memory-admin.js';
import type { Embedder, EngineStore, FullStore } from '../src/ports.js';
import { KeyValueExtractor, scriptedExtractor, WordHashEmbedder } from '../src/testing/index.js';
import { normalizeVector } from '../src/util.js';

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

describe('importRecords', () => {
  /** What `list`/`history` and `getEmbeddings` read from a source store: the records an export carries. */
  async function exported(admin: MemoryAdmin, store: FullStore, s: { userId: string; namespace?: string }) {
    const beliefs = await admin.history(s);
    const vectors = await store.getEmbeddings(
      s,
      beliefs.map((b) => b.id),
    );
    return beliefs.map((belief) => ({ belief, embedding: vectors.get(belief.id) ?? null }));
  }

  async function source() {
    const store = createMemoryStore();
    const admin = new MemoryAdmin({ store, embedder: new WordHashEmbedder(16) });
    const city = await admin.remember(scope, { kind: 'fact', attribute: 'home_city', value: 'Oslo' });
    await admin.correct(scope, city.id, 'Bergen');
    const pet = await admin.remember(scope, { kind: 'fact', attribute: 'pet', value: 'cat' });
    await admin.forget(scope, pet.id);
    await admin.remember({ ...scope, namespace: 'work' }, { kind: 'fact', attribute: 'desk', value: 'blue' });
    return { store, admin };
  }

  it('restores another store’s records verbatim, embeddings included; a repeated import is a no-op', async () => {
    const src = await source();
    const records = await exported(src.admin, src.store, scope);
    expect(records.map((r) => r.belief.status).sort()).toEqual(['active', 'forgotten', 'superseded']);
    const store = createMemoryStore();
    const admin = new MemoryAdmin({ store, embedder: new WordHashEmbedder(16) });
    expect(await admin.importRecords(scope, records)).toEqual({ inserted: 3, skipped: 0 });
    expect(await admin.history(scope)).toEqual(await src.admin.history(scope));
    expect((await admin.recall(scope, 'home city')).map((h) => h.belief.value)).toEqual(['Bergen']);
    const ids = records.map((r) => r.belief.id);
    expect([...(await store.getEmbeddings(scope, ids)).keys()].sort()).toEqual(
      [...(await src.store.getEmbeddings(scope, ids)).keys()].sort(),
    );
    expect(await admin.importRecords(scope, records)).toEqual({ inserted: 0, skipped: 3 });
    // A whole user's records, every namespace: with anyNamespace only.
    const work = await exported(src.admin, src.store, { ...scope, namespace: 'work' });
    await expect(admin.importRecords(scope, [...records, ...work])).rejects.toBeInstanceOf(
      InvalidRecordError,
    );
    expect(await admin.importRecords(scope, [...records, ...work], { anyNamespace: true })).toEqual({
      inserted: 1,
      skipped: 3,
    });
    expect((await admin.list({ ...scope, namespace: 'work' })).items.map((b) => b.value)).toEqual(['blue']);
  });

  it('a bad record is an InvalidRecordError naming its index and field, and nothing is written', async () => {
    const src = await source();
    const records = await exported(src.admin, src.store, scope);
    const [first, second, third] = records as [(typeof records)[0], (typeof records)[0], (typeof records)[0]];
    const cases: [unknown[], number, string, RegExp][] = [
      [
        [first, { ...second, belief: { ...second.belief, status: 'zombie' } }, third],
        1,
        'belief.status',
        /zombie/,
      ],
      [
        [first, second, { ...third, belief: { ...third.belief, colour: 'red' } }],
        2,
        'belief.colour',
        /known field/,
      ],
      [
        [{ ...first, belief: { ...first.belief, scope: { userId: 'u2' } } }],
        0,
        'belief.scope.userId',
        /"u2"/,
      ],
      [[first, second, first], 2, 'belief.id', /repeats the id of record 0/],
      [[first, { ...second, embedding: new Float32Array([Number.NaN]) }], 1, 'embedding', /finite/],
      [
        [first, { ...second, belief: { ...second.belief, evidence: [{ sessionId: 's', quote: 'q' }] } }],
        1,
        'belief.evidence[0].position',
        /integer/,
      ],
    ];
    const active = records.find((r) => r.belief.status === 'active');
    if (!active) throw new Error('no active record');
    cases.push([
      [active, { ...active, belief: { ...active.belief, id: `${active.belief.id}x` } }],
      1,
      'belief',
      /same subject/,
    ]);
    const store = createMemoryStore();
    const admin = new MemoryAdmin({ store, embedder: new WordHashEmbedder(16) });
    for (const [batch, index, field, reason] of cases) {
      const err = await admin.importRecords(scope, batch as never).catch((e: unknown) => e);
      expect(err, field).toBeInstanceOf(InvalidRecordError);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toMatchObject({
        code: 'invalid_input',
        index,
        recordField: field,
        field: `records[${index}].${field}`,
      });
      expect((err as InvalidRecordError).reason).toMatch(reason);
    }
    expect(await admin.history(scope)).toEqual([]);
    // What only the store can tell fails whole too: an active record on the key of a stored active belief.
    await admin.remember(scope, { kind: 'fact', attribute: 'home_city', value: 'Rome' });
    await expect(admin.importRecords(scope, records)).rejects.toBeInstanceOf(DuplicateActiveBeliefError);
    expect((await admin.history(scope)).map((b) => b.value)).toEqual(['Rome']);
  });
});

describe('eraseScope', () => {
  it('waits for the user’s accepted turns, then deletes every record of the scope; transcripts and other namespaces stay', async () => {
    const store = createMemoryStore();
    const { engine, extractor } = engineOn(store);
    const work = { userId: scope.userId, namespace: 'work' };
    const items = [
      { role: 'user', content: 'home_city=Lisbon' },
      { role: 'assistant', content: 'ok' },
    ];
    await engine.appendTranscript(scope, 'conv', items, {
      turns: [{ index: 0, role: 'user', text: 'home_city=Lisbon', at: AT }],
    });
    await engine.accept([{ ...turn(1, 'pet=cat'), scope: work }]);
    await engine.flush(scope);
    await engine.accept([turn(2, 'home_city=Porto')]);
    // Not flushed: the erase itself waits for the Porto turn, so its fact and episode are erased, not written after.
    const receipt = await engine.eraseScope(scope);
    expect(extractor.calls).toBe(3);
    expect(receipt).toMatchObject({
      beliefs: 4,
      outboxEntries: 2,
      transcriptItems: 0,
      operations: 0,
      grants: 0,
    });
    expect(receipt.auditEvents).toBeGreaterThan(0);
    await engine.flush(scope);
    expect(await engine.history(scope)).toEqual([]);
    expect(await engine.recall(scope, 'home city')).toEqual([]);
    expect(await store.getItems(scope, 'conv')).toEqual(items);
    expect((await engine.recall(work, 'pet')).map((h) => h.belief.value)).toContain('cat');
    await expect(engine.eraseScope({ userId: '' })).rejects.toBeInstanceOf(InvalidInputError);
    await engine.close();
    await expect(engine.eraseScope(work)).rejects.toBeInstanceOf(ClosedError);
  });

  it('fails with CapabilityError on a store without eraseScope', async () => {
    const store = createMemoryStore();
    const older = new Proxy(store, {
      get: (target, prop) => (prop === 'eraseScope' ? undefined : Reflect.get(target, prop, target)),
    });
    const admin = new MemoryAdmin({ store: older, embedder: new WordHashEmbedder(16) });
    await expect(admin.eraseScope(scope)).rejects.toBeInstanceOf(CapabilityError);
    await admin.close();
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

describe('the search contract: scores in 0..1, minScore, tiers', () => {
  const conversation = [
    turn(0, 'favourite_book=Sapiens'),
    turn(1, 'Which book did you read last summer?'),
    turn(2, 'Sapiens, the book about the history of humankind'),
    turn(3, 'my sister lent me another book'),
    turn(4, 'car=blue'),
  ];

  it('scores lie in 0..1 in the order of the fused totals, which explain keeps with their scale', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept(conversation);
    const hits = await engine.recall(scope, 'which book, Sapiens?', { explain: true });
    expect(hits.length).toBeGreaterThan(2);
    // The raw totals go over 1 here (session coverage and conversational context add up): the scaled scores do not.
    expect(hits.some((h) => h.signals!.total > 1)).toBe(true);
    for (const h of hits) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThanOrEqual(1);
      expect(h.score).toBeCloseTo(h.signals!.total / h.signals!.maxTotal, 12);
    }
    const totals = hits.map((h) => h.signals!.total);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));
    // Without explain: the same results, scores and tiers, no signals.
    const plain = await engine.recall(scope, 'which book, Sapiens?');
    expect(plain).toEqual(hits.map(({ belief, score, tier }) => ({ belief, score, tier })));
    // A profile (empty query) ranks by recency and confidence, which the lexical-fuzzy embedder's weights leave at 0.
    const profile = await engine.recall(scope, '', { explain: true });
    expect(profile.length).toBeGreaterThan(0);
    for (const h of profile) expect([h.score, h.signals!.maxTotal]).toEqual([0, 0]);
    const semantic = engineOn(createMemoryStore(), {
      config: { ranking: { weights: { lexical: 0.5, vector: 0.3, recency: 0.1, confidence: 0.1 } } },
    }).engine;
    await semantic.accept(conversation);
    for (const h of await semantic.recall(scope, '', { explain: true })) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThanOrEqual(1);
      expect(h.score).toBeCloseTo(h.signals!.total / h.signals!.maxTotal, 12);
    }
    await semantic.close();
    await engine.close();
  });

  it('each result says its tier: the extracted fact is a belief, a kept turn an episode', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept(conversation);
    const hits = await engine.recall(scope, 'Sapiens book', { limit: 20 });
    const tierOf = new Map(hits.map((h) => [h.belief.value, h.tier]));
    expect(tierOf.get('Sapiens')).toBe('belief');
    expect(tierOf.get('Sapiens, the book about the history of humankind')).toBe('episode');
    for (const h of hits) expect(h.tier).toBe(h.belief.kind === 'episode' ? 'episode' : 'belief');
    await engine.close();
  });

  it('minScore keeps the results scoring at least it, in the same order, in recall and in the block', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept(conversation);
    const query = 'which book, Sapiens?';
    const all = await engine.recall(scope, query);
    const scores = all.map((h) => h.score);
    const cut = ((scores[0] ?? 0) + (scores[scores.length - 1] ?? 0)) / 2;
    const kept = all.filter((h) => h.score >= cut);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(all.length);
    expect(await engine.recall(scope, query, { minScore: cut })).toEqual(kept);
    const ctx = await engine.context(scope, query, { minScore: cut });
    expect(ctx.recalled).toEqual(kept);
    const dropped = all.filter((h) => h.score < cut).map((h) => h.belief.id);
    for (const b of ctx.beliefs) expect(dropped).not.toContain(b.id);
    // 0 keeps everything; above the best score, nothing is recalled and the block says so.
    expect(await engine.recall(scope, query, { minScore: 0 })).toEqual(all);
    const none = await engine.context(scope, query, { minScore: Math.min(1, (scores[0] ?? 0) + 0.01) });
    expect(none.recalled).toEqual([]);
    expect(none.beliefs).toEqual([]);
    await engine.close();
  });

  it('a minScore outside 0..1 is a clear InvalidInputError, before any waiting', async () => {
    const { engine, extractor } = engineOn(createMemoryStore());
    await engine.accept([turn(0, 'pet=cat')]);
    for (const minScore of [-0.1, 1.5, Number.NaN, '0.5' as unknown as number]) {
      const err = await engine.recall(scope, 'pet', { minScore }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/minScore/) });
    }
    // Refused before the read barrier: the accepted turn has not been extracted by those calls.
    expect(extractor.calls).toBe(0);
    await expect(engine.context(scope, 'pet', { minScore: 2 })).rejects.toBeInstanceOf(InvalidInputError);
    await engine.close();
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

describe('a question asked again', () => {
  // A user's earlier "Where do I live?" is kept as an episode of its own. Asked again, it matches itself best: it must
  // not take the place of the turn that answers it.
  const said = (sessionId: string, position: number, text: string) => ({
    ...turn(position, text),
    sessionId,
  });

  it('recalls the answer, not the earlier asking of the same question', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { episodic: true } });
    await engine.accept([
      said('s1', 0, 'I live in Denver, near the old rail yards.'),
      said('s2', 0, 'Where do I live?'),
      said('s3', 0, 'Where do I live now? Remind me.'),
      said('s4', 0, 'Which dentist should I book, one close to where I live?'),
    ]);
    const hits = await engine.recall(scope, 'Where do I live?');
    const values = hits.map((h) => h.belief.value);
    expect(values).toContain('I live in Denver, near the old rail yards.');
    expect(values).not.toContain('Where do I live?');
    expect(values).not.toContain('Where do I live now? Remind me.');
    // A question that asks more than the query is not the query again: it stays recallable.
    expect(values).toContain('Which dentist should I book, one close to where I live?');
    const block = await engine.context(scope, 'Where do I live?', { blockBytes: 800 });
    expect(block.text).toContain('Denver');
    // `budgetBytes`, the deprecated name of `blockBytes`, sizes the block the same way.
    const small = await engine.context(scope, 'Where do I live?', { blockBytes: 200 });
    expect(small.bytes).toBeLessThanOrEqual(200);
    expect(await engine.context(scope, 'Where do I live?', { budgetBytes: 200 })).toEqual(small);
    await expect(
      engine.context(scope, 'Where do I live?', { blockBytes: 200, budgetBytes: 300 }),
    ).rejects.toThrow(InvalidInputError);
    expect(block.text).not.toContain('Where do I live?');
    // The earlier question stays in memory and is recalled for what it holds that the query does not.
    expect((await engine.recall(scope, 'dentist')).map((h) => h.belief.value)).toContain(
      'Which dentist should I book, one close to where I live?',
    );
    await engine.close();
  });
});

describe('a request said again', () => {
  it('is not recalled for itself, nor what was drawn from it alone; what the user said elsewhere is', async () => {
    // An extractor that draws "plans a trip to Denver" from any turn saying so, as a model would.
    const extractor = scriptedExtractor((request) => ({
      operations: request.turns
        .filter((t) => t.role === 'user' && /trip to Denver/i.test(t.text))
        .map((t) => ({
          op: 'add',
          kind: 'goal',
          subject: 'user',
          attribute: 'trip',
          value: 'Denver',
          statement: 'The user is planning a trip to Denver.',
          confidence: 0.9,
          evidence: [{ turnId: t.id, quote: 'trip to Denver' }],
        })),
    }));
    const engine = new MemoryEngine({
      store: createMemoryStore(),
      extractor,
      embedder: new WordHashEmbedder(16),
      config: { episodic: true },
    });
    const request = "I'm planning a trip to Denver soon. Any suggestions on what to do there?";
    await engine.accept([
      { ...turn(0, 'I love hiking, and I never miss a craft brewery when I travel.'), sessionId: 'old' },
      { ...turn(0, request), sessionId: 'asked-before' },
    ]);
    const values = (await engine.recall(scope, request)).map((h) => h.belief.value);
    expect(values).not.toContain(request);
    expect(values).not.toContain('Denver');
    // Said in a turn that is not the request again, the plan is recalled.
    await engine.accept([
      { ...turn(0, 'My sister and I booked our trip to Denver for May.'), sessionId: 'later' },
    ]);
    const after = await engine.recall(scope, request);
    expect(after.map((h) => h.belief.value)).toContain('Denver');
    expect(after.map((h) => h.belief.value)).not.toContain(request);
    await engine.close();
  });
});

/**
 * A semantic embedder for tests: each word stands for a meaning (the synonyms below share one), and a text is its bag
 * of meanings, one dimension each, L2-normalised. "home city" and "residence town" mean the same to it.
 */
class MeaningEmbedder implements Embedder {
  readonly model = 'meaning-test';
  readonly dimensions = 128;
  readonly minSimilarity = 0.3;
  readonly kind = 'semantic' as const;
  /** Every text embedded, in order. */
  readonly texts: string[] = [];
  private readonly axes = new Map<string, number>();
  private static readonly SYNONYMS: Record<string, string> = { residence: 'home', town: 'city' };

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return texts.map((text) => {
      const v = new Float32Array(this.dimensions);
      for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
        const meaning = MeaningEmbedder.SYNONYMS[word] ?? word;
        let axis = this.axes.get(meaning);
        if (axis === undefined) {
          axis = this.axes.size % this.dimensions;
          this.axes.set(meaning, axis);
        }
        v[axis]! += 1;
      }
      return normalizeVector(v);
    });
  }
}

describe('near repeats (config.duplicateSimilarity, 0.9 by default)', () => {
  /** `kind:key=value` (kind `fact` when left out) adds `user.key = value`, stated as "The user's key is value.". */
  const claims = () =>
    scriptedExtractor((request) => ({
      operations: request.turns.flatMap((t) =>
        t.text.split(';').flatMap((raw) => {
          const part = raw.trim();
          const m = /^(?:(\w+):)?(\w+)=(.+)$/.exec(part);
          if (!m) return [];
          const [, kind = 'fact', key = '', value = ''] = m;
          return [
            {
              op: 'add',
              kind,
              subject: 'user',
              attribute: key,
              value,
              statement: `The user's ${key.replace(/_/g, ' ')} is ${value}.`,
              confidence: 0.7,
              evidence: [{ turnId: t.id, quote: part }],
            },
          ];
        }),
      ),
    }));
  const facts = async (engine: MemoryAdmin) =>
    (await engine.history(scope))
      .filter((b) => b.kind !== 'episode')
      .map(
        (b) =>
          `${b.status} ${b.kind} ${b.attribute}=${b.value} @${b.evidence.map((e) => e.position).join(',')}`,
      );
  const open = (config: EngineConfigInput = {}, embedder: Embedder = new MeaningEmbedder()) =>
    new MemoryEngine({ store: createMemoryStore(), extractor: claims(), embedder, config });

  it('a claim extracted on another key that says the same confirms the active belief: one belief, both turns', async () => {
    const engine = open();
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    await engine.accept([turn(1, 'residence_town=Lisbon'), turn(2, 'town_of_birth=Porto')]);
    expect(await facts(engine)).toEqual([
      'active fact home_city=Lisbon @0,1',
      'active fact town_of_birth=Porto @2',
    ]);
    const [lisbon] = (await engine.list(scope)).items.filter((b) => b.attribute === 'home_city');
    // Confirmed as an exact repeat is: confidence raised by the second observation.
    expect(lisbon?.confidence).toBeCloseTo(1 - 0.3 * 0.3);
    // Each turn is still kept as said.
    expect((await engine.list(scope)).items.filter((b) => b.kind === 'episode')).toHaveLength(3);
    await engine.close();
  });

  it('two claims of one turn that say the same are one belief', async () => {
    const engine = open();
    await engine.accept([turn(0, 'home_city=Lisbon; residence_town=Lisbon')]);
    expect(await facts(engine)).toEqual(['active fact home_city=Lisbon @0']);
    await engine.close();
  });

  it('applies at or above the threshold only, to beliefs of the same kind, and not when set to null', async () => {
    // "The user's residence town is Lisbon Portugal." is 7/√56 ≈ 0.935 from "The user's home city is Lisbon.".
    const said = [turn(0, 'home_city=Lisbon'), turn(1, 'residence_town=Lisbon Portugal')];
    const at90 = open();
    await at90.accept(said);
    expect(await facts(at90)).toEqual(['active fact home_city=Lisbon @0,1']);
    const at95 = open({ duplicateSimilarity: 0.95 });
    await at95.accept(said);
    expect(await facts(at95)).toEqual([
      'active fact home_city=Lisbon @0',
      'active fact residence_town=Lisbon Portugal @1',
    ]);
    const off = open({ duplicateSimilarity: null });
    await off.accept([turn(0, 'home_city=Lisbon'), turn(1, 'residence_town=Lisbon')]);
    expect(await facts(off)).toHaveLength(2);
    const otherKind = open();
    await otherKind.accept([turn(0, 'home_city=Lisbon'), turn(1, 'preference:residence_town=Lisbon')]);
    expect(await facts(otherKind)).toEqual([
      'active fact home_city=Lisbon @0',
      'active preference residence_town=Lisbon @1',
    ]);
    await Promise.all([at90.close(), at95.close(), off.close(), otherKind.close()]);
  });

  it('does not apply with a lexical embedder: its similarity is shared words, not meaning', async () => {
    // To the word-hashing embedder these two statements share 7 of 8 words (about 0.93).
    const engine = open({}, new WordHashEmbedder(512));
    await engine.accept([turn(0, 'home_city=Lisbon'), turn(1, 'home_city_now=Lisbon')]);
    expect(await facts(engine)).toEqual([
      'active fact home_city=Lisbon @0',
      'active fact home_city_now=Lisbon @1',
    ]);
    await engine.close();
  });

  it('applies to remember’s free text, not to a structured remember, whose key the host names', async () => {
    const engine = open();
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    const free = await engine.remember(scope, 'residence_town=Lisbon');
    expect(free.beliefs.map((b) => `${b.attribute}=${b.value}`)).toEqual(['home_city=Lisbon']);
    const structured = await engine.remember(scope, {
      kind: 'fact',
      attribute: 'residence_town',
      value: 'Lisbon',
      statement: "The user's residence town is Lisbon.",
    });
    expect(structured.attribute).toBe('residence_town');
    expect(await facts(engine)).toEqual([
      'active fact home_city=Lisbon @0',
      'active fact residence_town=Lisbon @',
    ]);
    await engine.close();
  });

  it('embeds each new statement once: the vector that found no repeat is the one stored', async () => {
    const embedder = new MeaningEmbedder();
    const engine = open({}, embedder);
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    await engine.flush(scope);
    expect(embedder.texts.filter((t) => t === "The user's home city is Lisbon.")).toHaveLength(1);
    expect((await engine.recall(scope, 'residence town')).map((h) => h.belief.value)).toContain('Lisbon');
    await engine.close();
  });
});

describe('working memory (recall option workingMemory)', () => {
  const said = (sessionId: string, position: number, text: string) => ({
    ...turn(position, text),
    sessionId,
  });
  const recalled = async (engine: MemoryAdmin, query: string, options = {}) =>
    (await engine.recall(scope, query, options)).map(
      (h) =>
        `${h.belief.kind}:${h.belief.value}@${h.belief.evidence.map((e) => `${e.sessionId}:${e.position}`)}`,
    );

  it('leaves out what the conversation says from fromPosition on; older turns and other conversations stay', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([
      said('older', 0, 'home_city=Lisbon'),
      said('now', 0, 'pet=cat'),
      said('now', 2, 'car=Volvo'),
      said('now', 4, 'home_city=Lisbon'),
    ]);
    const workingMemory = { sessionId: 'now', fromPosition: 2 };
    expect((await recalled(engine, 'car', { workingMemory })).length).toBe(0);
    // (An episode and the belief drawn from its turn are collapsed into the belief.)
    expect(await recalled(engine, 'car')).toEqual(['fact:Volvo@now:2']);
    // Said before the window: recalled.
    expect(await recalled(engine, 'pet', { workingMemory })).toEqual(['fact:cat@now:0']);
    // Said in the window and in another conversation: the belief stays; the window's episode does not.
    expect(await recalled(engine, 'home city', { workingMemory })).toEqual(['fact:Lisbon@older:0,now:4']);
    expect(await recalled(engine, 'home city', { kinds: ['episode'], workingMemory })).toEqual([
      'episode:home_city=Lisbon@older:0',
    ]);
    expect(await recalled(engine, 'home city', { kinds: ['episode'] })).toHaveLength(2);
    // From position 0: nothing of the conversation.
    expect(await recalled(engine, 'pet', { workingMemory: { sessionId: 'now', fromPosition: 0 } })).toEqual(
      [],
    );
    // The block follows recall.
    const block = await engine.context(scope, 'car', { workingMemory });
    expect(block.recalled).toEqual([]);
    expect(block.text).not.toContain('Volvo');
    await engine.close();
  });

  it('the window is ranked, then left out: the other results keep their scores, and the floor counts its words', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([
      said('now', 0, 'car=Volvo'),
      said('now', 2, 'pet=heron'),
      said('now', 4, 'bike=Brompton'),
    ]);
    const query = 'which car, pet and bike do I have?';
    const all = await engine.recall(scope, query);
    const left = await engine.recall(scope, query, { workingMemory: { sessionId: 'now', fromPosition: 2 } });
    // "pet" and "bike" are answered by the turns the model sees: the query is not taken for one memory knows little of.
    expect(left.map((h) => h.belief.value)).toEqual(['Volvo']);
    expect(left[0]?.score).toBe(all.find((h) => h.belief.value === 'Volvo')?.score);
    await engine.close();
  });

  it('keeps a belief without evidence (remembered by hand), and a profile leaves the window out too', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { episodic: false } });
    await engine.accept([said('now', 0, 'car=Volvo')]);
    await engine.remember(scope, { kind: 'fact', attribute: 'car_colour', value: 'red' });
    const workingMemory = { sessionId: 'now', fromPosition: 0 };
    expect(await recalled(engine, 'car', { workingMemory })).toEqual(['fact:red@']);
    expect(await recalled(engine, '', { workingMemory })).toEqual(['fact:red@']);
    expect((await recalled(engine, '')).sort()).toEqual(['fact:Volvo@now:0', 'fact:red@']);
    await engine.close();
  });

  it('a malformed window is an InvalidInputError naming the field, before any waiting', async () => {
    const { engine } = engineOn(createMemoryStore());
    for (const [workingMemory, field] of [
      [null, 'workingMemory'],
      [{ sessionId: '', fromPosition: 0 }, 'workingMemory.sessionId'],
      [{ sessionId: 'now', fromPosition: -1 }, 'workingMemory.fromPosition'],
      [{ sessionId: 'now', fromPosition: 1.5 }, 'workingMemory.fromPosition'],
    ] as const) {
      const err = await engine
        .recall(scope, 'car', { workingMemory: workingMemory as never })
        .catch((e) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).field).toBe(field);
    }
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

describe('get', () => {
  it('returns a belief in any status but forgotten; a forgotten one is gone for its reader, its tombstone in history', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([turn(0, 'home_city=Lisbon'), turn(1, 'pet=cat')]);
    const [city] = (await engine.recall(scope, 'home city')).map((h) => h.belief);
    const [pet] = (await engine.recall(scope, 'pet')).map((h) => h.belief);
    if (!city || !pet) throw new Error('fixture');
    const corrected = await engine.correct(scope, city.id, 'Porto');
    expect((await engine.get(scope, city.id))?.status).toBe('superseded');
    expect((await engine.get(scope, corrected.id))?.value).toBe('Porto');
    await engine.forget(scope, pet.id);
    expect(await engine.get(scope, pet.id)).toBeNull();
    expect((await engine.history(scope)).find((b) => b.id === pet.id)?.status).toBe('forgotten');
    expect(await engine.get({ userId: 'someone-else' }, corrected.id)).toBeNull();
    await engine.close();
  });
});

describe('accept and settle', () => {
  it('accept names the turns it took; settle waits for them and returns the beliefs they committed', async () => {
    const store = createMemoryStore();
    const { engine } = engineOn(store);
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    const accepted = await engine.accept([turn(1, 'favorite_color=teal; pet=cat')]);
    expect(accepted).toEqual({ accepted: 1, duplicates: 0, turns: [{ sessionId: 's1', position: 1 }] });
    const settled = await engine.settle(scope, accepted.turns);
    expect(settled.pending).toBe(0);
    const committed = await Promise.all(settled.committed.map((id) => engine.get(scope, id)));
    // The beliefs drawn from the turn, and the turn itself kept as an episode; nothing from turn 0.
    expect(
      committed
        .filter((b) => b?.kind !== 'episode')
        .map((b) => b?.value)
        .sort(),
    ).toEqual(['cat', 'teal']);
    expect(committed.filter((b) => b?.kind === 'episode').map((b) => b?.evidence[0]?.position)).toEqual([1]);

    // The same turn again is a repeat: skipped, named as before, and settle reports what it committed.
    const retry = await engine.accept([turn(1, 'favorite_color=teal; pet=cat')]);
    expect(retry).toEqual({ accepted: 0, duplicates: 1, turns: [{ sessionId: 's1', position: 1 }] });
    expect((await engine.settle(scope, retry.turns)).committed.toSorted()).toEqual(
      [...settled.committed].sort(),
    );

    // Another engine on the store (another process) finds them by their evidence.
    const other = engineOn(store).engine;
    expect((await other.settle(scope, accepted.turns)).committed.toSorted()).toEqual(
      [...settled.committed].sort(),
    );
    // Not through another user's scope.
    expect((await other.settle({ userId: 'u2' }, accepted.turns)).committed).toEqual([]);
    await other.close();
    await engine.close();
  });

  it('settle reports a confirmed belief, and leaves out one a later turn superseded', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    const beliefsOf = async (turns: readonly { sessionId: string; position: number }[]) => {
      const { committed } = await engine.settle(scope, turns);
      const beliefs = await Promise.all(committed.map((id) => engine.get(scope, id)));
      return beliefs.filter((b) => b !== null && b.kind !== 'episode').map((b) => b?.id);
    };
    const first = await beliefsOf([{ sessionId: 's1', position: 0 }]);
    expect(first).toHaveLength(1);
    const again = await engine.accept([turn(1, 'home_city=Lisbon')]);
    expect(await beliefsOf(again.turns)).toEqual(first);
    await engine.accept([turn(2, 'home_city=Porto')]);
    expect(await beliefsOf(again.turns)).toEqual([]);
    await engine.close();
  });

  it('refuses bad turns with a typed error', async () => {
    const { engine } = engineOn(createMemoryStore());
    await expect(engine.settle(scope, [{ sessionId: '', position: 0 }])).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(engine.settle(scope, [{ sessionId: 's1', position: -1 }])).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(engine.settle(scope, 'nope' as never)).rejects.toBeInstanceOf(InvalidInputError);
    await engine.close();
  });
});

describe('long queries', () => {
  it('recall and context cut a query past MAX_QUERY_CHARS themselves: the same result as the clipped form', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([turn(0, 'home_city=Lisbon')]);
    const long = `home city ${'and then some more words '.repeat(1000)}`;
    expect(long.length).toBeGreaterThan(MAX_QUERY_CHARS * 5);
    // Cut at the last word boundary within the limit.
    const clipped = long.slice(0, long.lastIndexOf(' ', MAX_QUERY_CHARS)).trimEnd();
    const hits = await engine.recall(scope, long);
    expect(hits.map((h) => h.belief.value)).toEqual(['Lisbon']);
    expect(hits).toEqual(await engine.recall(scope, clipped));
    expect((await engine.context(scope, long)).text).toBe((await engine.context(scope, clipped)).text);
    // One unbroken word longer than the limit, in four-byte characters, does not throw either.
    await expect(engine.recall(scope, '😀'.repeat(MAX_QUERY_CHARS * 2))).resolves.toBeInstanceOf(Array);
    await engine.close();
  });
});

describe('accept with skipRepeats', () => {
  it('skips a user turn repeating its conversation’s previous one at another position, naming the earlier turn', async () => {
    const { engine, extractor } = engineOn(createMemoryStore());
    const at = (minutes: number) => new Date(Date.parse(AT) + minutes * 60_000).toISOString();
    const say = (position: number, text: string, minutes = 0) =>
      engine.accept([{ ...turn(position, text), at: at(minutes) }], { skipRepeats: true });
    expect(await say(10, 'home_city=Lisbon')).toMatchObject({ accepted: 1, duplicates: 0 });
    // A retry under a new position: skipped, and named as the turn it repeats.
    expect(await say(11, 'home_city=Lisbon', 1)).toEqual({
      accepted: 0,
      duplicates: 1,
      turns: [{ sessionId: 's1', position: 10 }],
    });
    // Said again after something else, or long after: accepted.
    expect(await say(12, 'home_city=Porto', 2)).toMatchObject({ accepted: 1 });
    expect(await say(13, 'home_city=Lisbon', 3)).toMatchObject({ accepted: 1 });
    expect(await say(14, 'home_city=Lisbon', 20)).toMatchObject({ accepted: 1 });
    // Concurrent repeats are accepted once.
    const both = await Promise.all([say(15, 'pet=cat', 21), say(16, 'pet=cat', 21)]);
    expect(both.map((r) => r.accepted).sort()).toEqual([0, 1]);
    // Without the option, nothing changes: a repeat at a new position is a new turn.
    expect((await engine.accept([{ ...turn(17, 'pet=cat'), at: at(21) }])).accepted).toBe(1);
    expect((await engine.recall(scope, 'home city')).map((h) => h.belief.value)).toEqual(['Lisbon']);
    expect(extractor.calls).toBeGreaterThan(0);
    await engine.close();
  });

  it('a repeat of a turn whose acceptance failed is accepted on retry', async () => {
    const store = createMemoryStore();
    let failNext = true;
    const flaky = new Proxy(store, {
      get(target, prop) {
        if (prop === 'enqueue' && failNext) {
          return async () => {
            failNext = false;
            throw new Error('disk full');
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { engine } = engineOn(flaky);
    await expect(engine.accept([turn(0, 'pet=dog')], { skipRepeats: true })).rejects.toThrow();
    expect(await engine.accept([turn(1, 'pet=dog')], { skipRepeats: true })).toMatchObject({ accepted: 1 });
    await engine.close();
  });
});

describe('what the assistant answered', () => {
  it('a question about what the assistant said recalls its answer to the turn it names, in other words', async () => {
    const { engine } = engineOn(createMemoryStore(), { config: { replies: true } });
    const said = (position: number, role: 'user' | 'assistant', text: string) => ({
      ...turn(position, text),
      role,
    });
    await engine.accept([
      said(0, 'user', 'Recommend a dessert for tonight.'),
      said(1, 'assistant', 'Try the mango sticky rice from the Thai place on Valencia.'),
      said(2, 'user', 'And a film for the weekend?'),
      said(3, 'assistant', 'Watch Spirited Away; it is gentle and beautiful.'),
    ]);
    const hits = await engine.recall(scope, 'What dessert did you recommend last time?');
    const texts = hits.map((h) => h.belief.value);
    expect(texts.slice(0, 2)).toEqual([
      'Recommend a dessert for tonight.',
      'Try the mango sticky rice from the Thai place on Valencia.',
    ]);
    expect(hits[1]).toMatchObject({ tier: 'episode', belief: { kind: 'reply' } });
    // A question about the user never brings the assistant's words.
    const plain = await engine.recall(scope, 'dessert for tonight');
    expect(plain.map((h) => h.belief.kind)).not.toContain('reply');
    await engine.close();
  });
});

describe('conversation ids that differ only in case or punctuation', () => {
  it('keep their own episodes: the second conversation does not supersede the first one’s turn', async () => {
    const { engine } = engineOn(createMemoryStore());
    await engine.accept([{ ...turn(0, 'I love the mountains.'), sessionId: 'Trip-1' }]);
    await engine.accept([{ ...turn(0, 'I hate the beach.'), sessionId: 'trip_1' }]);
    const episodes = await engine.list(scope, { kinds: ['episode'], statuses: ['active', 'superseded'] });
    expect(episodes.items.map((b) => [b.status, b.statement]).sort()).toEqual([
      ['active', 'I hate the beach.'],
      ['active', 'I love the mountains.'],
    ]);
    // A session id too long for a key still keeps its turn.
    const long = 'x'.repeat(256);
    await engine.accept([{ ...turn(0, 'I collect vintage maps.'), sessionId: long }]);
    expect((await engine.list(scope, { kinds: ['episode'], sessionId: long })).items).toHaveLength(1);
    await engine.close();
  });
});
