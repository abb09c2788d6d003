import { type Belief, type BeliefStatus, InvalidInputError, type Scope } from '@mem01/engine';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { ALL_STATUSES, belief, ids, listAll, rejects, storeAndUser, t, vec } from '../fixtures.js';

/** Ids that break naive stores: LIKE wildcards, quotes, case and space variants, separators, prefixes, unicode. */
const HOSTILE_IDS = [
  'u',
  'U',
  'u%',
  'u_',
  '%',
  '_',
  'u ',
  ' u',
  "u' OR '1'='1",
  'u"; DROP TABLE beliefs; --',
  'a',
  'a:b',
  'a\\',
  '*',
  'null',
  '["a","b"]',
  'ü',
  'u\u0301',
  '🙂',
  'NEAR(u)',
] as const;
const HOSTILE_NAMESPACES = [undefined, '', 'b', 'b:c', 'c', 'x%', 'X%', 'null', ' ', '🙂'] as const;

const validId = (s: string) => s.trim().length > 0 && !/[\u0000-\u001f\u007f]/.test(s);
const userIdArb = fc.oneof(
  fc.constantFrom(...HOSTILE_IDS),
  fc.string({ minLength: 1, maxLength: 10, unit: 'grapheme' }).filter(validId),
);
const namespaceArb = fc.oneof(
  fc.constantFrom(...HOSTILE_NAMESPACES),
  fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme' }).filter(validId),
);
const scopeArb = fc
  .record({ userId: userIdArb, namespace: namespaceArb })
  .map((s): Scope => (s.namespace === undefined || s.namespace === ' ' ? { userId: s.userId } : s));

const VOCAB = ['heron', 'lantern', 'quartz', 'meadow'] as const;
const writeArb = fc.record({
  scope: fc.nat(),
  word: fc.constantFrom(...VOCAB),
  status: fc.constantFrom<BeliefStatus>('active', 'pending', 'retracted'),
  embedded: fc.boolean(),
  turn: fc.boolean(),
});

const keyOf = (s: Scope) => JSON.stringify([s.userId, s.namespace ?? '']);

export function isolationTests(ctx: SuiteContext): void {
  ctx.test('property: nothing written in one scope is returned from another', async () => {
    const store = await ctx.open();
    const vectors = store.capabilities.vectorSearch !== 'none';
    /** Every belief ever written, by scope key, across runs. */
    const model = new Map<string, Map<string, Belief>>();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(scopeArb, { minLength: 2, maxLength: 4, selector: keyOf }),
        fc.array(writeArb, { minLength: 1, maxLength: 8 }),
        async (scopes, writes) => {
          run += 1;
          const written: Belief[] = [];
          for (const [i, w] of writes.entries()) {
            const scope = scopes[w.scope % scopes.length]!;
            const b = belief(scope, {
              attribute: `attr_${run}_${i}`,
              value: w.word,
              statement: `The user mentioned ${w.word} ${VOCAB[(i + 1) % VOCAB.length]}.`,
              status: w.status,
              at: t(run),
            });
            await store.commit({
              scope,
              inserts: [{ belief: b, embedding: w.embedded ? vec(1, i % 3, 0, 1) : null }],
              updates: [],
              audit: [{ at: t(run), scope, beliefId: b.id, action: 'add', actor: 'prop' }],
            });
            if (w.turn) {
              await store.appendItems(scope, `prop-${run}-${i}`, [{ text: keyOf(scope) }], {
                enqueue: [{ index: 0, role: 'user', text: keyOf(scope), at: t(run) }],
              });
            }
            const mine = model.get(keyOf(scope)) ?? new Map<string, Belief>();
            mine.set(b.id, b);
            model.set(keyOf(scope), mine);
            written.push(b);
          }
          const keys = written.map((b) => ({ subject: b.subject, attribute: b.attribute }));
          for (const scope of scopes) {
            const own = model.get(keyOf(scope)) ?? new Map<string, Belief>();
            const ownIds = [...own.keys()].sort();
            const inScope = (id: string) => own.has(id);
            const listed = await listAll(store, scope);
            expect(ids(listed).sort()).toEqual(ownIds);
            for (const b of listed) expect(keyOf(b.scope)).toBe(keyOf(scope));
            expect(ids(await store.history(scope)).sort()).toEqual(ownIds);
            const lexical = await store.searchLexical(scope, VOCAB.join(' '), {
              limit: 1000,
              statuses: ALL_STATUSES,
            });
            for (const h of lexical) expect(inScope(h.belief.id)).toBe(true);
            expect(lexical.length).toBe(own.size);
            if (vectors) {
              const hits = await store.searchVector(scope, vec(1, 1, 0, 1), {
                limit: 1000,
                statuses: ALL_STATUSES,
              });
              for (const h of hits) expect(inScope(h.belief.id)).toBe(true);
            }
            for (const b of await store.getActiveByKeys(scope, keys)) expect(inScope(b.id)).toBe(true);
            for (const b of written) {
              const got = await store.get(scope, b.id);
              if (inScope(b.id)) expect(got).toEqual(own.get(b.id));
              else expect(got).toBeNull();
            }
            for (const a of await store.auditLog(scope)) expect(inScope(a.beliefId!)).toBe(true);
            const claim = await store.claim({
              worker: 'prop',
              leaseMs: 1000,
              now: t(run),
              userId: scope.userId,
              maxEntries: 1000,
            });
            if (claim) {
              expect(claim.scope.userId).toBe(scope.userId);
              for (const e of claim.entries) {
                expect(e.scope.userId).toBe(scope.userId);
                expect(e.text).toBe(keyOf(e.scope));
                expect(keyOf(e.scope)).toBe(keyOf(claim.scope));
              }
              await store.release(claim, { retryAt: t(run), reason: 'property' });
            }
          }
          for (const summary of await store.listScopes()) {
            const own = model.get(keyOf(summary.scope));
            expect(own, `listed scope ${keyOf(summary.scope)}`).toBeDefined();
            const total = Object.values(summary.counts).reduce((n, c) => n + c, 0);
            expect(total).toBe(own!.size);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  ctx.test('bad belief input is refused with InvalidInputError and writes nothing', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const good = belief(scope);
    const bad: [string, unknown][] = [
      ['empty userId', { ...good, scope: { userId: '' } }],
      ['blank userId', { ...good, scope: { userId: '   ' } }],
      ['numeric userId', { ...good, scope: { userId: 42 } }],
      ['NaN confidence', { ...good, confidence: Number.NaN }],
      ['confidence > 1', { ...good, confidence: 1.5 }],
      ['unknown kind', { ...good, kind: 'opinion' }],
      ['unknown status', { ...good, status: 'archived' }],
      ['numeric statement', { ...good, statement: 12 }],
      ['missing value', { ...good, value: undefined }],
      ['empty attribute', { ...good, attribute: '' }],
      ['evidence not an array', { ...good, evidence: 'quote' }],
      ['version 0', { ...good, version: 0 }],
      ['bad storedAt', { ...good, storedAt: 'yesterday' }],
    ];
    for (const [what, b] of bad) {
      const err = await rejects(
        store.commit({ scope, inserts: [{ belief: b as Belief }], updates: [], audit: [] }),
        InvalidInputError,
      );
      expect(err.message.length, what).toBeGreaterThan(0);
    }
    for (const badScope of [{ userId: '' }, { userId: 7 }, null, 'user', { userId: 'u', namespace: 3 }]) {
      await rejects(
        store.commit({ scope: badScope as never, inserts: [{ belief: good }], updates: [], audit: [] }),
        InvalidInputError,
      );
      await rejects(store.get(badScope as never, good.id), InvalidInputError);
      await rejects(store.list(badScope as never), InvalidInputError);
      await rejects(store.searchLexical(badScope as never, 'x', { limit: 5 }), InvalidInputError);
      await rejects(store.history(badScope as never), InvalidInputError);
      await rejects(store.auditLog(badScope as never), InvalidInputError);
      await rejects(store.eraseScope(badScope as never), InvalidInputError);
    }
    await rejects(
      store.commit({
        scope,
        inserts: [],
        updates: [{ id: good.id, expectedVersion: 1, set: { confidence: Number.NaN, updatedAt: t(1) } }],
        audit: [],
      }),
      InvalidInputError,
    );
    await rejects(store.searchLexical(scope, 42 as never, { limit: 5 }), InvalidInputError);
    await rejects(store.eraseUser(''), InvalidInputError);
    await rejects(store.forget(scope, good.id, { at: 'not a time' }), InvalidInputError);
    expect(await store.listScopes()).toEqual([]);
    expect(await listAll(store, scope)).toEqual([]);
    await store.commit({ scope, inserts: [{ belief: good }], updates: [], audit: [] });
    expect(await store.get(scope, good.id)).toEqual(good);
  });
}
