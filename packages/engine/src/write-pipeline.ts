/**
 * The per-user write pipeline: accept → (next tick) claim → extract → reconcile → commit, and the read barrier that
 * makes a user's reads wait for that user's accepted writes.
 *
 * - Per user, turns are processed strictly first in, first out, on one promise chain; users progress independently,
 *   at most `config.concurrency` at a time.
 * - Accepting never waits for extraction: extraction starts on the next tick, so the caller that accepted (an Agents
 *   SDK run saving its turns) is not held up. The barrier knows about accepted turns whose extraction has not
 *   started, and starts it at once.
 * - Nothing in the pipeline rejects unobserved: a failure is recorded (`lastError`, and in strict mode raised at the
 *   user's next operation), and retried with backoff; a store that heals is used again.
 *
 * This file is the facade; the parts live in `write/`: `accept.ts` (acceptance and the repeat filter), `schedule.ts`
 * (the per-user chains, deferral, retries, the barrier and `flush`/`settleTurns`), `worker.ts` (the claim loop, the
 * lease heartbeat and the failure policy) and `state.ts` (the per-user state they share).
 */

import type { EngineCore } from './engine-core.js';
import type { CapturePolicy, Extractor, OutboxInput, TranscriptStore } from './ports.js';
import type { Scope } from './types.js';
import {
  Acceptance,
  type AcceptOptions,
  type AcceptResult,
  type AppendTranscriptOptions,
  type AppendTranscriptResult,
  type TurnRef,
} from './write/accept.js';
import { Scheduler, type SettleResult } from './write/schedule.js';
import { UserStates } from './write/state.js';
import { type RunWorkerOptions, Worker } from './write/worker.js';

export type {
  AcceptOptions,
  AcceptResult,
  AppendTranscriptOptions,
  AppendTranscriptResult,
  RefusedTurn,
  TurnRef,
} from './write/accept.js';
export type { SettleResult } from './write/schedule.js';
export type { RunWorkerOptions } from './write/worker.js';

/** @internal */
export class WritePipeline {
  private readonly users: UserStates;
  private readonly scheduler: Scheduler;
  private readonly worker: Worker;
  private readonly acceptance: Acceptance;

  constructor(
    core: EngineCore,
    extractor: Extractor,
    transcript: TranscriptStore | null,
    readonly workerId: string,
    /** The host's capture policy, run by the planner on what extraction would insert. */
    policy: CapturePolicy | null = null,
  ) {
    this.users = new UserStates(core);
    this.scheduler = new Scheduler(core, this.users, (userId) => this.worker.drainUser(userId));
    this.worker = new Worker(core, this.users, this.scheduler, extractor, workerId, policy);
    this.acceptance = new Acceptance(core, this.users, this.scheduler, transcript);
  }

  /** Validates a turn for the outbox and returns its canonical form. */
  checkInput(input: OutboxInput, index = 0, list = 'inputs'): OutboxInput {
    return this.acceptance.checkInput(input, index, list);
  }

  accept(inputs: readonly OutboxInput[], options: AcceptOptions = {}): Promise<AcceptResult> {
    return this.acceptance.accept(inputs, options);
  }

  appendTranscript(
    scope: Scope,
    sessionId: string,
    items: readonly unknown[],
    options: AppendTranscriptOptions,
  ): Promise<AppendTranscriptResult> {
    return this.acceptance.appendTranscript(scope, sessionId, items, options);
  }

  /** Waits for the user's accepted writes; in strict mode, raises a recorded failure. */
  barrier(userId: string): Promise<void> {
    return this.scheduler.barrier(userId);
  }

  flush(scope?: Scope, options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    return this.scheduler.flush(scope, options);
  }

  settleTurns(
    scope: Scope,
    turns: readonly TurnRef[],
    options: { readonly timeoutMs?: number | undefined } = {},
  ): Promise<SettleResult> {
    return this.scheduler.settleTurns(scope, turns, options);
  }

  resume(): Promise<void> {
    return this.worker.resume();
  }

  runWorker(options: RunWorkerOptions = {}): Promise<void> {
    return this.worker.runWorker(options);
  }

  lastError(userId: string): string | null {
    return this.users.lastError(userId);
  }

  /** Strict mode: raises (once) a failure recorded for this user. */
  raiseStrict(userId: string): void {
    this.users.raiseStrict(userId);
  }

  /** Drains what was accepted (deferred turns start now), then stops every timer. */
  close(): Promise<void> {
    return this.scheduler.close();
  }
}
