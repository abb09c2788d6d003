/**
 * The engine's write pipeline and read barrier, run on the store under test: FIFO per user, exactly-once
 * extraction, races between engines, failure-open and strict modes, draining on close.
 */
import { inspect } from 'node:util';
import {
  BudgetExceededError,
  ClosedError,
  type EngineStore,
  ExtractionError,
  type Extractor,
  type FullStore,
  MemoryEngine,
  type MemoryEngineOptions,
  PendingWritesError,
  type Scope,
  StoreError,
  VersionConflictError,
} from '@mem01/engine';
import { FORGOTTEN_MARKER } from '@mem01/engine/store-kit';
import {
  CREDENTIAL_FORMS,
  KeyValueExtractor,
  leakedSecret,
  scriptedExtractor,
  WordHashEmbedder,
} from '@mem01/engine/testing';
import { failureCase, failureOf } from '@mem01/test-kit';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { FAR_FUTURE, storeAndUser, unique } from '../fixtures.js';
import { exitedProcess } from '../processes.js';

const DIMS = 16;
const AT = '2026-01-01T00:00:00.000Z';

/**
 * An engine on the store under test. Beliefs only unless a test asks for episodes (or replies): the pipeline's rules
 * are the same either way, and with episodes a recall may answer with the turn instead of the belief drawn from it.
 */
function engine(store: EngineStore, options: Partial<MemoryEngineOptions> = {}): MemoryEngine {
  return new MemoryEngine({
    store,
    extractor: options.extractor ?? new KeyValueExtractor(),
    embedder: options.embedder === undefined ? new WordHashEmbedder(DIMS) : options.embedder,
    ...options,
    config: { episodic: false, replies: false, ...options.config },
  });
}

function turnInput(
  scope: Scope,
  sessionId: string,
  position: number,
  text: string,
  role: 'user' | 'assistant' = 'user',
) {
  return { scope, sessionId, position, role, text, at: AT };
}

/** The store, except that its first `failures` claims fail as a busy or unreachable database does. */
function failingClaims(store: EngineStore, failures: number): EngineStore & { failuresLeft(): number } {
  let left = failures;
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'failuresLeft') return () => left;
      if (prop === 'claim') {
        return async (options: Parameters<EngineStore['claim']>[0]) => {
          if (left > 0) {
            left--;
            throw new StoreError(
              'database is locked (injected) at postgres://app:hunter2-secret@db.internal/app',
            );
          }
          return target.claim(options);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as EngineStore & { failuresLeft(): number };
}

/** The store, except that the named methods throw what `failure` makes (a driver error carrying a secret). */
function failingStore(store: EngineStore, methods: readonly string[], failure: () => Error): EngineStore {
  return new Proxy(store, {
    get(target, prop) {
      if (typeof prop === 'string' && methods.includes(prop)) {
        return async () => {
          throw failure();
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Everything a thrown value shows: util.inspect (which walks the cause chain), each message and stack. */
function shown(err: unknown): string {
  const parts = [inspect(err, { depth: 20 })];
  for (let e: unknown = err, i = 0; e instanceof Error && i < 10; e = e.cause, i++) {
    parts.push(e.message, String(e.stack));
  }
  return parts.join('\n');
}

/** Runs `fn` and fails if any promise rejection went unobserved meanwhile (as one would crash a Node process). */
async function noUnhandledRejections(fn: () => Promise<void>): Promise<void> {
  const unhandled: unknown[] = [];
  const hook = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', hook);
  try {
    await fn();
    // Let a stray rejection of the last step surface before judging.
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('unhandledRejection', hook);
  }
  expect(unhandled).toEqual([]);
}

/** Polls `check` (without touching the engine, so without its read barrier) until it holds or time runs out. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An extractor that signals when it starts and finishes only when `finish()` is called or its signal aborts. */
function gatedExtractor() {
  const inner = new KeyValueExtractor();
  let started!: () => void;
  let finish!: () => void;
  const startedP = new Promise<void>((r) => {
    started = r;
  });
  const gate = new Promise<void>((r) => {
    finish = r;
  });
  const aborted: unknown[] = [];
  const extractor: Extractor = {
    name: 'gated-test',
    async extract(request) {
      started();
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve);
        request.signal?.addEventListener('abort', () => {
          aborted.push(request.signal?.reason);
          reject(new ExtractionError('extraction aborted'));
        });
      });
      return inner.extract(request);
    },
  };
  return { extractor, inner, started: startedP, finish, aborted };
}

async function activeValues(store: FullStore, scope: Scope, attribute: string): Promise<string[]> {
  const page = await store.list(scope, { statuses: ['active'], limit: 1000 });
  return page.items.filter((b) => b.attribute === attribute).map((b) => b.value);
}

export function pipelineTests(ctx: SuiteContext): void {
  ctx.test('pipeline: accepted turns become recallable beliefs after the read barrier', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store);
    const scope = { userId: unique('pu-') };
    await e.accept([turnInput(scope, 's1', 0, 'home_city=NYC; rent=$2,400')]);
    // No explicit flush: recall waits for the user's accepted writes.
    const hits = await e.recall(scope, 'where is home city', { explain: true });
    expect(hits.map((h) => h.belief.value)).toContain('NYC');
    expect(hits[0]?.signals).toBeDefined();
    await e.accept([turnInput(scope, 's2', 0, 'home_city=SF')]);
    const values = (await e.recall(scope, 'home city')).map((h) => h.belief.value);
    expect(values).toContain('SF');
    expect(values).not.toContain('NYC');
    const chain = await e.history(scope, { id: (await e.recall(scope, 'home city'))[0]!.belief.id });
    expect(chain.map((b) => [b.value, b.status])).toEqual([
      ['NYC', 'superseded'],
      ['SF', 'active'],
    ]);
    await e.close();
  });

  ctx.test(
    'pipeline: recall scores lie in 0..1 in ranked order, each says its tier, minScore cuts the tail',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store, { config: { episodic: true } });
      const scope = { userId: unique('ps-') };
      await e.accept([
        turnInput(scope, 's1', 0, 'favourite_book=Sapiens'),
        turnInput(scope, 's1', 1, 'Which book did you read last summer?'),
        turnInput(scope, 's1', 2, 'Sapiens, the book about the history of humankind'),
        turnInput(scope, 's1', 3, 'car=blue'),
      ]);
      const query = 'which book, Sapiens?';
      // The store's lexical scale is its own (BM25, ts_rank, ...): the engine's scores are 0..1 on every store.
      const hits = await e.recall(scope, query, { explain: true, limit: 20 });
      expect(hits.length).toBeGreaterThan(1);
      const scores = hits.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const h of hits) {
        expect(h.score).toBeGreaterThan(0);
        expect(h.score).toBeLessThanOrEqual(1);
        expect(h.score).toBeCloseTo(h.signals!.total / h.signals!.maxTotal, 12);
        expect(h.tier).toBe(h.belief.kind === 'episode' ? 'episode' : 'belief');
      }
      const cut = scores[0]!;
      const kept = await e.recall(scope, query, { limit: 20, minScore: cut });
      expect(kept.map((h) => h.belief.id)).toEqual(
        hits.filter((h) => h.score >= cut).map((h) => h.belief.id),
      );
      expect(kept.length).toBeLessThan(hits.length);
      await e.close();
    },
  );

  ctx.test('pipeline: per-user FIFO and exactly-once extraction under random delays (property)', async () => {
    const store = await ctx.open(DIMS);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom('NYC', 'SF', 'LA', 'Oslo'), { minLength: 1, maxLength: 6 }), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.infiniteStream(fc.integer({ min: 0, max: 4 })),
        async (perUser, delays) => {
          const extractor = new KeyValueExtractor({ delayMs: () => delays.next().value });
          const e = engine(store, { extractor, config: { concurrency: 2 } });
          const scopes = perUser.map(() => ({ userId: unique('fifo-') }));
          // Interleave users; never wait for extraction between accepts.
          const accepted: Promise<unknown>[] = [];
          const longest = Math.max(...perUser.map((v) => v.length));
          for (let i = 0; i < longest; i++) {
            perUser.forEach((values, u) => {
              const v = values[i];
              if (v !== undefined) {
                accepted.push(
                  e.accept([turnInput(scopes[u]!, `${scopes[u]!.userId}-s${i}`, 0, `city=${v}`)]),
                );
              }
            });
          }
          await Promise.all(accepted);
          await e.flush();
          for (const [u, values] of perUser.entries()) {
            const scope = scopes[u]!;
            expect(await activeValues(store, scope, 'city')).toEqual([values.at(-1)]);
            // The lifecycle is the acceptance order with repeats collapsed into confirmations.
            const collapsed = values.filter((v, i) => i === 0 || v !== values[i - 1]);
            const history = (await store.history(scope)).filter((b) => b.attribute === 'city');
            expect(history.map((b) => b.value)).toEqual(collapsed);
          }
          expect(new Set(extractor.seen).size).toBe(extractor.seen.length);
          expect(extractor.seen.length).toBe(perUser.flat().length);
          await e.close();
        },
      ),
      { numRuns: 15 },
    );
  });

  ctx.test('pipeline: the read barrier sees every earlier accepted write (property)', async () => {
    const store = await ctx.open(DIMS);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('red', 'green', 'blue'), { minLength: 1, maxLength: 5 }),
        fc.infiniteStream(fc.integer({ min: 0, max: 3 })),
        async (values, delays) => {
          const e = engine(store, {
            extractor: new KeyValueExtractor({ delayMs: () => delays.next().value }),
          });
          const scope = { userId: unique('barrier-') };
          for (const [i, v] of values.entries()) {
            await e.accept([turnInput(scope, `${scope.userId}-s`, i, `colour=${v}`)]);
            const seen = (await e.recall(scope, 'colour')).map((h) => h.belief.value);
            expect(seen).toEqual([v]);
          }
          await e.close();
        },
      ),
      { numRuns: 10 },
    );
  });

  ctx.test('pipeline: a retried or duplicated batch converges (idempotency keys)', async () => {
    const store = await ctx.open(DIMS);
    const extractor = new KeyValueExtractor();
    const e = engine(store, { extractor });
    const scope = { userId: unique('dup-') };
    const batch = [turnInput(scope, 's1', 0, 'pet=dog'), turnInput(scope, 's1', 1, 'ok', 'assistant')];
    const results = await Promise.all([e.accept(batch), e.accept(batch), e.accept(batch)]);
    expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(2);
    await e.flush(scope);
    // The user turn was extracted once; an assistant turn alone is context and costs no extraction call.
    expect(extractor.seen).toHaveLength(1);
    expect(await activeValues(store, scope, 'pet')).toEqual(['dog']);
    expect((await store.backlog({ now: AT, userId: scope.userId })).queued).toBe(0);
    await e.close();
  });

  ctx.test(
    'pipeline: settle waits for the turns accept names and returns the beliefs they committed',
    async () => {
      const store = await ctx.open(DIMS);
      const other = (await ctx.second()) ?? store;
      const a = engine(store);
      const b = engine(other);
      const scope = { userId: unique('settle-') };
      await a.accept([turnInput(scope, 's1', 0, 'home_city=Lisbon')]);
      const accepted = await a.accept([turnInput(scope, 's1', 1, 'pet=dog; color=teal')]);
      expect(accepted.turns).toEqual([{ sessionId: 's1', position: 1 }]);
      const settled = await a.settle(scope, accepted.turns);
      expect(settled.pending).toBe(0);
      const values = async (ids: readonly string[]) =>
        (await Promise.all(ids.map((id) => store.get(scope, id)))).map((x) => x?.value).sort();
      expect(await values(settled.committed)).toEqual(['dog', 'teal']);
      // A retry is skipped and named as before; another engine (another process) finds what it committed.
      const retry = await b.accept([turnInput(scope, 's1', 1, 'pet=dog; color=teal')]);
      expect(retry).toMatchObject({ accepted: 0, duplicates: 1, turns: accepted.turns });
      expect(await values((await b.settle(scope, retry.turns)).committed)).toEqual(['dog', 'teal']);
      // Never another user's beliefs.
      expect((await b.settle({ userId: unique('settle-') }, accepted.turns)).committed).toEqual([]);
      await a.close();
      await b.close();
    },
  );

  ctx.test('pipeline: different users progress independently', async () => {
    const store = await ctx.open(DIMS);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slowUser = { userId: unique('slow-') };
    const extractor = new KeyValueExtractor();
    const gated = {
      name: 'gated',
      async extract(req: Parameters<KeyValueExtractor['extract']>[0]) {
        if (req.scope.userId === slowUser.userId) await gate;
        return extractor.extract(req);
      },
    };
    const e = engine(store, { extractor: gated, config: { concurrency: 2 } });
    const fast = { userId: unique('fast-') };
    await e.accept([turnInput(slowUser, 's', 0, 'a=1')]);
    await e.accept([turnInput(fast, 's', 0, 'b=2')]);
    await e.flush(fast);
    expect(await activeValues(store, fast, 'b')).toEqual(['2']);
    expect(await activeValues(store, slowUser, 'a')).toEqual([]);
    release();
    await e.flush(slowUser);
    expect(await activeValues(store, slowUser, 'a')).toEqual(['1']);
    await e.close();
  });

  ctx.test('pipeline: two engines racing on one key never leave two active beliefs', async () => {
    const store = await ctx.open(DIMS);
    const other = (await ctx.second()) ?? store;
    const a = engine(store, { embedder: null });
    const b = engine(other, { embedder: null });
    const scope = { userId: unique('race-') };
    const writes = Array.from({ length: 8 }, (_, i) =>
      (i % 2 ? a : b).remember(scope, { kind: 'fact', attribute: 'city', value: `c${i}` }),
    );
    await Promise.all(writes);
    expect(await activeValues(store, scope, 'city')).toHaveLength(1);
    const history = (await store.history(scope)).filter((x) => x.attribute === 'city');
    expect(history).toHaveLength(8);
    expect(history.filter((x) => x.status === 'superseded')).toHaveLength(7);
    await a.close();
    await b.close();
  });

  ctx.test(
    'pipeline: failure-open records a sanitized lastError, reads go on, the turn is retried',
    async () => {
      const store = await ctx.open(DIMS);
      let fail = true;
      const extractor = new KeyValueExtractor({
        failWhen: () =>
          fail ? new Error('provider down, key sk-test-abcdefghijklmnopqrstuvwxyz') : undefined,
      });
      const e = engine(store, { extractor });
      const scope = { userId: unique('open-') };
      await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
      await e.flush(scope);
      expect(e.lastError(scope)).toMatch(/provider down/);
      expect(e.lastError(scope)).not.toContain('sk-test-abcdefghijklmnopqrstuvwxyz');
      expect(await e.recall(scope, 'city')).toEqual([]);
      fail = false;
      await e.flush(scope);
      expect(e.lastError(scope)).toBeNull();
      expect(await activeValues(store, scope, 'city')).toEqual(['Rome']);
      await e.close();
    },
  );

  ctx.test(
    'pipeline: a store whose claims fail never crashes the process; reads go on, retries back off, it recovers',
    async () => {
      await noUnhandledRejections(async () => {
        const store = await ctx.open(DIMS);
        const faulty = failingClaims(store, 3);
        const e = engine(faulty);
        const scope = { userId: unique('claimfail-') };
        await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
        // The claim fails in the background; failure-open reads go on and say why.
        await expect(e.recall(scope, 'city')).resolves.toEqual([]);
        expect(e.lastError(scope)).toMatch(/database is locked/);
        expect(e.lastError(scope)).not.toContain('hunter2');
        // A user's later operation is not stuck on the old failure: it retries, and fails or succeeds afresh.
        await expect(e.list(scope)).resolves.toMatchObject({ items: [] });
        // Retries with backoff, with nobody calling: once the store heals, the turn is extracted.
        await eventually(async () => (await activeValues(store as FullStore, scope, 'city')).length > 0);
        expect(faulty.failuresLeft()).toBe(0);
        expect(await activeValues(store as FullStore, scope, 'city')).toEqual(['Rome']);
        await eventually(async () => e.lastError(scope) === null);
        // Fully recovered: new turns go through at once.
        await e.accept([turnInput(scope, 's', 1, 'pet=cat')]);
        expect((await e.recall(scope, 'pet')).map((h) => h.belief.value)).toEqual(['cat']);
        await e.close();
      });
    },
  );

  ctx.test(
    'pipeline: strict mode raises a failed claim at the user’s next operation, sanitised, once, then recovers',
    async () => {
      await noUnhandledRejections(async () => {
        const store = await ctx.open(DIMS);
        const e = engine(failingClaims(store, 1), { config: { strict: true } });
        const scope = { userId: unique('claimstrict-') };
        await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
        const err = await e.recall(scope, 'city').catch((x: unknown) => x);
        expect(err).toBeInstanceOf(StoreError);
        const { inspect } = await import('node:util');
        expect(inspect(err, { depth: 10 })).not.toContain('hunter2');
        // Raised once; the next operation retries against the healed store.
        expect((await e.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Rome']);
        await e.close();
      });
    },
  );

  ctx.test('pipeline: strict mode raises the failure at the next barrier of that user, once', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store, {
      extractor: scriptedExtractor(() => ({ operations: [{ op: 'add', kind: 'nonsense' }] })),
      config: { strict: true },
    });
    const scope = { userId: unique('strict-') };
    const other = { userId: unique('strict-other-') };
    await e.accept([turnInput(scope, 's', 0, 'x=1')]);
    await expect(e.recall(scope, 'x')).rejects.toBeInstanceOf(ExtractionError);
    await expect(e.recall(other, 'x')).resolves.toEqual([]);
    await expect(e.recall(scope, 'x')).resolves.toEqual([]);
    expect(e.lastError(scope)).toMatch(/ExtractionError \[extraction\]/);
    // Nothing was written by the invalid output.
    expect((await store.list(scope, { statuses: ['active', 'pending'] })).items).toEqual([]);
    await e.close();
  });

  ctx.test('pipeline: a spent budget leaves the turn queued and says so', async () => {
    const store = await ctx.open(DIMS);
    const events: string[] = [];
    const e = engine(store, {
      extractor: scriptedExtractor(() => {
        throw new BudgetExceededError('LLM calls per user per hour spent; turn stays queued');
      }),
    });
    e.on((ev) => events.push(ev.type));
    const scope = { userId: unique('budget-') };
    await e.accept([turnInput(scope, 's', 0, 'x=1')]);
    await e.flush(scope);
    expect(events).toContain('deferred');
    expect(e.lastError(scope)).toMatch(/budget/i);
    const backlog = await store.backlog({ now: AT, userId: scope.userId });
    expect(backlog.queued).toBe(1);
    await e.close();
  });

  ctx.test('pipeline: close drains accepted writes, then refuses calls', async () => {
    const store = await ctx.open(DIMS);
    const extractor = new KeyValueExtractor({ delayMs: () => 2 });
    const e = engine(store, { extractor });
    const scope = { userId: unique('close-') };
    for (let i = 0; i < 5; i++) await e.accept([turnInput(scope, 's', i, `k${i}=v${i}`)]);
    await e.close();
    expect(extractor.seen).toHaveLength(5);
    await expect(e.accept([turnInput(scope, 's', 9, 'z=1')])).rejects.toBeInstanceOf(ClosedError);
  });

  ctx.test('pipeline: resume processes turns left queued by a previous engine exactly once', async () => {
    const [store, scope] = await storeAndUser(ctx, 'resume-', DIMS);
    await store.enqueue([turnInput(scope, 's', 0, 'a=1'), turnInput(scope, 's', 1, 'b=2')]);
    // A claim whose worker died: its lease expires and resume takes it over.
    const dead = await store.claim({
      worker: 'dead',
      leaseMs: 1,
      now: '2020-01-01T00:00:00.000Z',
      userId: scope.userId,
    });
    expect(dead).not.toBeNull();
    const extractor = new KeyValueExtractor();
    const e = engine(store, { extractor });
    await e.resume();
    expect(extractor.seen).toHaveLength(2);
    expect(await activeValues(store, scope, 'a')).toEqual(['1']);
    await expect(
      store.commit({
        scope,
        inserts: [],
        updates: [],
        audit: [],
        complete: { claimId: dead!.claimId, entryIds: [dead!.entries[0]!.id] },
      }),
    ).rejects.toMatchObject({ code: 'lease_lost' });
    await e.close();
  });

  ctx.test(
    'pipeline: correct, forget, pending approve/reject and retract follow the engine rules',
    async () => {
      const store = await ctx.open(DIMS);
      // The rules of beliefs alone (episodes, kept beside them by default, have tests of their own).
      const e = engine(store, {
        extractor: new KeyValueExtractor({ confidence: 0.3 }),
        config: { episodic: false },
      });
      const scope = { userId: unique('ops-') };
      const city = await e.remember(scope, { kind: 'fact', attribute: 'city', value: 'NYC' });
      const corrected = await e.correct(scope, city.id, 'Brooklyn');
      expect(corrected).toMatchObject({
        value: 'Brooklyn',
        confidence: 1,
        source: 'correction',
        supersedes: city.id,
      });
      expect((await e.history(scope, { id: city.id })).map((b) => b.status)).toEqual([
        'superseded',
        'active',
      ]);
      await expect(e.correct(scope, corrected.id, 'Queens', { expectedVersion: 7 })).rejects.toBeInstanceOf(
        VersionConflictError,
      );

      // Low-confidence extraction is pending: not recalled until approved.
      await e.accept([turnInput(scope, 's', 0, 'city=Queens')]);
      expect((await e.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Brooklyn']);
      const [pending] = (await e.list(scope, { statuses: ['pending'] })).items;
      expect(pending?.value).toBe('Queens');
      await e.approve(scope, pending!.id);
      expect((await e.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Queens']);

      const forgotten = await e.forget(scope, pending!.id);
      expect(forgotten.status).toBe('forgotten');
      expect(await e.recall(scope, 'Queens')).toEqual([]);

      const pet = await e.remember(scope, { kind: 'fact', attribute: 'pet', value: 'cat' });
      await e.retract(scope, pet.id);
      expect(await e.recall(scope, 'pet cat')).toEqual([]);
      await e.close();
    },
  );

  ctx.test(
    'pipeline: a correction retires the replaced belief like any supersession (validTo set)',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store);
      const scope = { userId: unique('corr-') };
      const city = await e.remember(scope, { kind: 'fact', attribute: 'city', value: 'NYC' });
      const sf = await e.correct(scope, city.id, 'SF');
      const [old, now] = await e.history(scope, { id: city.id });
      expect(old).toMatchObject({ id: city.id, status: 'superseded', supersededBy: sf.id });
      expect(old!.validTo).not.toBeNull();
      expect(old!.invalidatedAt).not.toBeNull();
      expect(now).toMatchObject({ id: sf.id, status: 'active', source: 'correction', confidence: 1 });
      // Correcting to the value it already has confirms it: no new belief.
      const same = await e.correct(scope, sf.id, 'SF');
      expect(same.id).toBe(sf.id);
      expect((await e.history(scope)).filter((b) => b.attribute === 'city')).toHaveLength(2);
      await e.close();
    },
  );

  ctx.test(
    'pipeline: correct, approve, reject and retract re-plan after losing a race to another writer',
    async () => {
      const [store, scope] = await storeAndUser(ctx, 'race-ops-', DIMS);
      // Every lifecycle commit first loses once: another writer changed what it read (as a racing engine would).
      let lose = 0;
      const racy = new Proxy(store, {
        get(target, prop) {
          if (prop === 'commit') {
            return async (request: Parameters<EngineStore['commit']>[0]) => {
              if (lose > 0) {
                lose--;
                throw new VersionConflictError('racing', 1, 2);
              }
              return target.commit(request);
            };
          }
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }) as EngineStore;
      const e = engine(racy, { extractor: new KeyValueExtractor({ confidence: 0.3 }) });
      const city = await e.remember(scope, { kind: 'fact', attribute: 'city', value: 'NYC' });
      lose = 1;
      expect((await e.correct(scope, city.id, 'SF')).value).toBe('SF');
      await e.accept([turnInput(scope, 's', 0, 'city=Rome'), turnInput(scope, 's', 1, 'pet=cat')]);
      const pending = (await e.list(scope, { statuses: ['pending'] })).items;
      const rome = pending.find((b) => b.value === 'Rome')!;
      const cat = pending.find((b) => b.value === 'cat')!;
      lose = 1;
      expect((await e.approve(scope, rome.id)).status).toBe('active');
      lose = 1;
      expect((await e.reject(scope, cat.id)).status).toBe('retracted');
      lose = 1;
      expect((await e.retract(scope, rome.id)).status).toBe('retracted');
      expect(lose).toBe(0);
      await e.close();
    },
  );

  ctx.test('pipeline: strict mode raises a failure with its whole cause chain sanitised', async () => {
    const store = await ctx.open(DIMS);
    const key = 'sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const e = engine(store, {
      extractor: scriptedExtractor(() => {
        throw new Error(`upstream refused key ${key}`, {
          cause: new Error(`Authorization: Bearer ${key}`, { cause: new Error(`postgres://u:${key}@h/db`) }),
        });
      }),
      config: { strict: true },
    });
    const scope = { userId: unique('leak-') };
    await e.accept([turnInput(scope, 's', 0, 'x=1')]);
    const err = await e.recall(scope, 'x').catch((x: unknown) => x);
    expect(err).toBeInstanceOf(Error);
    const { inspect } = await import('node:util');
    const shown = inspect(err, { depth: 20 });
    expect(shown).toMatch(/upstream refused key/);
    expect(shown).not.toContain('AAAAAAAAAAAA');
    expect(String((err as Error).stack)).not.toContain('AAAAAAAAAAAA');
    await e.close();
  });

  ctx.test(
    'pipeline: a store failure carrying a credential, in any form, reaches no output (strict and failure-open)',
    async () => {
      const store = await ctx.open(DIMS);
      for (const strict of [true, false]) {
        for (const form of CREDENTIAL_FORMS) {
          // One generated case per form and mode: the masking itself is property-tested in the engine's package.
          const [c] = fc.sample(failureCase(form), 1);
          if (!c) throw new Error('no sample');
          const logs: string[] = [];
          const events: string[] = [];
          const e = engine(
            failingStore(store, ['claim', 'searchLexical'], () => failureOf(c)),
            {
              config: { strict, maxAttempts: 1 },
              logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
            },
          );
          e.on((event) => events.push(JSON.stringify(event)));
          const scope = { userId: unique('storeleak-') };
          const outputs: string[] = [];
          await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
          await e.recall(scope, 'city').catch((err: unknown) => outputs.push(shown(err)));
          await e.flush(scope).catch((err: unknown) => outputs.push(shown(err)));
          outputs.push(String(e.lastError(scope)), ...logs, ...events);
          await e.close();
          const all = outputs.join('\n');
          expect(leakedSecret(all, c.parts), `${form.id} ${strict ? 'strict' : 'open'}: ${all}`).toBeNull();
          expect(all).toMatch(/upstream failed/);
        }
      }
    },
  );

  ctx.test(
    "pipeline: turns held by a crashed worker's lease are taken over when it expires, without another call",
    async () => {
      const [store, scope] = await storeAndUser(ctx, 'lease-', DIMS);
      const leaseMs = 400;
      // A process accepted a turn, claimed it, and died holding the lease.
      await store.enqueue([turnInput(scope, 's', 0, 'city=Rome')]);
      const dead = await store.claim({
        worker: 'crashed',
        leaseMs,
        now: new Date().toISOString(),
        userId: scope.userId,
      });
      expect(dead).not.toBeNull();
      const e = engine(store, { config: { leaseMs } });
      // This process accepts the user's next turn: it cannot run before the held one, so it waits for the lease.
      await e.accept([turnInput(scope, 's', 1, 'pet=cat')]);
      // Nobody calls the engine again; its own retry takes both turns once the dead lease expires, in order.
      await eventually(async () => (await activeValues(store, scope, 'pet')).length > 0);
      expect(await activeValues(store, scope, 'city')).toEqual(['Rome']);
      await e.close();
    },
  );

  ctx.test(
    "pipeline: flush waits for turns another worker's lease holds, up to a bound, then reports them",
    async () => {
      const [store, scope] = await storeAndUser(ctx, 'flushlease-', DIMS);
      await store.enqueue([turnInput(scope, 's', 0, 'city=Rome')]);
      const now = () => new Date().toISOString();
      // A short lease: flush waits it out and the turn is processed.
      expect(
        await store.claim({ worker: 'crashed', leaseMs: 300, now: now(), userId: scope.userId }),
      ).not.toBeNull();
      const e = engine(store);
      await e.flush(scope);
      expect(await activeValues(store, scope, 'city')).toEqual(['Rome']);
      expect(e.lastError(scope)).toBeNull();
      // A lease longer than the flush timeout: failure-open flush says so; strict flush raises a typed error.
      await store.enqueue([turnInput(scope, 's', 1, 'pet=cat')]);
      const held = await store.claim({
        worker: 'crashed',
        leaseMs: 600_000,
        now: now(),
        userId: scope.userId,
      });
      expect(held).not.toBeNull();
      await e.flush(scope, { timeoutMs: 50 });
      expect(e.lastError(scope)).toMatch(
        /1 accepted turn is not extracted yet: held by another worker's lease until/,
      );
      const strict = engine(store, { config: { strict: true } });
      const err = await strict.flush(scope, { timeoutMs: 50 }).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(PendingWritesError);
      expect(err).toMatchObject({ code: 'pending_writes', pending: 1, until: held!.leaseUntil });
      await e.close();
      await strict.close();
    },
  );

  ctx.test(
    'pipeline: a lease renewed by heartbeat is not taken over while a long extraction runs',
    async () => {
      const [store, scope] = await storeAndUser(ctx, 'heartbeat-', DIMS);
      const other = (await ctx.second()) ?? store;
      const leaseMs = 900;
      const slow = gatedExtractor();
      const e = engine(store, { extractor: slow.extractor, config: { leaseMs } });
      await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
      await slow.started;
      // Three leases long: without renewal the claim would have run out twice over.
      await sleep(3 * leaseMs);
      const now = new Date().toISOString();
      expect(await other.claim({ worker: 'other', leaseMs, now, userId: scope.userId })).toBeNull();
      expect(await other.backlog({ now, userId: scope.userId })).toMatchObject({
        claimed: 1,
        staleLeases: 0,
      });
      slow.finish();
      await e.flush(scope);
      expect(await activeValues(store, scope, 'city')).toEqual(['Rome']);
      expect(e.lastError(scope)).toBeNull();
      expect(slow.inner.calls).toBe(1);
      await e.close();
    },
  );

  ctx.test(
    'pipeline: a worker whose claim is taken over stops its extraction and records no failure',
    async () => {
      const [store, scope] = await storeAndUser(ctx, 'lostlease-', DIMS);
      const other = (await ctx.second()) ?? store;
      const leaseMs = 300;
      const slow = gatedExtractor();
      const e = engine(store, { extractor: slow.extractor, config: { leaseMs } });
      await e.accept([turnInput(scope, 's', 0, 'city=Rome')]);
      await slow.started;
      // Another worker whose clock says the lease ran out long ago takes the turn over.
      const taken = await other.claim({ worker: 'other', leaseMs, now: FAR_FUTURE, userId: scope.userId });
      expect(taken).not.toBeNull();
      // The next heartbeat finds the claim lost and aborts the extraction.
      await eventually(async () => slow.aborted.length > 0);
      expect(slow.aborted[0]).toMatchObject({ code: 'lease_lost' });
      // The read barrier (this engine's own work) is done; no failure is recorded for the turn it gave up.
      expect(await e.recall(scope, 'city')).toEqual([]);
      expect(e.lastError(scope)).toBeNull();
      expect(slow.inner.calls).toBe(0);
      // The turn is the other worker's: it is still claimed (by it), never failed by the first.
      expect(await other.backlog({ now: new Date().toISOString(), userId: scope.userId })).toMatchObject({
        queued: 0,
        claimed: 1,
        dead: 0,
      });
      await e.close();
    },
  );

  ctx.test(
    "pipeline: a restarted process takes over its crashed predecessor's claims at once (flush and resume)",
    async (control) => {
      const store = await ctx.open(DIMS);
      const crashed = await ctx.openAs(exitedProcess());
      if (!crashed) return control.skip('no process liveness: the store lives and dies with its process');
      const flushed = { userId: unique('restart-flush-') };
      const resumed = { userId: unique('restart-resume-') };
      for (const scope of [flushed, resumed]) {
        const s = `${scope.userId}-s`;
        await store.enqueue([turnInput(scope, s, 0, 'city=Rome'), turnInput(scope, s, 1, 'pet=cat')]);
        // The predecessor claimed the turns under a long lease and died.
        const held = await crashed.claim({
          worker: 'crashed',
          leaseMs: 600_000,
          now: new Date().toISOString(),
          userId: scope.userId,
          maxEntries: 2,
        });
        expect(held?.entries).toHaveLength(2);
      }
      const e = engine(store);
      // No wait allowed for another worker's lease: an exited process's claim is none.
      await e.flush(flushed, { timeoutMs: 0 });
      expect(e.lastError(flushed)).toBeNull();
      expect((await e.recall(flushed, 'city')).map((h) => h.belief.value)).toEqual(['Rome']);
      expect(await activeValues(store, flushed, 'pet')).toEqual(['cat']);
      await e.resume();
      expect((await e.recall(resumed, 'pet')).map((h) => h.belief.value)).toEqual(['cat']);
      expect(await activeValues(store, resumed, 'city')).toEqual(['Rome']);
      await e.close();
    },
  );

  ctx.test('pipeline: the read barrier also waits for turns that resume() is processing', async () => {
    const [store, scope] = await storeAndUser(ctx, 'resumed-', DIMS);
    // Turns left in the outbox (e.g. by a crashed process, or enqueued with a transcript append).
    await store.enqueue([turnInput(scope, `${scope.userId}-s`, 0, 'city=Lima')]);
    const e = engine(store, { extractor: new KeyValueExtractor({ delayMs: () => 30 }) });
    const resumed = e.resume();
    // Not awaiting resume: a read right now must still see the turn resume took.
    expect((await e.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['Lima']);
    await resumed;
    await e.close();
  });

  ctx.test('pipeline: forgetting a belief forgets the episodes of the turns it came from', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store, { config: { episodic: true } });
    const scope = { userId: unique('pf-') };
    await e.accept([
      turnInput(scope, 's1', 0, 'home_city=Zanzibar'),
      turnInput(scope, 's1', 1, 'drink=green tea'),
    ]);
    await e.flush();
    const before = (await store.list(scope, { statuses: ['active'], limit: 100 })).items;
    const about = before.filter((b) => b.value.includes('Zanzibar'));
    // The fact and the episode of its turn (recall shows one of them: they cover the same turn).
    expect(about.map((b) => b.kind).sort()).toEqual(['episode', 'fact']);
    expect(await e.recall(scope, 'Zanzibar')).toHaveLength(1);
    await e.forget(scope, about.find((b) => b.kind === 'fact')!.id);
    expect(await e.recall(scope, 'Zanzibar')).toEqual([]);
    const active = (await store.list(scope, { statuses: ['active'], limit: 100 })).items;
    expect(JSON.stringify(active).toLowerCase()).not.toContain('zanzibar');
    // The other turn's episode and belief stay.
    expect(active.map((b) => b.kind).sort()).toEqual(['episode', 'fact']);
    await e.close();
  });

  ctx.test(
    'pipeline: replies keep what the assistant said, recalled only when asked, and are forgotten with what they repeat',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store, { config: { episodic: true, replies: true } });
      const scope = { userId: unique('pr-') };
      const s1 = unique('s-');
      const turns = [
        { role: 'user' as const, text: 'home_city=Zanzibar' },
        { role: 'assistant' as const, text: 'Zanzibar is lovely; I recommend the spice tour' },
        { role: 'user' as const, text: 'drink=green tea' },
        { role: 'assistant' as const, text: 'Green tea goes well with the harbour view' },
      ];
      const item = (role: string, content: string) => ({ role, content });
      await e.appendTranscript(
        scope,
        s1,
        turns.map((t) => item(t.role, t.text)),
        { turns: turns.map((t, index) => ({ index, role: t.role, text: t.text, at: AT })) },
      );
      await e.flush(scope);
      const items = (await store.list(scope, { statuses: ['active'], limit: 100 })).items;
      const replies = items.filter((b) => b.kind === 'reply');
      expect(replies.map((b) => b.value).sort()).toEqual([turns[3]!.text, turns[1]!.text]);
      for (const r of replies) {
        expect(r.subject).toBe('assistant');
        expect(r.evidence).toEqual([expect.objectContaining({ sessionId: s1, role: 'assistant' })]);
      }
      // Never evidence about the user: the beliefs are drawn from the user's turns alone.
      const claims = items.filter((b) => b.kind !== 'episode' && b.kind !== 'reply');
      expect(claims.map((b) => b.value).sort()).toEqual(['Zanzibar', 'green tea']);
      const values = (hits: readonly { belief: { value: string } }[]) => hits.map((h) => h.belief.value);
      // A question about the user does not recall the assistant's words, even where they match.
      expect(values(await e.recall(scope, 'spice tour'))).not.toContain(turns[1]!.text);
      // A question about what the assistant said does, labelled as the assistant's.
      const asked = await e.recall(scope, 'In our previous chat, which tour did you recommend?');
      expect(asked[0]).toMatchObject({ tier: 'episode', belief: { kind: 'reply', value: turns[1]!.text } });
      const block = await e.context(scope, 'Which tour did you recommend?');
      expect(block.text).toContain(
        '[assistant said 2026-01-01] Zanzibar is lovely; I recommend the spice tour',
      );

      const fact = claims.find((b) => b.value === 'Zanzibar');
      await e.forget(scope, fact!.id);
      const all = ['active', 'pending', 'superseded', 'retracted', 'forgotten'] as const;
      const zanzibar = (value: unknown) => JSON.stringify(value).toLowerCase().includes('zanzibar');
      expect(zanzibar(await store.list(scope, { statuses: all, limit: 100 }))).toBe(false);
      expect(zanzibar(await e.recall(scope, 'Which tour did you recommend in our previous chat?'))).toBe(
        false,
      );
      // The reply that repeated the value went with it, and so did its turn's text; the other reply stays.
      const left = await store.getItems(scope, s1);
      expect(zanzibar(left)).toBe(false);
      expect(left[3]).toEqual(item('assistant', turns[3]!.text));
      expect(values(await e.recall(scope, 'what did you say about the harbour view?'))).toContain(
        turns[3]!.text,
      );
      await e.close();
    },
  );

  ctx.test('pipeline: with replies off, the assistant’s turns are context only', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store, { config: { episodic: true, replies: false } });
    const scope = { userId: unique('pro-') };
    await e.accept([
      turnInput(scope, 's1', 0, 'home_city=Zanzibar'),
      turnInput(scope, 's1', 1, 'I recommend the spice tour', 'assistant'),
    ]);
    await e.flush(scope);
    const items = (await store.list(scope, { limit: 100 })).items;
    expect(items.map((b) => b.kind).sort()).toEqual(['episode', 'fact']);
    expect(await e.recall(scope, 'Which tour did you recommend in our previous chat?')).toEqual([]);
    await e.close();
  });

  ctx.test(
    'pipeline: forgetting a belief forgets every episode of the user that carries its value; the transcript agrees',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store, { config: { episodic: true } });
      const scope = { userId: unique('pv-') };
      const other = { userId: unique('pv-other-') };
      const said = (text: string) => ({ role: 'user', content: text });
      const save = (who: Scope, session: string, texts: readonly string[]) =>
        e.appendTranscript(who, session, texts.map(said), {
          turns: texts.map((text, index) => ({ index, role: 'user' as const, text, at: AT })),
        });
      const ferry = 'The ferry to Zanzibar leaves at dawn';
      const [s1, s2, s3] = [unique('s-'), unique('s-'), unique('s-')];
      await save(scope, s1, ['home_city=Zanzibar', 'drink=green tea']);
      // Another conversation of the same user names the value in a turn the belief was not drawn from.
      await save(scope, s2, [ferry, 'My sister visits in June']);
      await save(other, s3, [ferry]);
      await e.flush(scope);
      await e.flush(other);
      const valuesOf = (hits: readonly { belief: { value: string } }[]) => hits.map((h) => h.belief.value);
      const zanzibar = (value: unknown) => JSON.stringify(value).toLowerCase().includes('zanzibar');
      const [ferryVector] = await new WordHashEmbedder(DIMS).embed([ferry]);
      expect(valuesOf(await e.recall(scope, 'ferry at dawn'))).toEqual([ferry]);
      const vectorBefore = await store.searchVector(scope, ferryVector!, { limit: 50 });
      expect(valuesOf(vectorBefore)).toContain(ferry);
      const fact = (await store.list(scope, { limit: 100 })).items.find(
        (b) => b.kind === 'fact' && b.value === 'Zanzibar',
      );

      await e.forget(scope, fact!.id);

      for (const q of ['Zanzibar', 'ferry at dawn', 'home city']) {
        expect(zanzibar(await e.recall(scope, q)), q).toBe(false);
      }
      const all = ['active', 'pending', 'superseded', 'retracted', 'forgotten'] as const;
      expect(zanzibar(await store.searchVector(scope, ferryVector!, { limit: 50, statuses: all }))).toBe(
        false,
      );
      expect(
        zanzibar(await store.searchLexical(scope, 'ferry dawn Zanzibar', { limit: 50, statuses: all })),
      ).toBe(false);
      expect(zanzibar(await store.history(scope))).toBe(false);
      // The transcript agrees with the episodes: the turns whose episodes were forgotten lost their text.
      expect(await store.getItems(scope, s1)).toEqual([said(FORGOTTEN_MARKER), said('drink=green tea')]);
      expect(await store.getItems(scope, s2)).toEqual([
        said(FORGOTTEN_MARKER),
        said('My sister visits in June'),
      ]);
      // What does not carry the value stays recallable.
      expect(valuesOf(await e.recall(scope, 'sister visits June'))).toEqual(['My sister visits in June']);
      expect(valuesOf(await e.recall(scope, 'green tea'))).toContain('green tea');
      // Another user's identical turn is theirs.
      expect(valuesOf(await e.recall(other, 'ferry at dawn'))).toEqual([ferry]);
      expect(await store.getItems(other, s3)).toEqual([said(ferry)]);
      await e.close();
    },
  );

  ctx.test('pipeline: recall never crosses scopes', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store);
    const alice = { userId: unique('alice-') };
    const bob = { userId: unique('bob-') };
    const aliceNs = { userId: alice.userId, namespace: 'project-x' };
    await e.accept([turnInput(alice, 's', 0, 'secret=alpha')]);
    await e.accept([turnInput(aliceNs, 's2', 0, 'secret=beta')]);
    await e.accept([turnInput(bob, 's3', 0, 'hobby=chess')]);
    await e.flush();
    expect((await e.recall(alice, 'secret alpha beta')).map((h) => h.belief.value)).toEqual(['alpha']);
    expect((await e.recall(aliceNs, 'secret alpha beta')).map((h) => h.belief.value)).toEqual(['beta']);
    expect((await e.recall(bob, 'secret alpha beta')).map((h) => h.belief.value)).not.toContain('alpha');
    expect((await e.recall(bob, 'secret alpha beta')).map((h) => h.belief.value)).not.toContain('beta');
    await e.close();
  });
}
