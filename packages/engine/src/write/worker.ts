/**
 * The worker of the write pipeline: claims a user's turns, extracts, reconciles and commits them under a renewed
 * lease, and the failure policy (record, release on a spent budget, fail with backoff, drop on an ended grant).
 * Nothing here rejects unobserved: a failure is recorded and retried.
 */

import { endedGrants } from '../capture.js';
import type { EngineCore } from '../engine-core.js';
import { BudgetExceededError, describeError, LeaseLostError, ProviderError } from '../errors.js';
import { claimTurns, extractClaim } from '../extract-claim.js';
import type { CapturePolicy, Extractor, OutboxClaim, WriteOutbox } from '../ports.js';
import type { ReconcilePlan } from '../reconcile.js';
import { autoSummarize } from '../summaries.js';
import type { Evidence, Scope } from '../types.js';
import { normalizeScope } from '../util.js';
import type { Scheduler } from './schedule.js';
import { sleep, turnKey, type UserState, type UserStates } from './state.js';

/** The longest wait between retries of a user whose store calls fail. */
const MAX_STORE_BACKOFF_MS = 30_000;
/** The longest wait before retrying a failed extraction in this process. */
const MAX_EXTRACTION_BACKOFF_MS = 300_000;
/** How many turns per user {@link UserState.committed} remembers. */
const MAX_COMMITTED_TURNS = 1000;

/** Options of `MemoryEngine.runWorker`. */
export interface RunWorkerOptions {
  /** Ends the loop when it aborts. */
  readonly signal?: AbortSignal | undefined;
  /** How long an idle worker waits before claiming again, in ms. Default 250. */
  readonly pollMs?: number | undefined;
  /** Claim only this user's turns. Default: any user's. */
  readonly userId?: string | undefined;
}

/** @internal Processes claims of the outbox. */
export class Worker {
  /** Conversations whose idle predecessor `autoSummaries` has looked for (see `autoSummarize`). */
  private readonly idleChecked = new Set<string>();

  constructor(
    private readonly core: EngineCore,
    private readonly users: UserStates,
    private readonly scheduler: Scheduler,
    private readonly extractor: Extractor,
    readonly workerId: string,
    /** The host's capture policy, run by the planner on what extraction would insert. */
    private readonly policy: CapturePolicy | null,
  ) {}

  /** Claims and processes the user's turns until none is claimable; on a store failure, retries with backoff. */
  async drainUser(userId: string): Promise<void> {
    const st = this.users.state(userId);
    await this.scheduler.withUserSlot(async () => {
      try {
        for (;;) {
          const claim = await this.core.store.claim({ ...this.claimOptions(), userId });
          st.storeFailures = 0;
          if (!claim) break;
          if (!(await this.processClaim(claim, this.heartbeat(claim)))) return;
        }
        await this.followUp(userId);
      } catch (err) {
        // The store failed (busy SQLite file, unreachable or exhausted Postgres pool): record, retry with backoff.
        st.storeFailures++;
        this.users.record({ userId }, err, 0);
        this.scheduler.retryLater(
          userId,
          Math.min(MAX_STORE_BACKOFF_MS, 100 * 2 ** Math.min(st.storeFailures, 10)),
          true,
        );
      }
    });
  }

  /** After a drain found nothing claimable: if turns wait for another worker's lease or a retry time, come back then. */
  private async followUp(userId: string): Promise<void> {
    const now = this.core.clock().getTime();
    const backlog = await this.core.store.backlog({ now: new Date(now).toISOString(), userId });
    // A lease that ran out (or whose holder exited) since this drain's claim: take the turns over now.
    if (backlog.staleLeases > 0) return this.scheduler.retryLater(userId, 0);
    if (backlog.queued + backlog.claimed === 0 || backlog.nextClaimableAt === null) return;
    this.scheduler.retryLater(userId, Math.max(0, Date.parse(backlog.nextClaimableAt) - now) + 5);
  }

  /** Processes everything queued in the store, for every user (for example after a crash). */
  async resume(): Promise<void> {
    this.core.assertOpen();
    const workers = Array.from({ length: this.core.config.concurrency }, async () => {
      while (!this.core.closed) {
        if (!(await this.claimAndRun(undefined))) return;
      }
    });
    await Promise.all(workers);
  }

  /** The worker loop of a multi-process deployment: claims any user's turns, processes them, polls when idle. */
  async runWorker(options: RunWorkerOptions = {}): Promise<void> {
    this.core.assertOpen();
    const pollMs = options.pollMs ?? 250;
    let failures = 0;
    while (!this.core.closed && !options.signal?.aborted) {
      let worked: boolean;
      try {
        worked = await this.claimAndRun(options.userId);
        failures = 0;
      } catch (err) {
        // A database outage must not end the worker: back off (up to 30 s) and try again.
        failures++;
        this.core.logger?.warn(`mem01: worker cannot claim (attempt ${failures}): ${describeError(err)}`);
        await sleep(Math.min(30_000, pollMs * 2 ** Math.min(failures, 7)), options.signal);
        continue;
      }
      if (worked) continue;
      await sleep(pollMs, options.signal);
    }
  }

  /**
   * Claims the oldest turns of any user (or of `userId`) and processes them on that user's chain, so the user's
   * read barrier waits for them exactly as for turns this engine accepted. Returns false when nothing was claimable.
   */
  private async claimAndRun(userId: string | undefined): Promise<boolean> {
    const pending = this.core.store.claim({ ...this.claimOptions(), userId });
    this.users.claimsInFlight.add(pending);
    let claim: OutboxClaim | null;
    try {
      claim = await pending;
    } catch (err) {
      this.users.claimsInFlight.delete(pending);
      throw err;
    }
    if (!claim) {
      this.users.claimsInFlight.delete(pending);
      return false;
    }
    const held = claim;
    // The lease is kept alive from the claim on: the claim may wait on the user's chain and for a slot first.
    const heartbeat = this.heartbeat(held);
    const st = this.users.state(held.scope.userId);
    const run = st.tail.then(() => this.scheduler.withUserSlot(() => this.processClaim(held, heartbeat)));
    st.tail = run.then(
      () => undefined,
      () => undefined,
    );
    // On the chain now: a barrier that waited for this claim will find it there.
    this.users.claimsInFlight.delete(pending);
    await run;
    return true;
  }

  private claimOptions() {
    return {
      worker: this.workerId,
      leaseMs: this.core.config.leaseMs,
      now: this.core.now(),
      maxEntries: this.extractor.batchChars ? this.core.config.maxBatchTurns : 1,
      maxChars: this.extractor.batchChars || undefined,
    };
  }

  /**
   * Renews a claim's lease every `leaseMs / 3` until stopped, so that a short lease only runs out when this process
   * dies or stalls. A renewal refused with `LeaseLostError` (another worker took the turns over) stops it and aborts
   * `signal`; any other failure (the database away for a moment) is logged and tried again at the next beat.
   */
  private heartbeat(claim: OutboxClaim): Heartbeat {
    const core = this.core;
    const leaseMs = core.config.leaseMs;
    const lost = new AbortController();
    let stopped = false;
    let renewing = false;
    const timer = setInterval(
      () => {
        if (stopped || renewing) return;
        renewing = true;
        core.store
          .renew(claim, { now: core.now(), leaseMs })
          .then(
            () => undefined,
            (err: unknown) => {
              if (stopped) return;
              if (err instanceof LeaseLostError) {
                stop();
                lost.abort(err);
              } else {
                core.logger?.warn(`mem01: cannot renew an outbox lease (retrying): ${describeError(err)}`);
              }
            },
          )
          .finally(() => {
            renewing = false;
          });
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    // The work it guards keeps the process alive; the heartbeat alone must not.
    timer.unref?.();
    function stop(): void {
      stopped = true;
      clearInterval(timer);
    }
    return { signal: lost.signal, stop };
  }

  /**
   * Extracts, reconciles and commits one claim, its lease renewed by `heartbeat` (stopped here). Never throws: a
   * failure is recorded and the turns given back. Returns false when the user's drain should stop.
   */
  private async processClaim(claim: OutboxClaim, heartbeat: Heartbeat): Promise<boolean> {
    try {
      return await this.extractHeld(claim, heartbeat.signal);
    } finally {
      heartbeat.stop();
    }
  }

  private async extractHeld(claim: OutboxClaim, lost: AbortSignal): Promise<boolean> {
    const core = this.core;
    const scope = normalizeScope(claim.scope);
    const st = this.users.state(scope.userId);
    const started = performance.now();
    const turns = claimTurns(claim, core.config.maxTextBytes);
    try {
      // A claim holds the turns of one grant (or none): once that grant has ended, they are never extracted.
      const grantId = claim.entries[0]?.grantId;
      if (grantId !== undefined) {
        const ended = (await endedGrants(core, scope)).get(grantId);
        if (ended) {
          await this.dropClaim(
            claim,
            `capture grant ${grantId} ${ended === 'revoked' ? 'was revoked' : 'has expired'}; turn not extracted`,
          );
          return true;
        }
      }
      const { plan, usage } = await extractClaim(core, scope, claim, turns, {
        extractor: this.extractor,
        actor: this.workerId,
        policy: this.policy,
        signal: anySignal(core.abort.signal, lost),
      });
      st.lastError = null;
      this.noteCommitted(st, scope, claim, plan);
      core.stats.extractedTurns += claim.entries.length;
      core.emit({
        type: 'extracted',
        scope,
        turns: claim.entries.length,
        inserted: plan.inserts.length,
        updated: plan.updates.length,
        dropped: plan.dropped.length,
        usage,
        ms: performance.now() - started,
      });
      // `config.autoSummaries`: the conversations these turns grew or left idle (never throws).
      await autoSummarize(core, scope, turns, this.workerId, this.idleChecked);
      return true;
    } catch (thrown) {
      // Another worker took the turns over: whatever this attempt ran into (an extraction aborted on the lost lease,
      // a commit refused), the turns are that worker's now.
      const err: unknown = lost.aborted ? lost.reason : thrown;
      const message = describeError(err);
      if (err instanceof LeaseLostError) {
        core.logger?.warn(`mem01: ${message}`);
        return false;
      }
      if (err instanceof BudgetExceededError) {
        const retryAt =
          err.resetAt ?? new Date(core.clock().getTime() + core.config.budgetRetryMs).toISOString();
        await core.store.release(claim, { retryAt, reason: message }).catch(() => undefined);
        st.lastError = message;
        core.emit({ type: 'deferred', scope, reason: message, turns: claim.entries.length });
        core.logger?.warn(`mem01: extraction deferred for a user: ${message}`);
        this.scheduler.retryLater(
          scope.userId,
          Math.max(0, Date.parse(retryAt) - core.clock().getTime()) + 5,
        );
        return false;
      }
      this.users.record(scope, err, claim.entries.length);
      const retryAfterMs = err instanceof ProviderError ? err.retryAfterMs : undefined;
      const retryAt =
        retryAfterMs === undefined
          ? undefined
          : new Date(core.clock().getTime() + retryAfterMs).toISOString();
      await core.store
        .fail(claim, message, { maxAttempts: core.config.maxAttempts, retryAt })
        .catch(() => undefined);
      const attempts = (claim.entries[0]?.attempts ?? 0) + 1;
      if (attempts < core.config.maxAttempts) {
        this.scheduler.retryLater(
          scope.userId,
          retryAfterMs ?? Math.min(MAX_EXTRACTION_BACKOFF_MS, 1000 * 2 ** Math.min(attempts - 1, 12)),
        );
      }
      return false;
    }
  }

  /**
   * Gives up a claim whose capture grant has ended: its turns become dead with `reason` (ids only, no content) and lose
   * their text. A store written before `drop` existed dead-letters them with `fail` instead (their text stays there).
   */
  private async dropClaim(claim: OutboxClaim, reason: string): Promise<void> {
    const core = this.core;
    const store = core.store as Partial<Pick<WriteOutbox, 'drop'>> & WriteOutbox;
    if (typeof store.drop === 'function') await store.drop(claim, { reason });
    else await store.fail(claim, reason, { maxAttempts: 1 });
    const scope = normalizeScope(claim.scope);
    core.stats.turnsDropped += claim.entries.length;
    core.emit({ type: 'dropped', scope, reason, turns: claim.entries.length });
    core.logger?.warn(`mem01: ${claim.entries.length} accepted turn(s) dropped: ${reason}`);
  }

  /** Records which beliefs a committed plan left active or pending from each turn of the claim. */
  private noteCommitted(st: UserState, scope: Scope, claim: OutboxClaim, plan: ReconcilePlan): void {
    const touched = new Set(plan.touched);
    const evidenceOf = new Map<string, readonly Evidence[]>();
    for (const b of plan.inserts) if (touched.has(b.id)) evidenceOf.set(b.id, b.evidence);
    for (const u of plan.updates)
      if (touched.has(u.id) && u.set.evidence) evidenceOf.set(u.id, u.set.evidence);
    const byTurn = new Map<string, string[]>();
    for (const e of claim.entries) byTurn.set(turnKey(scope.namespace ?? '', e.sessionId, e.position), []);
    for (const [id, evidence] of evidenceOf) {
      for (const e of evidence) byTurn.get(turnKey(scope.namespace ?? '', e.sessionId, e.position))?.push(id);
    }
    for (const [key, ids] of byTurn) {
      st.committed.delete(key);
      st.committed.set(key, ids);
    }
    while (st.committed.size > MAX_COMMITTED_TURNS) {
      const oldest = st.committed.keys().next().value;
      if (oldest === undefined) break;
      st.committed.delete(oldest);
    }
  }
}

/** A claim's lease renewal, from the claim until its processing ends. */
interface Heartbeat {
  /** Aborts (with the `LeaseLostError`) when a renewal finds the claim taken over. */
  readonly signal: AbortSignal;
  stop(): void;
}

/** Aborts when either signal does (`AbortSignal.any` where the runtime has it: Node 20.3 and later). */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return typeof AbortSignal.any === 'function' ? AbortSignal.any([a, b]) : a;
}
