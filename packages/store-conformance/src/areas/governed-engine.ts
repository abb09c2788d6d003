/**
 * Governed writes through the engine, on the store under test: operation keys (retries across engines and handles,
 * conflicts, scoping), required versions, free-text remember, host-selected context, the capture policy, capture
 * grants, budgets across engines, access counts, clearAll, and loud failures for stores without a capability.
 */
import { createHash } from 'node:crypto';
import {
  type Belief,
  BudgetExceededError,
  CapabilityError,
  CaptureNotAuthorizedError,
  ClosedError,
  type Embedder,
  type EngineStore,
  type Extractor,
  InvalidInputError,
  type MemoryEngine,
  type MemoryEngineOptions,
  OperationConflictError,
  type Scope,
} from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { expect } from 'vitest';
import { DIMS, type SuiteContext } from '../context.js';
import { AT, engine, manualClock, rejects, unique, userTurn } from '../fixtures.js';

/** A store of the suite, an engine on it (see {@link engine}) and a fresh user's scope. */
async function engineOn(ctx: SuiteContext, userPrefix: string, options: Partial<MemoryEngineOptions> = {}) {
  const store = await ctx.open();
  return { store, e: engine(store, options), scope: { userId: unique(userPrefix) } };
}

/** `store` without the named methods, as a third-party store written before they existed. */
function without(store: EngineStore, ...methods: string[]): EngineStore {
  return new Proxy(store, {
    get(target, prop) {
      if (typeof prop === 'string' && methods.includes(prop)) return undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export function governedEngineTests(ctx: SuiteContext): void {
  ctx.test(
    'governed writes: a retried key returns the first result, also from a new engine on another handle',
    async () => {
      const store = await ctx.open();
      const other = (await ctx.second()) ?? store;
      const scope = { userId: unique('keys-') };
      const fact = { kind: 'fact' as const, attribute: 'city', value: 'NYC' };
      const e1 = engine(store);
      const city = await e1.remember(scope, fact, { key: 'rem-1' });
      expect(await e1.remember(scope, fact, { key: 'rem-1' })).toEqual(city);
      const fixed = await e1.correct(scope, city.id, 'SF', { key: 'fix-1', expectedVersion: city.version });
      await e1.close();
      // A new engine on another handle (another process, for a store that has one) sees the same keys.
      const e2 = engine(other);
      const history = await e2.history(scope);
      expect(await e2.correct(scope, city.id, 'SF', { key: 'fix-1', expectedVersion: city.version })).toEqual(
        fixed,
      );
      const replayed = await e2.remember(scope, fact, { key: 'rem-1' });
      expect([replayed.id, replayed.status]).toEqual([city.id, 'superseded']);
      // The same key with another request is a typed conflict, and writes nothing.
      await rejects(
        e2.correct(scope, city.id, 'LA', { key: 'fix-1', expectedVersion: city.version }),
        OperationConflictError,
      );
      await rejects(
        e2.remember(scope, { ...fact, value: 'Boston' }, { key: 'fix-1' }),
        OperationConflictError,
      );
      await rejects(
        e2.remember(scope, { ...fact, value: 'Boston' }, { key: 'rem-1' }),
        OperationConflictError,
      );
      expect(await e2.history(scope)).toEqual(history);
      // Keys are per user (and namespace): another user's identical key is its own.
      const bob = { userId: unique('keys-') };
      const bobs = await e2.remember(bob, { ...fact, value: 'Oslo' }, { key: 'rem-1' });
      expect(bobs.value).toBe('Oslo');
      expect((await e2.remember({ ...scope, namespace: 'w' }, fact, { key: 'fix-1' })).value).toBe('NYC');
      await e2.close();
    },
  );

  ctx.test(
    'governed writes: approve, reject, retract and forget are idempotent by key; forget’s record is content-free',
    async () => {
      const { store, e, scope } = await engineOn(ctx, 'keys-');
      const a = await e.remember(
        scope,
        { kind: 'fact', attribute: 'pet', value: 'cat' },
        { state: 'pending' },
      );
      const b = await e.remember(
        scope,
        { kind: 'fact', attribute: 'car', value: 'Volvo' },
        { state: 'pending' },
      );
      const c = await e.remember(scope, { kind: 'fact', attribute: 'gym', value: 'Equinox' });
      const d = await e.remember(scope, { kind: 'fact', attribute: 'clinic', value: 'Lakeside Clinic' });
      expect([a.status, b.status]).toEqual(['pending', 'pending']);
      const steps = [
        ['approved', () => e.approve(scope, a.id, { key: 'ap', expectedVersion: a.version })],
        ['rejected', () => e.reject(scope, b.id, { key: 'rj', expectedVersion: b.version })],
        ['retracted', () => e.retract(scope, c.id, { key: 'rt', expectedVersion: c.version })],
        ['forgotten', () => e.forget(scope, d.id, { key: 'fg', expectedVersion: d.version })],
      ] as const;
      for (const [, run] of steps) {
        const first = await run();
        const history = await e.history(scope);
        // A retry replays: the first result, though the version given is no longer current.
        expect(await run()).toEqual(first);
        expect(await e.history(scope)).toEqual(history);
      }
      expect((await e.get(scope, a.id))?.status).toBe('active');
      expect((await e.get(scope, b.id))?.status).toBe('retracted');
      expect((await e.get(scope, c.id))?.status).toBe('retracted');
      await rejects(e.approve(scope, b.id, { key: 'rj' }), OperationConflictError);
      const record = await (store as unknown as import('@mem01/engine').FullStore).getOperation(scope, 'fg');
      expect(record).toMatchObject({ action: 'forget', beliefIds: [d.id], outcome: 'forgotten' });
      expect(JSON.stringify(record)).not.toMatch(/Lakeside|clinic/i);
      expect(
        JSON.stringify(await e.forget(scope, d.id, { key: 'fg', expectedVersion: d.version })),
      ).not.toMatch(/Lakeside/);
      await e.close();
    },
  );

  ctx.test('governed writes: config.requireVersion refuses a mutation without expectedVersion', async () => {
    const { e, scope } = await engineOn(ctx, 'ver-', { config: { requireVersion: true } });
    const a = await e.remember(scope, { kind: 'fact', attribute: 'pet', value: 'cat' });
    for (const call of [
      () => e.correct(scope, a.id, 'dog'),
      () => e.forget(scope, a.id),
      () => e.retract(scope, a.id),
      () => e.approve(scope, a.id),
      () => e.reject(scope, a.id),
    ]) {
      const err = await rejects(call(), InvalidInputError);
      expect(err.message).toMatch(/expectedVersion/);
    }
    expect((await e.get(scope, a.id))?.version).toBe(1);
    expect((await e.correct(scope, a.id, 'dog', { expectedVersion: 1 })).value).toBe('dog');
    await e.close();
  });

  ctx.test('governed writes: config.requireOperationKey refuses a mutation without a key', async () => {
    const { e, scope } = await engineOn(ctx, 'opkey-', { config: { requireOperationKey: true } });
    const remember = () => e.remember(scope, { kind: 'fact', attribute: 'pet', value: 'cat' });
    expect((await rejects(remember(), InvalidInputError)).message).toMatch(/key: is required/);
    expect((await rejects(e.remember(scope, 'pet=cat'), InvalidInputError)).message).toMatch(/key/);
    expect(await e.history(scope)).toEqual([]);
    const a = await e.remember(scope, { kind: 'fact', attribute: 'pet', value: 'cat' }, { key: 'r1' });
    for (const call of [
      () => e.correct(scope, a.id, 'dog'),
      () => e.forget(scope, a.id),
      () => e.retract(scope, a.id),
      () => e.approve(scope, a.id),
      () => e.reject(scope, a.id),
    ]) {
      const err = await rejects(call(), InvalidInputError);
      expect(err.message).toMatch(/key: is required \(config\.requireOperationKey is on\)/);
    }
    expect((await e.get(scope, a.id))?.version).toBe(1);
    expect((await e.correct(scope, a.id, 'dog', { key: 'c1' })).value).toBe('dog');
    await e.close();
  });

  ctx.test(
    'remember with free text: drawn beliefs or a note, pending state, source label and reference, key',
    async () => {
      const { e, scope } = await engineOn(ctx, 'text-');
      const drawn = await e.remember(scope, 'diet=vegan', {
        source: 'crm',
        sourceRef: 'T-1',
        metadata: { team: 'support' },
      });
      expect(drawn.stored).toBe('belief');
      expect(drawn.beliefs.map((b) => [b.attribute, b.value, b.status, b.source])).toEqual([
        ['diet', 'vegan', 'active', 'manual'],
      ]);
      expect(drawn.beliefs[0]).toMatchObject({
        origin: { label: 'crm', ref: 'T-1' },
        metadata: { team: 'support' },
        evidence: [],
      });
      const note = await e.remember(scope, 'Prefers phone calls after six in the evening', {
        state: 'pending',
      });
      expect(note.stored).toBe('note');
      expect(note.beliefs.map((b) => [b.kind, b.status, b.statement])).toEqual([
        ['note', 'pending', 'Prefers phone calls after six in the evening'],
      ]);
      const jazz = await e.remember(scope, 'Listens to jazz on Fridays', { key: 'jazz' });
      expect(jazz.stored).toBe('note');
      expect((await e.recall(scope, 'jazz on Fridays')).map((r) => r.belief.id)).toContain(
        jazz.beliefs[0]!.id,
      );
      // The same text again confirms the note; a retried key replays; another text under the key conflicts.
      expect((await e.remember(scope, 'Listens to jazz on Fridays')).beliefs[0]!.id).toBe(
        jazz.beliefs[0]!.id,
      );
      expect(await e.remember(scope, 'Listens to jazz on Fridays', { key: 'jazz' })).toMatchObject({
        stored: 'note',
        beliefs: [{ id: jazz.beliefs[0]!.id }],
      });
      await rejects(e.remember(scope, 'Listens to blues', { key: 'jazz' }), OperationConflictError);
      // Pending text retires nothing until approved.
      const change = await e.remember(scope, 'diet=vegetarian', { state: 'pending' });
      expect(change.beliefs[0]?.status).toBe('pending');
      expect((await e.get(scope, drawn.beliefs[0]!.id))?.status).toBe('active');
      await rejects(e.remember(scope, 'x', { source: 'no spaces allowed' }), InvalidInputError);
      await rejects(e.remember(scope, 'x', { sourceRef: 'T-2' }), InvalidInputError);
      await e.close();
    },
  );

  ctx.test(
    'context with host-selected ids: in the order given; unknown, foreign and inactive ids skipped',
    async () => {
      const { e, scope } = await engineOn(ctx, 'sel-');
      const other = { userId: unique('sel-') };
      const a = await e.remember(scope, {
        kind: 'fact',
        attribute: 'a',
        value: 'Alpha',
        statement: 'Alpha statement.',
      });
      const b = await e.remember(scope, {
        kind: 'fact',
        attribute: 'b',
        value: 'Beta',
        statement: 'Beta statement.',
      });
      const p = await e.remember(
        scope,
        { kind: 'fact', attribute: 'p', value: 'Pending' },
        { state: 'pending' },
      );
      const f = await e.remember(scope, { kind: 'fact', attribute: 'f', value: 'Forgotten' });
      await e.forget(scope, f.id);
      const foreign = await e.remember(other, { kind: 'fact', attribute: 'x', value: 'Foreign secret' });
      const block = await e.context(scope, { ids: [b.id, 'no-such-id', foreign.id, a.id, p.id, f.id, b.id] });
      expect(block.selected.map((x) => x.id)).toEqual([b.id, a.id]);
      expect(block.beliefs.map((x) => x.id)).toEqual([b.id, a.id]);
      expect(block.skipped).toEqual([
        { id: 'no-such-id', reason: 'not_found' },
        { id: foreign.id, reason: 'not_found' },
        { id: p.id, reason: 'not_active' },
        { id: f.id, reason: 'not_active' },
        { id: b.id, reason: 'duplicate' },
      ]);
      expect(block.text.indexOf('Beta statement')).toBeLessThan(block.text.indexOf('Alpha statement'));
      expect(block.text).not.toContain('Foreign secret');
      expect(block.bytes).toBeLessThanOrEqual(e.config.blockBytes);
      const small = await e.context(scope, { ids: [a.id, b.id], blockBytes: 200 });
      expect(small.bytes).toBeLessThanOrEqual(200);
      await e.close();
    },
  );

  ctx.test(
    'capture policy: accept, pending or reject per candidate, with review facts and its revision audited',
    async () => {
      const store = await ctx.open();
      const reviews: {
        value: string;
        kind: string;
        supersedes: string | null;
        confidence: number;
        quote: string;
        proposed: string;
      }[] = [];
      const e = engine(store, {
        config: { episodic: true },
        capturePolicy: {
          revision: 'policy-v7',
          decide(candidate, review) {
            reviews.push({
              value: candidate.value,
              kind: candidate.kind,
              supersedes: review.supersedes?.value ?? null,
              confidence: review.confidence,
              quote: review.evidence[0]?.quote ?? '',
              proposed: review.proposed,
            });
            if (candidate.kind === 'episode') return 'reject';
            if (candidate.attribute === 'secret') return 'reject';
            return Promise.resolve(candidate.value === 'SF' ? 'pending' : 'accept');
          },
        },
      });
      const scope = { userId: unique('pol-') };
      await e.accept([userTurn(scope, 's1', 0, 'city=NYC; secret=1234')]);
      await e.flush(scope);
      await e.accept([userTurn(scope, 's2', 0, 'city=SF')]);
      await e.flush(scope);
      const all = await e.history(scope);
      expect(all.map((b) => [b.attribute, b.value, b.status])).toEqual([
        ['city', 'NYC', 'active'],
        ['city', 'SF', 'pending'],
      ]);
      expect(reviews.find((r) => r.value === 'SF')).toEqual({
        value: 'SF',
        kind: 'fact',
        supersedes: 'NYC',
        confidence: 0.9,
        quote: 'city=SF',
        proposed: 'active',
      });
      expect(reviews.filter((r) => r.kind === 'episode')).toHaveLength(2);
      const decided = (await store.auditLog(scope)).filter((a) => a.policy);
      expect(decided.map((a) => [a.action, a.policy?.decision, a.beliefId === null])).toEqual([
        ['add', 'accept', false],
        ['reject', 'reject', true],
        ['reject', 'reject', true],
        ['add', 'pending', false],
        ['reject', 'reject', true],
      ]);
      expect(new Set(decided.map((a) => a.policy?.revision))).toEqual(new Set(['policy-v7']));
      expect(JSON.stringify(await store.auditLog(scope))).not.toContain('1234');
      await e.close();
    },
  );

  ctx.test(
    'capture grants: without a valid grant capture is refused and nothing is written; expiry by the engine clock',
    async () => {
      const store = await ctx.open();
      const time = manualClock('2026-01-01T00:00:00.000Z');
      const e = engine(store, { clock: time.clock, config: { requireCaptureGrant: true } });
      const scope = { userId: unique('grant-'), namespace: 'app' };
      const refusedAll = async () => {
        await rejects(e.accept([userTurn(scope, 's1', 0, 'city=NYC')]), CaptureNotAuthorizedError);
        await rejects(
          e.appendTranscript(scope, 's2', [{ role: 'user', content: 'pet=cat' }], {
            turns: [{ index: 0, role: 'user', text: 'pet=cat', at: AT }],
          }),
          CaptureNotAuthorizedError,
        );
        await rejects(
          e.remember(scope, { kind: 'fact', attribute: 'a', value: 'b' }),
          CaptureNotAuthorizedError,
        );
        await rejects(e.remember(scope, 'diet=vegan'), CaptureNotAuthorizedError);
      };
      const nothing = async () => {
        expect(await e.list(scope, { statuses: ['active', 'pending'] })).toEqual({
          items: [],
          nextCursor: null,
        });
        expect((await store.backlog({ now: AT, userId: scope.userId })).queued).toBe(0);
        expect(await (store as unknown as import('@mem01/engine').FullStore).getItems(scope, 's2')).toEqual(
          [],
        );
      };
      await refusedAll();
      await nothing();
      const intent = 'Remember your preferences to personalise answers';
      const grant = await e.grantCapture(scope, { intent, expiresAt: '2026-01-01T01:00:00.000Z' });
      expect(grant.intentDigest).toBe(createHash('sha256').update(intent).digest('hex'));
      expect(JSON.stringify(await e.captureGrants(scope))).not.toContain('personalise');
      // Granted for this user + namespace only.
      await rejects(
        e.accept([userTurn({ userId: scope.userId }, 's1', 0, 'city=NYC')]),
        CaptureNotAuthorizedError,
      );
      await e.accept([userTurn(scope, 's1', 0, 'city=NYC')]);
      expect((await e.recall(scope, 'city')).map((r) => r.belief.value)).toEqual(['NYC']);
      time.set('2026-01-01T01:00:00.000Z');
      expect(await e.activeCaptureGrant(scope)).toBeNull();
      await rejects(e.accept([userTurn(scope, 's3', 0, 'city=SF')]), CaptureNotAuthorizedError);
      await e.grantCapture(scope, { intent });
      expect((await e.remember(scope, 'diet=vegan')).stored).toBe('belief');
      // Every grant not revoked yet is revoked (the expired one too).
      expect(await e.revokeCapture(scope)).toBe(2);
      await rejects(e.remember(scope, 'diet=raw'), CaptureNotAuthorizedError);
      expect((await e.captureGrants(scope)).map((g) => g.revokedAt)).toEqual([
        '2026-01-01T01:00:00.000Z',
        '2026-01-01T01:00:00.000Z',
      ]);
      await e.close();
    },
  );

  ctx.test(
    'budgets: a spent output-token budget leaves turns queued until the window ends, across engines',
    async () => {
      const store = await ctx.open();
      const other = (await ctx.second()) ?? store;
      const time = manualClock('2026-01-01T00:10:00.000Z');
      const kv = new KeyValueExtractor();
      const metered: Extractor = {
        name: 'metered',
        async extract(request) {
          return {
            ...(await kv.extract(request)),
            usage: { llmCalls: 1, inputTokens: 10, outputTokens: 60 },
          };
        },
      };
      const options = {
        extractor: metered,
        clock: time.clock,
        config: { budgets: { outputTokensPerUser: 100 } },
      };
      const a = engine(store, options);
      const b = engine(other, options);
      const scope = { userId: unique('budget-') };
      await a.accept([userTurn(scope, 's1', 0, 'city=NYC')]);
      await a.flush(scope);
      await a.accept([userTurn(scope, 's2', 0, 'pet=cat')]);
      await a.flush(scope);
      // 120 output tokens used: the next batch, even on another engine and handle, waits for the next window.
      await b.accept([userTurn(scope, 's3', 0, 'car=Volvo')]);
      await b.flush(scope);
      expect(b.lastError(scope)).toMatch(/output_tokens budget/);
      expect(await store.backlog({ now: time.clock().toISOString(), userId: scope.userId })).toMatchObject({
        queued: 1,
        nextClaimableAt: '2026-01-01T01:00:00.000Z',
      });
      expect(kv.calls).toBe(2);
      time.set('2026-01-01T01:00:00.001Z');
      await b.flush(scope);
      expect((await b.get(scope, (await b.recall(scope, 'car'))[0]!.belief.id))?.value).toBe('Volvo');
      expect(kv.calls).toBe(3);
      await a.close();
      await b.close();
    },
  );

  ctx.test(
    'budgets: embedder calls of writes and recall are counted; spent, extraction waits and recall goes lexical',
    async () => {
      const store = await ctx.open();
      const other = (await ctx.second()) ?? store;
      const time = manualClock('2026-01-01T00:10:00.000Z');
      const words = new WordHashEmbedder(DIMS);
      let requests = 0;
      // A semantic embedder that reports one provider request and 10 tokens per text, like a hosted one.
      const metered: Embedder = {
        model: 'metered-test',
        dimensions: DIMS,
        minSimilarity: 0.2,
        kind: 'semantic',
        async embed(texts, options) {
          requests++;
          options?.onUsage?.({ embeddingCalls: 1, embeddingTokens: 10 * texts.length });
          return words.embed(texts);
        },
      };
      const options = {
        embedder: metered,
        clock: time.clock,
        // Word hashes in a few dimensions are no semantic embedder: "pet is cat" would be a near repeat of "city is
        // NYC" to them. This test counts calls, so the near-repeat check (its own tests are the engine's) is off.
        config: { budgets: { embeddingCallsPerUser: 3 }, duplicateSimilarity: null },
      };
      const a = engine(store, options);
      const scope = { userId: unique('emb-') };
      await a.accept([userTurn(scope, 's1', 0, 'city=NYC')]);
      await a.flush(scope);
      // Extraction embedded the candidates' query and the new belief's statement.
      expect(requests).toBe(2);
      expect(await a.usage(scope)).toEqual({
        userId: scope.userId,
        periodMs: 3_600_000,
        windowStart: '2026-01-01T00:00:00.000Z',
        windowEnd: '2026-01-01T01:00:00.000Z',
        counting: true,
        llmCalls: { used: 0, limit: null },
        inputTokens: { used: 0, limit: null },
        outputTokens: { used: 0, limit: null },
        embeddingCalls: { used: 2, limit: 3 },
        embeddingTokens: { used: 20, limit: null },
        activeBeliefs: { used: 1, limit: null },
        activeTokens: { used: statementTokens(await a.list(scope)), limit: null },
      });
      expect((await a.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['NYC']);
      expect(requests).toBe(3);
      // Spent: recall still answers, from the lexical index, without calling the embedder.
      expect((await a.recall(scope, 'city')).map((h) => h.belief.value)).toEqual(['NYC']);
      expect(requests).toBe(3);
      // Another engine on another handle sees the same counters, and its extraction waits for the next window.
      const b = engine(other, options);
      expect((await b.usage(scope)).embeddingCalls).toEqual({ used: 3, limit: 3 });
      await b.accept([userTurn(scope, 's2', 0, 'pet=cat')]);
      await b.flush(scope);
      expect(b.lastError(scope)).toMatch(/embedding_calls budget/);
      expect(await store.backlog({ now: time.clock().toISOString(), userId: scope.userId })).toMatchObject({
        queued: 1,
        nextClaimableAt: '2026-01-01T01:00:00.000Z',
      });
      expect(requests).toBe(3);
      time.set('2026-01-01T01:00:00.001Z');
      await b.flush(scope);
      expect((await b.list(scope)).items.map((x) => x.value).sort()).toEqual(['NYC', 'cat']);
      expect(await b.usage(scope)).toMatchObject({
        windowStart: '2026-01-01T01:00:00.000Z',
        embeddingCalls: { used: 2, limit: 3 },
        activeBeliefs: { used: 2, limit: null },
      });
      await a.close();
      await b.close();
    },
  );

  ctx.test('usage() reads the counters of engines that keep them, against its own limits', async () => {
    const store = await ctx.open();
    const time = manualClock('2026-03-01T10:30:00.000Z');
    const metered: Extractor = {
      name: 'metered',
      async extract(request) {
        return {
          ...(await new KeyValueExtractor().extract(request)),
          usage: { llmCalls: 1, inputTokens: 40, outputTokens: 7 },
        };
      },
    };
    const scope = { userId: unique('usage-') };
    // Without a call or token budget, nothing is counted; the active beliefs are counted all the same.
    const plain = engine(store, {
      extractor: metered,
      clock: time.clock,
      config: { budgets: { periodMs: 60_000 } },
    });
    await plain.accept([userTurn(scope, 's1', 0, 'a=1')]);
    await plain.flush(scope);
    expect(await plain.usage(scope)).toMatchObject({
      counting: false,
      llmCalls: { used: 0, limit: null },
      activeBeliefs: { used: 1, limit: null },
    });
    const counted = engine(store, {
      extractor: metered,
      clock: time.clock,
      config: { budgets: { periodMs: 60_000, inputTokensPerUser: 1000, maxActiveBeliefsPerUser: 10 } },
    });
    await counted.accept([userTurn(scope, 's2', 0, 'b=2; c=3')]);
    await counted.flush(scope);
    // Every counter is kept while one budget is set; the namespace does not matter (budgets are per user).
    const usage = await counted.usage({ userId: scope.userId, namespace: 'elsewhere' });
    expect(usage).toEqual({
      userId: scope.userId,
      periodMs: 60_000,
      windowStart: '2026-03-01T10:30:00.000Z',
      windowEnd: '2026-03-01T10:31:00.000Z',
      counting: true,
      llmCalls: { used: 1, limit: null },
      inputTokens: { used: 40, limit: 1000 },
      outputTokens: { used: 7, limit: null },
      embeddingCalls: { used: 0, limit: null },
      embeddingTokens: { used: 0, limit: null },
      activeBeliefs: { used: 3, limit: 10 },
      activeTokens: { used: statementTokens(await counted.list(scope)), limit: null },
    });
    // The engine without budgets reads the same counters.
    expect((await plain.usage(scope)).inputTokens).toEqual({ used: 40, limit: null });
    expect((await counted.usage({ userId: unique('usage-') })).inputTokens).toEqual({ used: 0, limit: 1000 });
    time.set('2026-03-01T10:31:00.000Z');
    expect((await counted.usage(scope)).inputTokens).toEqual({ used: 0, limit: 1000 });
    await rejects(counted.usage({ userId: '' }), InvalidInputError);
    await plain.close();
    await counted.close();
    await rejects(counted.usage(scope), ClosedError);
  });

  ctx.test('budgets: result capacity caps a user’s active beliefs (episodes aside)', async () => {
    const store = await ctx.open();
    const time = manualClock('2026-01-01T00:00:00.000Z');
    const e = engine(store, {
      clock: time.clock,
      config: { episodic: true, budgets: { maxActiveBeliefsPerUser: 2 } },
    });
    const scope = { userId: unique('cap-') };
    await e.accept([userTurn(scope, 's1', 0, 'a=1; b=2')]);
    await e.flush(scope);
    expect((await e.list(scope)).items.filter((x) => x.kind !== 'episode')).toHaveLength(2);
    await capacityWaitsUntilFreed(e, store, scope, time, /capacity/);
    await e.close();
  });

  ctx.test(
    'budgets: result capacity in tokens caps the estimated tokens of a user’s active beliefs',
    async () => {
      const store = await ctx.open();
      const time = manualClock('2026-01-01T00:00:00.000Z');
      // "The user's a is 1." and "The user's b is 2.": 18 UTF-8 bytes each, 36 together: 9 tokens at 4 bytes a token.
      const e = engine(store, {
        clock: time.clock,
        config: { episodic: true, budgets: { maxActiveTokensPerUser: 9 } },
      });
      const scope = { userId: unique('tokcap-') };
      await e.accept([userTurn(scope, 's1', 0, 'a=1; b=2')]);
      await e.flush(scope);
      expect(await e.usage(scope)).toMatchObject({
        activeBeliefs: { used: 2, limit: null },
        activeTokens: { used: 9, limit: 9 },
      });
      await capacityWaitsUntilFreed(
        e,
        store,
        scope,
        time,
        /capacity reached .*9 estimated tokens of active beliefs, at most 9/,
      );
      expect((await e.usage(scope)).activeTokens).toEqual({ used: 9, limit: 9 });
      await e.close();
    },
  );

  ctx.test('access counts: recall never writes; the counts are written in a batch at flush', async () => {
    const store = await ctx.open();
    let writes = 0;
    const counting = new Proxy(store, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (prop === 'recordAccess') writes++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const time = manualClock('2026-02-01T00:00:00.000Z');
    const e = engine(counting, { clock: time.clock });
    const scope = { userId: unique('acc-') };
    const heron = await e.remember(scope, { kind: 'fact', attribute: 'bird', value: 'heron' });
    await e.recall(scope, 'heron');
    await e.recall(scope, 'heron');
    expect(writes).toBe(0);
    expect((await store.get(scope, heron.id))?.accessCount).toBeUndefined();
    await e.flush();
    expect(writes).toBe(1);
    expect(await store.get(scope, heron.id)).toEqual({
      ...heron,
      accessCount: 2,
      lastAccessedAt: '2026-02-01T00:00:00.000Z',
    });
    await e.close();
    const off = engine(counting, { config: { accessCounts: false } });
    await off.recall(scope, 'heron');
    await off.close();
    expect(writes).toBe(1);
  });

  ctx.test('clearAll through the engine; a store without a capability fails loudly, naming it', async () => {
    const { store, e, scope } = await engineOn(ctx, 'clear-');
    await e.remember(scope, { kind: 'fact', attribute: 'a', value: 'b' });
    await e.accept([userTurn({ userId: unique('clear-') }, 's', 0, 'x=1')]);
    const receipt = await e.clearAll();
    expect(receipt.users).toBeGreaterThanOrEqual(1);
    expect((await store.listScopes()).length).toBe(0);
    await e.close();
    const old = without(
      store,
      'clearAll',
      'getOperation',
      'activeGrant',
      'chargeBudget',
      'readBudget',
      'countActiveBeliefs',
      'recordAccess',
    );
    const plain = engine(old);
    const err = await rejects(plain.clearAll(), CapabilityError);
    expect(err.message).toContain(store.name);
    await rejects(
      plain.remember(scope, { kind: 'fact', attribute: 'a', value: 'b' }, { key: 'k' }),
      CapabilityError,
    );
    // Recall works and counts nothing on a store without access counts.
    await plain.recall(scope, 'a');
    expect((await rejects(plain.usage(scope), CapabilityError)).message).toContain(store.name);
    await plain.close();
    expect(() => engine(old, { config: { requireCaptureGrant: true } })).toThrow(/capture grants/);
    expect(() => engine(old, { config: { budgets: { llmCallsPerUser: 5 } } })).toThrow(CapabilityError);
    expect(() => engine(old, { config: { budgets: { maxActiveBeliefsPerUser: 5 } } })).toThrow(
      CapabilityError,
    );
  });
}

/** The estimated tokens of listed beliefs' statements, episodes left out: UTF-8 bytes / 4, rounded up. */
function statementTokens(page: { readonly items: readonly Belief[] }): number {
  const bytes = page.items
    .filter((b) => b.kind !== 'episode')
    .reduce((n, b) => n + new TextEncoder().encode(b.statement).length, 0);
  return Math.ceil(bytes / 4);
}

/**
 * At a full result capacity (the user holds `a` and `b`): `remember` is refused, a new turn's extraction waits with
 * `error` in `lastError`, and once `a` is forgotten the waiting turn is extracted at the next retry.
 */
async function capacityWaitsUntilFreed(
  e: MemoryEngine,
  store: EngineStore,
  scope: Scope,
  time: ReturnType<typeof manualClock>,
  error: RegExp,
): Promise<void> {
  await rejects(e.remember(scope, { kind: 'fact', attribute: 'c', value: '3' }), BudgetExceededError);
  await e.accept([userTurn(scope, 's2', 0, 'd=4')]);
  await e.flush(scope);
  expect(e.lastError(scope)).toMatch(error);
  expect((await store.backlog({ now: time.clock().toISOString(), userId: scope.userId })).queued).toBe(1);
  const [first] = (await e.list(scope)).items.filter((x) => x.attribute === 'a');
  await e.forget(scope, first!.id);
  time.set('2026-01-01T00:01:01.000Z');
  await e.flush(scope);
  expect((await e.list(scope)).items.map((x) => [x.attribute, x.value])).toContainEqual(['d', '4']);
}
