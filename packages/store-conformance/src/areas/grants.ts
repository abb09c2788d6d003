/**
 * Capture grants bound to what they captured, on the store under test: the store ports (grant keys and host ids,
 * the grant id of beliefs and outbox entries, claims that never mix grants, `drop`, reads that leave out the beliefs of
 * given grants), and the engine's rules on them (a keyed grant replays or conflicts; turns accepted under a grant carry
 * it to the beliefs and episodes made from them; once the grant is revoked or has expired its queued turns are
 * dropped, its pending beliefs cannot be approved, and what it captured leaves recall, the block and `list`, while
 * `history`, `get` and the audit log keep the records).
 */
import {
  type Belief,
  CaptureGrantEndedError,
  DuplicateOperationError,
  type EngineEvent,
  type Extractor,
  type FullStore,
  InvalidInputError,
  OperationConflictError,
  StoreError,
} from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import {
  ALL_STATUSES,
  AT,
  belief,
  engine,
  FAR_FUTURE,
  grant,
  hitIds,
  ids,
  insertAll,
  listAll,
  manualClock,
  rejects,
  storeAndUser,
  t,
  turn,
  unique,
  userTurn,
  vec,
} from '../fixtures.js';

const LEASE = 60_000;

const claimOf = (store: FullStore, userId: string, now: string, maxEntries = 10) =>
  store.claim({ worker: 'w', leaseMs: LEASE, now, userId, maxEntries });

/** The belief `b` as captured under `grantId`. */
const under = (b: Belief, grantId: string): Belief => ({ ...b, grantId });

export function grantBindingTests(ctx: SuiteContext): void {
  ctx.test(
    'a grant keeps its key and host ids; a key is unique among the grants of its scope only',
    async () => {
      const store = await ctx.open();
      const scope = { userId: unique('user-'), namespace: '' };
      const work = { userId: scope.userId, namespace: 'work' };
      const other = { userId: unique('user-') };
      const keyed = grant(scope, {
        key: 'consent-1',
        policyId: 'privacy-v3',
        principalId: 'user:42',
        decisionId: 'dec-9',
      });
      const plain = grant(scope, { grantedAt: t(11) });
      await store.recordGrant(keyed);
      await store.recordGrant(plain);
      // Absent references stay absent (as grants recorded before they existed read back).
      expect(await store.listGrants(scope)).toEqual([keyed, plain]);
      expect(await store.activeGrant(scope, t(12))).toEqual(plain);
      await store.revokeGrants(scope, { at: t(13), id: plain.id });
      expect(await store.activeGrant(scope, t(14))).toEqual(keyed);
      // Another grant of the scope under the same key is refused, writing nothing; other scopes have their own keys.
      const again = grant(scope, { key: 'consent-1', grantedAt: t(20) });
      await rejects(store.recordGrant(again), DuplicateOperationError);
      expect(ids(await store.listGrants(scope))).toEqual([keyed.id, plain.id]);
      // A repeated id is still a StoreError, key or not.
      await rejects(store.recordGrant({ ...keyed }), StoreError);
      for (const s of [work, { ...other, namespace: '' }]) {
        const g = grant(s, { key: 'consent-1' });
        await store.recordGrant(g);
        expect(await store.listGrants(s)).toEqual([g]);
      }
      for (const bad of [
        grant(scope, { key: '' }),
        grant(scope, { policyId: 'x'.repeat(257) }),
        grant(scope, { principalId: 'a\u0000b' }),
        grant(scope, { decisionId: 42 as never }),
      ]) {
        await rejects(store.recordGrant(bad), InvalidInputError);
      }
      expect(await store.listGrants(scope)).toHaveLength(2);
    },
  );

  ctx.test('a belief keeps its grant id through commit, reads, import and forget', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const a = under(belief(scope, { value: 'Lisbon', statement: 'The user lives in Lisbon.' }), 'g-1');
    const plain = belief(scope);
    await insertAll(store, scope, [a, plain]);
    expect(await store.get(scope, a.id)).toEqual(a);
    expect(await store.get(scope, plain.id)).not.toHaveProperty('grantId');
    expect((await store.history(scope)).find((b) => b.id === a.id)).toEqual(a);
    expect((await store.list(scope)).items.find((b) => b.id === a.id)).toEqual(a);
    // Import restores it verbatim.
    const other = { userId: unique('user-') };
    const imported = under(belief(other), 'g-2');
    await store.importBeliefs([{ belief: imported }]);
    expect(await store.get(other, imported.id)).toEqual(imported);
    // The tombstone keeps the id (not content), so the audit trail still names the grant.
    const tomb = await store.forget(scope, a.id, { at: t(5) });
    expect(tomb.grantId).toBe('g-1');
    expect(JSON.stringify(tomb)).not.toContain('Lisbon');
    await rejects(
      store.commit({ scope, inserts: [{ belief: under(belief(scope), '') }], updates: [], audit: [] }),
      InvalidInputError,
    );
  });

  ctx.test(
    'list and both searches leave out the beliefs of the grants they are given, as the store ranks',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      // Many hidden matches rank above the one visible match: the filter is the store's, so it still comes back.
      const hidden = Array.from({ length: 12 }, (_, i) =>
        under(
          belief(scope, { value: `harbour ${i}`, statement: `The user sails the harbour harbour ${i}.` }),
          i % 2 === 0 ? 'g-ended' : 'g-revoked',
        ),
      );
      const visible = belief(scope, { value: 'a harbour', statement: 'The user once saw a harbour.' });
      const kept = under(belief(scope, { value: 'harbour view', statement: 'A harbour view.' }), 'g-live');
      const pending = under(belief(scope, { status: 'pending', value: 'harbour pending' }), 'g-ended');
      await insertAll(store, scope, [
        ...hidden.map((b) => ({ belief: b, embedding: vec(1, 0, 0, 0) })),
        { belief: visible, embedding: vec(0.9, 0.1, 0, 0) },
        { belief: kept, embedding: vec(0.8, 0.2, 0, 0) },
        { belief: pending, embedding: vec(1, 0, 0, 0) },
      ]);
      const excludeGrants = ['g-ended', 'g-revoked'];
      const lexical = await store.searchLexical(scope, 'harbour', { limit: 2, excludeGrants });
      expect(hitIds(lexical).sort()).toEqual([visible.id, kept.id].sort());
      expect(hitIds(await store.searchLexical(scope, 'harbour', { limit: 20 }))).toHaveLength(14);
      if (store.capabilities.vectorSearch !== 'none') {
        const vector = await store.searchVector(scope, vec(1, 0, 0, 0), { limit: 2, excludeGrants });
        expect(hitIds(vector)).toEqual([visible.id, kept.id]);
      }
      // Paged as usual over what is left: the newest first.
      const page = await store.list(scope, { statuses: ALL_STATUSES, limit: 1, excludeGrants });
      expect(ids(page.items)).toEqual([kept.id]);
      const rest = await store.list(scope, {
        statuses: ALL_STATUSES,
        limit: 5,
        excludeGrants,
        cursor: page.nextCursor,
      });
      expect(rest).toEqual({ items: [visible], nextCursor: null });
      // Without exclusions everything is there; an empty list excludes nothing.
      expect(await listAll(store, scope)).toHaveLength(15);
      expect((await store.list(scope, { excludeGrants: [] })).items).toHaveLength(14);
      for (const bad of ['g', [''], [7]]) {
        await rejects(store.list(scope, { excludeGrants: bad as never }), InvalidInputError);
        await rejects(
          store.searchLexical(scope, 'harbour', { limit: 2, excludeGrants: bad as never }),
          InvalidInputError,
        );
      }
    },
  );

  ctx.test('turns keep their grant id; a claim never mixes grants (nor a grant with none)', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    await store.enqueue([
      { ...turn(scope, s, 0, 'a'), grantId: 'g-1' },
      { ...turn(scope, s, 1, 'b'), grantId: 'g-1' },
      { ...turn(scope, s, 2, 'c'), grantId: 'g-2' },
      turn(scope, s, 3, 'd'),
    ]);
    const sessionId = unique('s-');
    await store.appendItems(
      scope,
      sessionId,
      [
        { role: 'user', content: 'e' },
        { role: 'user', content: 'f' },
      ],
      {
        enqueue: [
          { index: 0, role: 'user', text: 'e', at: t(4) },
          { index: 1, role: 'user', text: 'f', at: t(5), grantId: 'g-3' },
        ],
      },
    );
    const batches: [string | undefined, string[]][] = [];
    for (let i = 0; i < 6; i++) {
      const c = await claimOf(store, scope.userId, t(10));
      if (!c) break;
      batches.push([c.entries[0]?.grantId, c.entries.map((e) => e.text)]);
      for (const e of c.entries) expect(e.grantId).toBe(c.entries[0]?.grantId);
      await store.commit({
        scope,
        inserts: [],
        updates: [],
        audit: [],
        complete: { claimId: c.claimId, entryIds: c.entries.map((e) => e.id) },
      });
    }
    expect(batches).toEqual([
      ['g-1', ['a', 'b']],
      ['g-2', ['c']],
      [undefined, ['d', 'e']],
      ['g-3', ['f']],
    ]);
    await rejects(store.enqueue([{ ...turn(scope, s, 9, 'x'), grantId: '' }]), InvalidInputError);
  });

  ctx.test(
    'drop sets the claim’s entries dead at once, and they no longer block the user; a lost claim is kept',
    async () => {
      const [store, scope] = await storeAndUser(ctx);
      const s = unique('s-');
      await store.enqueue([
        { ...turn(scope, s, 0, 'revoked one'), grantId: 'g-1' },
        { ...turn(scope, s, 1, 'revoked two'), grantId: 'g-1' },
        turn(scope, s, 2, 'fine'),
      ]);
      const c = (await claimOf(store, scope.userId, t(0)))!;
      expect(c.entries.map((e) => e.text)).toEqual(['revoked one', 'revoked two']);
      await store.drop(c, { reason: 'capture grant g-1 was revoked' });
      expect(await store.backlog({ now: t(1), userId: scope.userId })).toEqual({
        queued: 1,
        claimed: 0,
        dead: 2,
        staleLeases: 0,
        nextClaimableAt: null,
      });
      const next = (await claimOf(store, scope.userId, t(1)))!;
      expect(next.entries.map((e) => [e.text, e.attempts])).toEqual([['fine', 0]]);
      // Dropping again (the claim is gone) changes nothing; nor does dropping a claim another worker took over.
      await store.drop(c, { reason: 'again' });
      const taken = (await claimOf(store, scope.userId, FAR_FUTURE))!;
      await store.drop(next, { reason: 'too late' });
      expect(await store.backlog({ now: t(2), userId: scope.userId })).toMatchObject({ claimed: 1, dead: 2 });
      await store.commit({
        scope,
        inserts: [],
        updates: [],
        audit: [],
        complete: { claimId: taken.claimId, entryIds: taken.entries.map((e) => e.id) },
      });
      // A dropped turn's key still counts: it is not accepted again.
      expect(await store.enqueue([turn(scope, s, 0, 'revoked one')])).toEqual({ accepted: 0, duplicates: 1 });
      await rejects(store.drop(next, { reason: '' }), InvalidInputError);
    },
  );
}

// ---------------------------------------------------------------- the engine's rules on the store

/** An extractor that holds its first call until `open()`; `entered` resolves once that call has started. */
function gatedExtractor(inner: Extractor = new KeyValueExtractor()) {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const started = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let first = true;
  const candidates: string[][] = [];
  const extractor: Extractor = {
    name: 'gated',
    async extract(request) {
      candidates.push(request.candidates.map((c) => c.id));
      if (first) {
        first = false;
        entered();
        await gate;
      }
      return inner.extract(request);
    },
  };
  return { extractor, open, entered: started, candidates };
}

const values = (hits: readonly { belief: Belief }[]) => hits.map((h) => h.belief.value).sort();

export function grantEngineTests(ctx: SuiteContext): void {
  ctx.test(
    'grantCapture: a key replays the recorded grant or conflicts; host ids are kept and checked',
    async () => {
      const store = await ctx.open();
      const time = manualClock(AT);
      const e = engine(store, { clock: time.clock });
      const scope = { userId: unique('grant-') };
      const options = {
        intent: 'Remember preferences',
        key: 'consent-7',
        policyId: 'policy-2026-01',
        principalId: 'user:7',
        decisionId: 'decision-7',
        expiresAt: '2026-01-02T00:00:00.000Z',
      };
      const first = await e.grantCapture(scope, options);
      expect(first).toMatchObject({
        key: 'consent-7',
        policyId: 'policy-2026-01',
        principalId: 'user:7',
        decisionId: 'decision-7',
        grantedAt: AT,
        expiresAt: '2026-01-02T00:00:00.000Z',
        revokedAt: null,
      });
      time.set('2026-01-01T00:05:00.000Z');
      expect(await e.grantCapture(scope, options)).toEqual(first);
      // The same key with anything else changed is a conflict and records nothing.
      for (const changed of [
        { intent: 'Remember everything' },
        { policyId: 'policy-2026-02' },
        { principalId: undefined },
        { decisionId: 'decision-8' },
        { expiresAt: null },
      ]) {
        await rejects(e.grantCapture(scope, { ...options, ...changed }), OperationConflictError);
      }
      // Revoked or expired, the key still names that grant: a retry returns it as it is now.
      await e.revokeCapture(scope, { id: first.id });
      time.set('2026-01-03T00:00:00.000Z');
      expect(await e.grantCapture(scope, options)).toEqual({
        ...first,
        revokedAt: '2026-01-01T00:05:00.000Z',
      });
      expect(await e.captureGrants(scope)).toHaveLength(1);
      // Another user's identical key is its own grant.
      const bob = { userId: unique('grant-') };
      expect((await e.grantCapture(bob, { ...options, expiresAt: null })).id).not.toBe(first.id);
      for (const bad of [
        { key: '' },
        { policyId: '' },
        { principalId: 'x'.repeat(257) },
        { decisionId: 5 as never },
      ]) {
        await rejects(e.grantCapture(scope, { intent: 'x', ...bad }), InvalidInputError);
      }
      expect(await e.captureGrants(scope)).toHaveLength(1);
      // Without a key, grants are recorded as before (no key, no ids).
      const plain = await e.grantCapture(scope, { intent: 'Remember preferences' });
      expect(plain).not.toHaveProperty('key');
      expect(plain).not.toHaveProperty('policyId');
      await e.close();
    },
  );

  ctx.test(
    'a revoked grant: its queued turns are dropped unextracted, and what it captured leaves recall, the block and list, kept for audit',
    async () => {
      const store = await ctx.open();
      const gated = gatedExtractor();
      const e = engine(store, { extractor: gated.extractor, config: { episodic: true } });
      const events: EngineEvent[] = [];
      e.on((ev) => events.push(ev));
      const scope = { userId: unique('grant-') };
      const g1 = await e.grantCapture(scope, { intent: 'memory', key: 'g1' });
      await e.accept([
        userTurn(scope, 's1', 0, 'city=Oslo'),
        userTurn(scope, 's1', 1, 'pet=cat'),
        userTurn(scope, 's1', 2, 'car=Volvo'),
      ]);
      // The first turn is being extracted; the other two wait in the outbox.
      await gated.entered;
      expect(await e.revokeCapture(scope, { id: g1.id })).toBe(1);
      gated.open();
      await e.flush(scope);
      // The turn in flight committed under its grant; the two queued ones were dropped, with ids only as the reason.
      const history = await e.history(scope);
      expect(history.map((b) => [b.kind, b.value]).sort()).toEqual([
        ['episode', 'city=Oslo'],
        ['fact', 'Oslo'],
      ]);
      for (const b of history) expect(b.grantId).toBe(g1.id);
      expect(await store.backlog({ now: new Date().toISOString(), userId: scope.userId })).toMatchObject({
        queued: 0,
        claimed: 0,
        dead: 2,
      });
      const dropped = events.filter((ev) => ev.type === 'dropped');
      expect(
        dropped.map((ev) => ev.type === 'dropped' && ev.turns).reduce((a, b) => Number(a) + Number(b), 0),
      ).toBe(2);
      for (const ev of dropped) {
        expect(JSON.stringify(ev)).toContain(g1.id);
        expect(JSON.stringify(ev)).not.toMatch(/cat|Volvo/);
      }
      expect(e.stats().turnsDropped).toBe(2);
      // Hidden from every read of current memory: recall, the block (by query and by id), list.
      expect(await e.recall(scope, 'city Oslo')).toEqual([]);
      expect(await e.recall(scope, '')).toEqual([]);
      const block = await e.context(scope, 'Oslo');
      expect(block.text).not.toContain('Oslo');
      const oslo = history.find((b) => b.kind === 'fact')!;
      const chosen = await e.context(scope, { ids: [oslo.id] });
      expect(chosen.skipped).toEqual([{ id: oslo.id, reason: 'not_active' }]);
      expect((await e.list(scope, { statuses: [...ALL_STATUSES] })).items).toEqual([]);
      // Kept for audit: get, history and the content-free audit log still show the records.
      expect(await e.get(scope, oslo.id)).toEqual(oslo);
      expect((await store.auditLog(scope)).map((a) => a.beliefId)).toContain(oslo.id);
      // A new grant captures again; the same value observed under it supersedes the hidden belief and is recalled.
      const g2 = await e.grantCapture(scope, { intent: 'memory' });
      await e.accept([userTurn(scope, 's2', 0, 'city=Oslo')]);
      await e.flush(scope);
      // The extractor was not offered the hidden belief as a candidate to confirm.
      expect(gated.candidates.at(-1)).not.toContain(oslo.id);
      const recalled = (await e.recall(scope, 'city Oslo')).filter((r) => r.belief.kind === 'fact');
      expect(recalled.map((r) => [r.belief.value, r.belief.grantId])).toEqual([['Oslo', g2.id]]);
      expect((await e.get(scope, oslo.id))?.status).toBe('superseded');
      await e.close();
    },
  );

  ctx.test(
    'an expired grant (by the engine clock) hides what it captured, and its pending beliefs cannot be approved',
    async () => {
      const store = await ctx.open();
      const time = manualClock(AT);
      const e = engine(store, {
        clock: time.clock,
        extractor: new KeyValueExtractor({ confidence: 0.3 }),
        config: { requireCaptureGrant: true },
      });
      const scope = { userId: unique('grant-'), namespace: 'app' };
      const g = await e.grantCapture(scope, { intent: 'memory', expiresAt: '2026-01-01T01:00:00.000Z' });
      await e.accept([userTurn(scope, 's1', 0, 'diet=vegan')]);
      await e.flush(scope);
      const sure = await e.remember(scope, { kind: 'fact', attribute: 'home', value: 'Bergen' });
      expect(sure.grantId).toBe(g.id);
      const [pending] = (await e.list(scope, { statuses: ['pending'] })).items;
      expect(pending).toMatchObject({ value: 'vegan', grantId: g.id });
      expect(values(await e.recall(scope, 'home Bergen'))).toEqual(['Bergen']);
      time.set('2026-01-01T01:00:00.000Z');
      const err = await rejects(e.approve(scope, pending!.id), CaptureGrantEndedError);
      expect(err).toMatchObject({ beliefId: pending!.id, grantId: g.id, ended: 'expired' });
      expect(err.message).not.toContain('vegan');
      expect((await e.get(scope, pending!.id))?.status).toBe('pending');
      expect(await e.recall(scope, 'home Bergen')).toEqual([]);
      expect((await e.list(scope, { statuses: ['active', 'pending'] })).items).toEqual([]);
      // Rejecting, correcting and forgetting stay possible (a correction is the user's own and carries no grant).
      expect((await e.reject(scope, pending!.id)).status).toBe('retracted');
      const fixed = await e.correct(scope, sure.id, 'Tromso');
      expect([fixed.value, fixed.grantId, fixed.supersedes]).toEqual(['Tromso', undefined, sure.id]);
      expect(values(await e.recall(scope, 'home Tromso Bergen'))).toEqual(['Tromso']);
      expect((await e.forget(scope, sure.id)).status).toBe('forgotten');
      // Under a new grant, the same approval path works again for what it captures.
      const g2 = await e.grantCapture(scope, { intent: 'memory' });
      await e.accept([userTurn(scope, 's2', 0, 'diet=raw')]);
      await e.flush(scope);
      const [fresh] = (await e.list(scope, { statuses: ['pending'] })).items;
      expect(fresh?.grantId).toBe(g2.id);
      expect((await e.approve(scope, fresh!.id)).status).toBe('active');
      await e.close();
    },
  );

  ctx.test(
    'captures bind to the active grant also when grants are not required; without one they bind to none',
    async () => {
      const store = await ctx.open();
      const e = engine(store, { config: { episodic: true } });
      const scope = { userId: unique('grant-') };
      const before = await e.remember(scope, { kind: 'fact', attribute: 'a', value: 'walrus' });
      expect(before).not.toHaveProperty('grantId');
      const g = await e.grantCapture(scope, { intent: 'memory' });
      await e.appendTranscript(scope, 's1', [{ role: 'user', content: 'b=pelican' }], {
        turns: [{ index: 0, role: 'user', text: 'b=pelican', at: AT }],
      });
      await e.flush(scope);
      const after = (await e.history(scope)).filter((b) => b.id !== before.id);
      expect(after.map((b) => [b.kind, b.grantId]).sort()).toEqual([
        ['episode', g.id],
        ['fact', g.id],
      ]);
      await e.revokeCapture(scope);
      // What was captured before any grant stays; what the revoked grant captured is gone from recall.
      expect(values(await e.recall(scope, 'walrus pelican'))).toEqual(['walrus']);
      // With no grant active and none required, capture goes on, bound to none.
      const later = await e.remember(scope, { kind: 'fact', attribute: 'c', value: 'narwhal' });
      expect(later).not.toHaveProperty('grantId');
      expect(values(await e.recall(scope, 'walrus pelican narwhal'))).toEqual(['narwhal', 'walrus']);
      await e.close();
    },
  );
}
