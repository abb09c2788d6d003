import { type FullStore, InvalidInputError, LeaseLostError, type Scope } from '@mem01/engine';
import { idempotencyKey, MAX_POSITION } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import {
  belief,
  completeOnly,
  completing,
  FAR_FUTURE,
  inserts,
  rejects,
  storeAndUser,
  t,
  turn,
  unique,
} from '../fixtures.js';
import { exitedProcess, liveProcess, predecessorProcess, remoteProcess, thisProcess } from '../processes.js';

const LEASE = 60_000;
const EMPTY_BACKLOG = { queued: 0, claimed: 0, dead: 0, staleLeases: 0, nextClaimableAt: null };

async function claimOf(store: FullStore, userId: string | undefined, now: string, extra: object = {}) {
  return store.claim({
    worker: 'w',
    leaseMs: LEASE,
    now,
    ...(userId === undefined ? {} : { userId }),
    ...extra,
  });
}

export function outboxTests(ctx: SuiteContext): void {
  ctx.test('enqueue is idempotent on session + position + text', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    const batch = [turn(scope, s, 0, 'I live in Lima'), turn(scope, s, 1, 'I like tea')];
    expect(await store.enqueue(batch)).toEqual({ accepted: 2, duplicates: 0 });
    expect(await store.enqueue(batch)).toEqual({ accepted: 0, duplicates: 2 });
    // Same position, different text: a different turn. A repeat inside one batch is a duplicate.
    const changed = turn(scope, s, 1, 'I like coffee');
    expect(await store.enqueue([changed, changed, turn(scope, s, 2, 'x')])).toEqual({
      accepted: 2,
      duplicates: 1,
    });
    expect(await store.enqueue([])).toEqual({ accepted: 0, duplicates: 0 });
    const claim = await claimOf(store, scope.userId, t(10), { maxEntries: 10 });
    expect(claim?.entries.map((e) => [e.position, e.text])).toEqual([
      [0, 'I live in Lima'],
      [1, 'I like tea'],
      [1, 'I like coffee'],
      [2, 'x'],
    ]);
    const first = claim!.entries[0]!;
    expect(first).toMatchObject({
      scope: { userId: scope.userId },
      sessionId: s,
      role: 'user',
      at: t(0),
      attempts: 0,
      status: 'claimed',
      lastError: null,
      idempotencyKey: idempotencyKey(s, 0, 'I live in Lima'),
    });
    const seqs = claim!.entries.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(4);
  });

  ctx.test('claim hands out the oldest accepted user first, one claim per user in flight', async () => {
    const [store, u1] = await storeAndUser(ctx);
    const u2 = { userId: unique('user-') };
    const u3 = { userId: unique('user-') };
    await store.enqueue([turn(u1, 'a', 0, 'u1 first')]);
    await store.enqueue([turn(u2, 'b', 0, 'u2 first')]);
    await store.enqueue([turn(u1, 'a', 1, 'u1 second'), turn(u3, 'c', 0, 'u3 first')]);
    const c1 = await claimOf(store, undefined, t(1));
    expect(c1).toMatchObject({ worker: 'w', scope: { userId: u1.userId }, leaseUntil: t(61) });
    expect(c1!.entries.map((e) => e.text)).toEqual(['u1 first']);
    expect(typeof c1!.claimId).toBe('string');
    // u1 is in flight: neither a user-specific nor a general claim returns u1's later entry.
    expect(await claimOf(store, u1.userId, t(2))).toBeNull();
    const c2 = await claimOf(store, undefined, t(2));
    expect(c2!.entries.map((e) => e.text)).toEqual(['u2 first']);
    const c3 = await claimOf(store, u3.userId, t(2));
    expect(c3!.entries.map((e) => e.text)).toEqual(['u3 first']);
    expect(await claimOf(store, undefined, t(3))).toBeNull();
    expect(await claimOf(store, unique('nobody-'), t(3))).toBeNull();
    // Completing u1's claim lets its next entry go.
    await store.commit(completeOnly(u1, c1!));
    expect((await claimOf(store, undefined, t(4)))!.entries.map((e) => e.text)).toEqual(['u1 second']);
  });

  ctx.test('claim batches by maxEntries and maxChars, within one scope', async () => {
    const store = await ctx.open();
    const user = unique('user-');
    const home = { userId: user };
    const work = { userId: user, namespace: 'work' };
    const s = unique('s-');
    await store.enqueue([
      turn(home, s, 0, 'aaaaaaaaaa'),
      turn(home, s, 1, 'bbbbbbbbbb'),
      turn(home, s, 2, 'cccccccccc'),
      turn(home, s, 3, 'dddddddddd'),
      turn(work, unique('s-'), 0, 'work entry'),
      turn(home, s, 4, 'eeeeeeeeee'),
    ]);
    const texts = (c: { entries: readonly { text: string }[] } | null) => c?.entries.map((e) => e.text[0]);
    const release = async (c: Parameters<FullStore['release']>[0] | null, now: string) =>
      store.release(c!, { retryAt: now, reason: 'test' });
    let c = await claimOf(store, user, t(1));
    expect(texts(c)).toEqual(['a']);
    await release(c, t(1));
    c = await claimOf(store, user, t(1), { maxEntries: 3 });
    expect(texts(c)).toEqual(['a', 'b', 'c']);
    await release(c, t(1));
    c = await claimOf(store, user, t(1), { maxEntries: 10, maxChars: 25 });
    expect(texts(c)).toEqual(['a', 'b']);
    await release(c, t(1));
    c = await claimOf(store, user, t(1), { maxEntries: 10, maxChars: 5 });
    expect(texts(c)).toEqual(['a']);
    await release(c, t(1));
    // A batch never crosses into another namespace.
    c = await claimOf(store, user, t(1), { maxEntries: 10 });
    expect(texts(c)).toEqual(['a', 'b', 'c', 'd']);
    expect(c!.scope.namespace ?? '').toBe('');
  });

  ctx.test('an expired lease is taken over and the old claim can no longer commit', async () => {
    const [store, scope] = await storeAndUser(ctx);
    await store.enqueue([turn(scope, unique('s-'), 0, 'take me')]);
    const old = (await claimOf(store, scope.userId, t(0)))!;
    expect(await claimOf(store, scope.userId, t(30))).toBeNull();
    expect(await store.backlog({ now: t(30) })).toEqual({
      queued: 0,
      claimed: 1,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: t(60),
    });
    expect(await store.backlog({ now: FAR_FUTURE })).toEqual({
      queued: 0,
      claimed: 1,
      dead: 0,
      staleLeases: 1,
      nextClaimableAt: null,
    });
    const fresh = (await store.claim({
      worker: 'w2',
      leaseMs: LEASE,
      now: FAR_FUTURE,
      userId: scope.userId,
    }))!;
    expect(fresh.entries.map((e) => e.id)).toEqual(old.entries.map((e) => e.id));
    expect(fresh.claimId).not.toBe(old.claimId);
    expect(fresh.worker).toBe('w2');
    const lost = belief(scope, { value: 'from the stale worker' });
    await rejects(
      store.commit({
        ...inserts(scope, [lost]),
        complete: completing(old),
      }),
      LeaseLostError,
    );
    expect(await store.get(scope, lost.id)).toBeNull();
    expect(await store.auditLog(scope)).toEqual([]);
    // The old claim's fail and release are no-ops.
    await store.fail(old, 'late failure', { maxAttempts: 1 });
    await store.release(old, { retryAt: t(0), reason: 'late' });
    const won = belief(scope, { value: 'from the new worker' });
    await store.commit({
      ...inserts(scope, [won]),
      complete: completing(fresh),
    });
    expect(await store.get(scope, won.id)).toEqual(won);
    expect(await store.backlog({ now: FAR_FUTURE })).toEqual({
      queued: 0,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: null,
    });
  });

  ctx.test('renew extends a held lease; a claim given back or taken over cannot be renewed', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    await store.enqueue([turn(scope, s, 0, 'first'), turn(scope, s, 1, 'second')]);
    const held = (await claimOf(store, scope.userId, t(0), { maxEntries: 2 }))!;
    expect(await store.renew(held, { now: t(50), leaseMs: LEASE })).toEqual({ leaseUntil: t(110) });
    // The renewed lease holds past the first one's end.
    expect(await claimOf(store, scope.userId, t(100))).toBeNull();
    expect(await store.backlog({ now: t(100), userId: scope.userId })).toEqual({
      queued: 0,
      claimed: 2,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: t(110),
    });
    // Run out but not taken over: the claim still holds its entries and is renewed again.
    expect(await store.renew(held, { now: t(200), leaseMs: 1000 })).toEqual({ leaseUntil: t(201) });
    await rejects(store.renew(held, { now: t(200), leaseMs: 0 }), InvalidInputError);
    await rejects(store.renew(held, { now: 'yesterday', leaseMs: 1000 }), InvalidInputError);
    // Taken over after its lease ran out: renewing fails and changes nothing.
    const fresh = (await claimOf(store, scope.userId, t(300), { maxEntries: 2 }))!;
    await rejects(store.renew(held, { now: t(300), leaseMs: LEASE }), LeaseLostError);
    expect((await store.backlog({ now: t(300), userId: scope.userId })).nextClaimableAt).toBe(t(360));
    // Released, or completed by a commit: nothing left to renew.
    await store.release(fresh, { retryAt: t(300), reason: 'test' });
    await rejects(store.renew(fresh, { now: t(301), leaseMs: LEASE }), LeaseLostError);
    const last = (await claimOf(store, scope.userId, t(302), { maxEntries: 2 }))!;
    await store.commit(completeOnly(scope, last));
    await rejects(store.renew(last, { now: t(303), leaseMs: LEASE }), LeaseLostError);
    expect(await store.backlog({ now: t(303), userId: scope.userId })).toEqual(EMPTY_BACKLOG);
  });

  ctx.test('a claim of an exited process on this host is taken over at once', async (control) => {
    const store = await ctx.open();
    const crashed = await ctx.openAs(exitedProcess());
    if (!crashed) {
      expect(store.capabilities.ownerLiveness).toBe(false);
      return control.skip('no process liveness: the store lives and dies with its process');
    }
    expect(store.capabilities.ownerLiveness).toBe(true);
    const scope = { userId: unique('crashed-') };
    await store.enqueue([turn(scope, unique('s-'), 0, 'left behind')]);
    const old = (await crashed.claim({
      worker: 'crashed',
      leaseMs: LEASE,
      now: t(0),
      userId: scope.userId,
    }))!;
    expect(old).not.toBeNull();
    // Long before the lease's end, the exited holder's claim counts as stale and is taken over.
    expect(await store.backlog({ now: t(1), userId: scope.userId })).toEqual({
      queued: 0,
      claimed: 1,
      dead: 0,
      staleLeases: 1,
      nextClaimableAt: null,
    });
    const fresh = (await claimOf(store, scope.userId, t(1)))!;
    expect(fresh.entries.map((e) => e.id)).toEqual(old.entries.map((e) => e.id));
    await rejects(store.commit(completeOnly(scope, old)), LeaseLostError);
    await store.commit(completeOnly(scope, fresh));
    expect(await store.backlog({ now: t(2), userId: scope.userId })).toEqual(EMPTY_BACKLOG);
  });

  ctx.test(
    'process liveness: a predecessor with this pid is taken over; a live process, this one and another host are not',
    async (control) => {
      const store = await ctx.open();
      const cases = [
        { owner: predecessorProcess(), takenOver: true },
        { owner: liveProcess(), takenOver: false },
        { owner: thisProcess(), takenOver: false },
        { owner: remoteProcess(), takenOver: false },
      ];
      for (const { owner, takenOver } of cases) {
        const holder = await ctx.openAs(owner);
        if (!holder) return control.skip('no process liveness: the store lives and dies with its process');
        const scope = { userId: unique('holder-') };
        await store.enqueue([turn(scope, unique('s-'), 0, 'held')]);
        expect(
          await holder.claim({ worker: 'h', leaseMs: LEASE, now: t(0), userId: scope.userId }),
        ).not.toBeNull();
        const backlog = await store.backlog({ now: t(1), userId: scope.userId });
        expect({ pid: owner.pid, stale: backlog.staleLeases }).toEqual({
          pid: owner.pid,
          stale: takenOver ? 1 : 0,
        });
        const claim = await claimOf(store, scope.userId, t(1));
        expect({ pid: owner.pid, claimed: claim !== null }).toEqual({ pid: owner.pid, claimed: takenOver });
      }
    },
  );

  ctx.test('fail counts an attempt and retryAt blocks the user until then', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const other = { userId: unique('user-') };
    const s = unique('s-');
    await store.enqueue([
      turn(scope, s, 0, 'first'),
      turn(scope, s, 1, 'second'),
      turn(other, unique('s-'), 0, 'other'),
    ]);
    const c = (await claimOf(store, scope.userId, t(0)))!;
    await store.fail(c, 'extractor exploded: sk-abcdefghijklmnopqrstuvwxyz', {
      maxAttempts: 3,
      retryAt: t(60),
    });
    expect(await claimOf(store, scope.userId, t(1))).toBeNull();
    expect((await claimOf(store, undefined, t(1)))!.entries.map((e) => e.text)).toEqual(['other']);
    expect(await store.backlog({ now: t(1), userId: scope.userId })).toEqual({
      queued: 2,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: t(60),
    });
    const again = (await claimOf(store, scope.userId, t(61)))!;
    expect(again.entries.map((e) => e.text)).toEqual(['first']);
    expect(again.entries[0]).toMatchObject({ attempts: 1 });
    expect(again.entries[0]!.lastError).toContain('extractor exploded');
    expect(again.entries[0]!.lastError).not.toContain('abcdefghijklmnop');
    // Without retryAt the entry is claimable at once.
    await store.fail(again, 'again', { maxAttempts: 3 });
    const third = (await claimOf(store, scope.userId, t(61)))!;
    expect(third.entries[0]).toMatchObject({ text: 'first', attempts: 2, lastError: 'again' });
  });

  ctx.test('an entry reaching maxAttempts is dead and no longer blocks the user', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    await store.enqueue([turn(scope, s, 0, 'poison'), turn(scope, s, 1, 'fine')]);
    const c1 = (await claimOf(store, scope.userId, t(0)))!;
    await store.fail(c1, 'bad', { maxAttempts: 2 });
    const c2 = (await claimOf(store, scope.userId, t(1)))!;
    expect(c2.entries.map((e) => e.text)).toEqual(['poison']);
    await store.fail(c2, 'bad again', { maxAttempts: 2, retryAt: FAR_FUTURE });
    expect(await store.backlog({ now: t(2), userId: scope.userId })).toEqual({
      queued: 1,
      claimed: 0,
      dead: 1,
      staleLeases: 0,
      nextClaimableAt: null,
    });
    const c3 = (await claimOf(store, scope.userId, t(2), { maxEntries: 5 }))!;
    expect(c3.entries.map((e) => e.text)).toEqual(['fine']);
    // A dead entry's key still counts: re-enqueueing it is a duplicate.
    expect(await store.enqueue([turn(scope, s, 0, 'poison')])).toEqual({ accepted: 0, duplicates: 1 });
  });

  ctx.test('release gives entries back without counting an attempt', async () => {
    const [store, scope] = await storeAndUser(ctx);
    await store.enqueue([turn(scope, unique('s-'), 0, 'budget')]);
    const c1 = (await claimOf(store, scope.userId, t(0)))!;
    await store.release(c1, { retryAt: t(100), reason: 'budget spent' });
    expect(await claimOf(store, scope.userId, t(50))).toBeNull();
    const c2 = (await claimOf(store, scope.userId, t(100)))!;
    expect(c2.entries[0]).toMatchObject({ text: 'budget', attempts: 0 });
  });

  ctx.test('commit with complete marks entries done; they are never claimed again', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    await store.enqueue([turn(scope, s, 0, 'one'), turn(scope, s, 1, 'two')]);
    const c = (await claimOf(store, scope.userId, t(0), { maxEntries: 1 }))!;
    const b = belief(scope);
    await store.commit({
      ...inserts(scope, [b]),
      complete: { claimId: c.claimId, entryIds: [c.entries[0]!.id] },
    });
    expect(await store.backlog({ now: t(1), userId: scope.userId })).toEqual({
      queued: 1,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: null,
    });
    const next = (await claimOf(store, scope.userId, FAR_FUTURE, { maxEntries: 5 }))!;
    expect(next.entries.map((e) => e.text)).toEqual(['two']);
    expect(await store.enqueue([turn(scope, s, 0, 'one')])).toEqual({ accepted: 0, duplicates: 1 });
  });

  ctx.test('backlog counts queued, claimed, dead and stale leases, per user or all', async () => {
    const store = await ctx.open();
    const a: Scope = { userId: unique('user-') };
    const b: Scope = { userId: unique('user-') };
    await store.enqueue([
      turn(a, 'sa', 0, '1'),
      turn(a, 'sa', 1, '2'),
      turn(b, 'sb', 0, '3'),
      turn(b, 'sb', 1, '4'),
    ]);
    const ca = (await claimOf(store, a.userId, t(0)))!;
    await store.claim({ worker: 'w', leaseMs: 1000, now: t(0), userId: b.userId });
    expect(await store.backlog({ now: t(0) })).toEqual({
      queued: 2,
      claimed: 2,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: t(1),
    });
    expect(await store.backlog({ now: t(5) })).toEqual({
      queued: 2,
      claimed: 2,
      dead: 0,
      staleLeases: 1,
      nextClaimableAt: t(60),
    });
    expect(await store.backlog({ now: t(5), userId: a.userId })).toEqual({
      queued: 1,
      claimed: 1,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: t(60),
    });
    await store.fail(ca, 'x', { maxAttempts: 1 });
    expect(await store.backlog({ now: t(5), userId: a.userId })).toEqual({
      queued: 1,
      claimed: 0,
      dead: 1,
      staleLeases: 0,
      nextClaimableAt: null,
    });
  });

  ctx.test('bad outbox input is refused and accepts nothing', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const good = turn(scope, unique('s-'), 0, 'ok');
    const bad: unknown[] = [
      { ...good, scope: { userId: '' } },
      { ...good, scope: { userId: 7 } },
      { ...good, sessionId: '' },
      { ...good, position: -1 },
      { ...good, position: 1.5 },
      { ...good, position: Number.NaN },
      { ...good, position: MAX_POSITION + 1 },
      { ...good, position: 2 ** 53 },
      { ...good, role: 'system' },
      { ...good, text: 42 },
      { ...good, at: 'not a date' },
    ];
    for (const entry of bad) {
      await rejects(store.enqueue([good, entry as never]), InvalidInputError);
      expect(await store.backlog({ now: t(0) })).toEqual(EMPTY_BACKLOG);
    }
    await rejects(store.claim({ worker: 'w', leaseMs: Number.NaN, now: t(0) }), InvalidInputError);
    await rejects(store.claim({ worker: '', leaseMs: 1000, now: t(0) }), InvalidInputError);
    await rejects(store.claim({ worker: 'w', leaseMs: 1000, now: 'soon' }), InvalidInputError);
    expect(await store.enqueue([good])).toEqual({ accepted: 1, duplicates: 0 });
  });

  ctx.test(
    'backlog.nextClaimableAt: a live lease’s end or a retry time, the earliest; null when none waits',
    async () => {
      const store = await ctx.open();
      const a: Scope = { userId: unique('user-') };
      const b: Scope = { userId: unique('user-') };
      expect(await store.backlog({ now: t(0) })).toEqual(EMPTY_BACKLOG);
      await store.enqueue([turn(a, 'sa', 0, 'a0'), turn(a, 'sa', 1, 'a1'), turn(b, 'sb', 0, 'b0')]);
      // Queued and claimable now: nothing waits.
      expect((await store.backlog({ now: t(0) })).nextClaimableAt).toBeNull();
      // A live claim: its lease's end (the user's later entries wait for it too).
      const ca = (await claimOf(store, a.userId, t(0)))!;
      expect(ca.leaseUntil).toBe(t(60));
      expect((await store.backlog({ now: t(10), userId: a.userId })).nextClaimableAt).toBe(ca.leaseUntil);
      expect((await store.backlog({ now: t(10), userId: b.userId })).nextClaimableAt).toBeNull();
      expect((await store.backlog({ now: t(10) })).nextClaimableAt).toBe(t(60));
      // Once the lease has expired the entries are claimable (stale): nothing waits.
      expect(await store.backlog({ now: t(60), userId: a.userId })).toMatchObject({
        staleLeases: 1,
        nextClaimableAt: null,
      });
      // fail with a future retry time: that time.
      await store.fail(ca, 'boom', { maxAttempts: 5, retryAt: t(100) });
      expect((await store.backlog({ now: t(10), userId: a.userId })).nextClaimableAt).toBe(t(100));
      expect((await store.backlog({ now: t(100), userId: a.userId })).nextClaimableAt).toBeNull();
      // release with a future retry time: that time; across users the earliest one.
      const cb = (await claimOf(store, b.userId, t(10)))!;
      await store.release(cb, { retryAt: t(40), reason: 'budget' });
      expect((await store.backlog({ now: t(20), userId: b.userId })).nextClaimableAt).toBe(t(40));
      expect((await store.backlog({ now: t(20) })).nextClaimableAt).toBe(t(40));
      expect((await store.backlog({ now: t(50) })).nextClaimableAt).toBe(t(100));
      // A retry time already past, or a fail without one: claimable now.
      const again = (await claimOf(store, b.userId, t(50)))!;
      await store.fail(again, 'boom', { maxAttempts: 5 });
      expect((await store.backlog({ now: t(50), userId: b.userId })).nextClaimableAt).toBeNull();
      const third = (await claimOf(store, b.userId, t(50)))!;
      await store.release(third, { retryAt: t(45), reason: 'past' });
      expect((await store.backlog({ now: t(50), userId: b.userId })).nextClaimableAt).toBeNull();
      // Dead and done entries never wait.
      const last = (await claimOf(store, b.userId, t(50)))!;
      await store.fail(last, 'dead', { maxAttempts: 1, retryAt: t(500) });
      expect(await store.backlog({ now: t(50), userId: b.userId })).toMatchObject({
        dead: 1,
        nextClaimableAt: null,
      });
      const ca2 = (await claimOf(store, a.userId, t(100), { maxEntries: 5 }))!;
      await store.commit(completeOnly(a, ca2));
      expect((await store.backlog({ now: t(100) })).nextClaimableAt).toBeNull();
    },
  );

  ctx.test('a turn at MAX_POSITION is kept exactly; beyond it, nothing is written', async () => {
    const [store, scope] = await storeAndUser(ctx);
    const s = unique('s-');
    expect(MAX_POSITION).toBe(2 ** 31 - 1);
    for (const position of [MAX_POSITION + 1, 2 ** 53, Number.MAX_SAFE_INTEGER + 2]) {
      await rejects(
        store.enqueue([turn(scope, s, 0, 'first'), turn(scope, s, position, 'far', t(1))]),
        InvalidInputError,
      );
      expect(await store.backlog({ now: t(0) })).toEqual(EMPTY_BACKLOG);
    }
    expect(await store.enqueue([turn(scope, s, MAX_POSITION, 'the last position', t(1))])).toEqual({
      accepted: 1,
      duplicates: 0,
    });
    const claim = (await claimOf(store, scope.userId, t(2)))!;
    expect(claim.entries.map((e) => [e.position, e.text])).toEqual([[MAX_POSITION, 'the last position']]);
    expect(claim.entries[0]!.idempotencyKey).toBe(idempotencyKey(s, MAX_POSITION, 'the last position'));
    expect(await store.enqueue([turn(scope, s, MAX_POSITION, 'the last position', t(1))])).toEqual({
      accepted: 0,
      duplicates: 1,
    });
    // The same bound holds for evidence positions, in commits and imports.
    const evidence = (position: number) => [
      { sessionId: s, position, role: 'user' as const, quote: 'the last position', at: t(1) },
    ];
    const kept = belief(scope, { evidence: evidence(MAX_POSITION) });
    await store.commit({
      ...inserts(scope, [kept]),
      complete: completing(claim),
    });
    expect((await store.get(scope, kept.id))?.evidence).toEqual(evidence(MAX_POSITION));
    expect((await store.history(scope)).map((b) => b.evidence[0]?.position)).toEqual([MAX_POSITION]);
    for (const position of [MAX_POSITION + 1, 2 ** 53]) {
      const far = belief(scope, { evidence: evidence(position) });
      await rejects(store.commit(inserts(scope, [far])), InvalidInputError);
      await rejects(store.importBeliefs([{ belief: far }]), InvalidInputError);
      expect(await store.get(scope, far.id)).toBeNull();
      const update = {
        id: kept.id,
        expectedVersion: kept.version,
        set: { evidence: evidence(position), updatedAt: t(3) },
      };
      await rejects(store.commit({ scope, inserts: [], updates: [update], audit: [] }), InvalidInputError);
    }
    expect(await store.get(scope, kept.id)).toEqual(kept);
    // Other users' turns are claimed as before.
    const other = { userId: unique('user-') };
    await store.enqueue([turn(other, unique('s-'), 0, 'still fine')]);
    expect((await claimOf(store, undefined, t(3)))?.entries.map((e) => e.text)).toEqual(['still fine']);
  });
}
