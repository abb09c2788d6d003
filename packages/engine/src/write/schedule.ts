/**
 * Scheduling and the read barrier of the write pipeline: each user's promise chain of drains (first in, first out),
 * the bound on users drained at once, deferred starts and timed retries; `barrier`, `flush` and `settleTurns`, which
 * wait on that chain.
 */

import type { EngineCore } from '../engine-core.js';
import { InvalidInputError, PendingWritesError } from '../errors.js';
import { assertPosition } from '../store-input.js';
import type { Scope } from '../types.js';
import { assertId, normalizeScope } from '../util.js';
import type { TurnRef } from './accept.js';
import { sleep, turnKey, type UserState, type UserStates } from './state.js';

/** How often `flush` looks again at turns another worker holds. */
const FLUSH_POLL_MS = 100;
/** How many of the user's newest beliefs `settle` reads for turns another process extracted. */
const SETTLE_SCAN_LIMIT = 1000;

/** What `settle` found once the user's accepted turns were processed (or the wait ended). */
export interface SettleResult {
  /**
   * Ids of the beliefs the extraction of the given turns committed and left active or pending (new ones, and ones
   * held already that those turns confirmed), in no particular order.
   */
  readonly committed: readonly string[];
  /** Accepted turns of this user still waiting for extraction when the wait ended (0 once all are processed). */
  readonly pending: number;
}

/** @internal Schedules each user's drains and waits for them. */
export class Scheduler {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly core: EngineCore,
    private readonly users: UserStates,
    /** Drains the user's claimable turns (the worker's loop for one user). */
    private readonly drain: (userId: string) => Promise<void>,
  ) {}

  // ---------------------------------------------------------------- scheduling

  /** Extraction of a user's accepted turns starts on the next tick (or at the next barrier, whichever is first). */
  defer(userId: string): void {
    const st = this.users.state(userId);
    if (st.deferred) return;
    st.deferred = true;
    setTimeout(() => {
      if (!st.deferred || this.core.closed) return;
      st.deferred = false;
      this.schedule(userId);
    }, 0);
  }

  /** Starts a drain now for a user with deferred turns or a pending store retry (`always`: in any case). */
  private kick(userId: string, always = false): void {
    const st = this.users.find(userId);
    if (!st || (!always && !st.deferred && !(st.retry !== null && st.retryNow))) return;
    st.deferred = false;
    if (st.retry) {
      clearTimeout(st.retry);
      st.retry = null;
    }
    this.schedule(userId);
  }

  /** Puts a drain of the user's queued turns on the user's chain. Cheap when one is already waiting there. */
  private schedule(userId: string): void {
    if (this.core.closed) return;
    const st = this.users.state(userId);
    if (st.queued) return;
    st.queued = true;
    st.tail = st.tail.then(async () => {
      st.queued = false;
      await this.drain(userId);
    });
  }

  /**
   * A drain of this user after `ms` (unless the engine closes first). `now`: a barrier may start it sooner (a failed
   * store call; see {@link UserState.retryNow}).
   */
  retryLater(userId: string, ms: number, now = false): void {
    if (this.core.closed) return;
    const st = this.users.state(userId);
    if (st.retry) clearTimeout(st.retry);
    st.retryNow = now;
    st.retry = setTimeout(() => {
      st.retry = null;
      this.schedule(userId);
    }, ms);
    // A retry must not keep a process alive: a durable outbox keeps the turns for the next start.
    st.retry.unref?.();
  }

  /** Bounded concurrency across users. */
  async withUserSlot<T>(fn: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so the count never overshoots.
    if (this.running >= this.core.config.concurrency) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Drains what was accepted (deferred turns start now), then stops every timer. */
  async close(): Promise<void> {
    for (const [userId, st] of this.users.all) {
      if (st.retry) {
        clearTimeout(st.retry);
        st.retry = null;
      }
      if (st.deferred) this.kick(userId);
    }
    await Promise.all([...this.users.all.values()].map((s) => s.tail));
  }

  // ---------------------------------------------------------------- the barrier

  /**
   * Waits until the writes accepted for this user so far are processed (or have failed and been recorded). In
   * strict mode, raises a recorded failure.
   */
  async barrier(userId: string): Promise<void> {
    await this.settle(userId);
    this.users.raiseStrict(userId);
  }

  private async settle(userId: string): Promise<void> {
    // A claim of any user still in flight may be this user's turn: wait until it is on the user's chain.
    if (this.users.claimsInFlight.size > 0) await Promise.allSettled([...this.users.claimsInFlight]);
    const st = this.users.find(userId);
    if (!st) return;
    if (st.accepting.size > 0) await Promise.allSettled([...st.accepting]);
    this.kick(userId);
    await st.tail;
  }

  /**
   * Waits until the accepted writes of one user are processed, including turns another worker's lease holds (up to
   * `timeoutMs`, default `config.flushTimeoutMs`). Turns still unprocessed then are reported in `lastError`, and in
   * strict mode raised as `PendingWritesError`. Without a scope, drains every user this engine knows.
   */
  async flush(scope?: Scope, options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    if (scope === undefined) {
      for (const userId of this.users.all.keys()) this.kick(userId, true);
      await Promise.all([...this.users.all.values()].map((s) => s.tail));
      for (const userId of this.users.all.keys()) this.users.raiseStrict(userId);
      return;
    }
    const { userId } = normalizeScope(scope);
    const timeoutMs = options.timeoutMs ?? this.core.config.flushTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0)
      throw new InvalidInputError('timeoutMs', 'must be a non-negative integer');
    const deadline = performance.now() + timeoutMs;
    const st = this.users.state(userId);
    for (;;) {
      this.kick(userId, true);
      await this.settle(userId);
      const now = this.core.clock().getTime();
      const backlog = await this.core.store.backlog({ now: new Date(now).toISOString(), userId });
      const pending = backlog.queued + backlog.claimed;
      if (pending === 0) break;
      if (backlog.staleLeases > 0) continue; // a dead worker's lease just expired: take its turns now
      const held = backlog.claimed > 0;
      const until = backlog.nextClaimableAt;
      if (!held || until === null) {
        // Nobody holds them: this process's own attempt failed (recorded already), or they wait for a retry time.
        // The failure that set the retry time (a spent budget, a provider's retry-after) already says why.
        if (until !== null && st.lastError === null)
          this.reportPending(st, pending, until, 'waiting for a retry');
        break;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        this.reportPending(st, pending, until, "held by another worker's lease");
        break;
      }
      // Poll rather than sleep until the lease expires: the holder usually finishes long before its lease ends.
      await sleep(Math.min(left, FLUSH_POLL_MS, Math.max(10, Date.parse(until) - now + 5)));
    }
    this.users.raiseStrict(userId);
  }

  /**
   * Waits as {@link flush} does for the user of `scope`, then reports which beliefs the extraction of `turns`
   * committed: from this engine's record of its own commits, and for turns another process extracted, from the
   * evidence (session id + position) of the user's newest active and pending beliefs.
   */
  async settleTurns(
    scope: Scope,
    turns: readonly TurnRef[],
    options: { readonly timeoutMs?: number | undefined } = {},
  ): Promise<SettleResult> {
    const s = normalizeScope(scope);
    if (!Array.isArray(turns)) throw new InvalidInputError('turns', 'must be an array');
    if (turns.length > 1000) throw new InvalidInputError('turns', 'at most 1000 turns');
    const keys = turns.map((t, i) => {
      if (!t || typeof t !== 'object')
        throw new InvalidInputError(`turns[${i}]`, 'must be { sessionId, position }');
      assertId(t.sessionId, `turns[${i}].sessionId`);
      assertPosition(t.position, `turns[${i}].position`);
      return turnKey(s.namespace ?? '', t.sessionId, t.position);
    });
    await this.flush(s, options);
    const backlog = await this.core.store.backlog({ now: this.core.clock().toISOString(), userId: s.userId });
    const st = this.users.state(s.userId);
    const committed = new Set<string>();
    const unknown = new Set<string>();
    for (const key of keys) {
      const ids = st.committed.get(key);
      if (ids) for (const id of ids) committed.add(id);
      else unknown.add(key);
    }
    if (unknown.size > 0) {
      let cursor: string | null = null;
      let read = 0;
      do {
        const page = await this.core.store.list(s, { statuses: ['active', 'pending'], limit: 200, cursor });
        for (const b of page.items) {
          if (b.evidence.some((e) => unknown.has(turnKey(s.namespace ?? '', e.sessionId, e.position))))
            committed.add(b.id);
        }
        read += page.items.length;
        cursor = page.nextCursor;
      } while (cursor !== null && read < SETTLE_SCAN_LIMIT);
    }
    if (committed.size > 0) {
      // Only what is still active or pending: a later turn may have superseded what these committed.
      const live = await Promise.all([...committed].map((id) => this.core.store.get(s, id)));
      for (const b of live) if (b && b.status !== 'active' && b.status !== 'pending') committed.delete(b.id);
    }
    return { committed: [...committed], pending: backlog.queued + backlog.claimed };
  }

  private reportPending(st: UserState, pending: number, until: string, why: string): void {
    const message = `${pending} accepted turn${pending === 1 ? ' is' : 's are'} not extracted yet: ${why} until ${until}`;
    st.lastError = message;
    this.core.logger?.warn(`mem01: ${message}`);
    if (this.core.config.strict && st.strictError === undefined) {
      st.strictError = new PendingWritesError(message, { pending, until });
    }
  }
}
