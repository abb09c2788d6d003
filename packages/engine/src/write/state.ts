/**
 * The write pipeline's per-user state, shared by its parts (acceptance, scheduling and the barrier, the worker), and
 * the record of a user's failures that each of them writes.
 */

import type { EngineCore } from '../engine-core.js';
import { describeError, Mem01Error, sanitizeError } from '../errors.js';
import type { OutboxClaim } from '../ports.js';
import type { Scope } from '../types.js';

export interface UserState {
  /** Resolves when every drain scheduled so far for this user has finished. Never rejects. */
  tail: Promise<void>;
  /** A drain is on the chain and has not started: a new schedule can ride on it. */
  queued: boolean;
  /** Turns were accepted and their drain is not scheduled yet (it starts on the next tick, or at a barrier). */
  deferred: boolean;
  /** Accepts of this user still writing to the store. */
  readonly accepting: Set<Promise<unknown>>;
  /** Resolves once the latest accept or append called for this user has issued its store write (or given up). */
  issued: Promise<void>;
  /** A timed retry (after a failure, or when another worker's lease expires). */
  retry: ReturnType<typeof setTimeout> | null;
  /**
   * The timed retry is of a failed store call: a barrier retries it at once (one cheap claim), so a healed store is
   * used by the next operation. A failed extraction is retried by its timer only, never by reads.
   */
  retryNow: boolean;
  /** Consecutive failed store calls (claim, backlog), for backoff. */
  storeFailures: number;
  lastError: string | null;
  /**
   * The latest turn refused at acceptance (failure-open). Kept apart from `lastError` because that turn is lost for
   * good: a later extraction succeeding does not make it less true, only a later clean acceptance replaces it.
   */
  refusal: string | null;
  /** Strict mode: the (sanitised) error to raise at the user's next operation. */
  strictError: Error | undefined;
  /**
   * The beliefs this engine's extraction committed from each turn of the user, keyed by {@link turnKey} (newest last,
   * bounded): what {@link WritePipeline.settleTurns} reports for turns extracted here.
   */
  readonly committed: Map<string, readonly string[]>;
}

export const turnKey = (namespace: string, sessionId: string, position: number): string =>
  `${namespace}\u0000${sessionId}\u0000${position}`;

/** Every user's {@link UserState}, and the claims not yet on a user's chain. */
export class UserStates {
  readonly all = new Map<string, UserState>();
  /** Claims by `resume`/`runWorker` not yet placed on their user's chain (the barrier waits for them). */
  readonly claimsInFlight = new Set<Promise<OutboxClaim | null>>();

  constructor(private readonly core: EngineCore) {}

  /** The user's state, if this engine has seen the user. */
  find(userId: string): UserState | undefined {
    return this.all.get(userId);
  }

  /** Records a pipeline failure of a user: `lastError`, the strict error, counters, an event and a warning. */
  record(scope: Scope, err: unknown, turns: number): void {
    const st = this.state(scope.userId);
    const message = describeError(err);
    this.core.stats.failures++;
    st.lastError = message;
    if (this.core.config.strict) st.strictError = toStrictError(err);
    this.core.emit({ type: 'error', scope, error: message, turns });
    this.core.logger?.warn(`mem01: memory pipeline failure: ${message}`);
  }

  lastError(userId: string): string | null {
    const st = this.all.get(userId);
    return st?.lastError ?? st?.refusal ?? null;
  }

  /** Strict mode: raises (once) a failure recorded for this user. */
  raiseStrict(userId: string): void {
    const st = this.all.get(userId);
    if (!st || st.strictError === undefined) return;
    const err = st.strictError;
    st.strictError = undefined;
    throw err;
  }

  state(userId: string): UserState {
    let st = this.all.get(userId);
    if (!st) {
      st = {
        tail: Promise.resolve(),
        queued: false,
        deferred: false,
        accepting: new Set(),
        issued: Promise.resolve(),
        retry: null,
        retryNow: false,
        storeFailures: 0,
        lastError: null,
        refusal: null,
        strictError: undefined,
        committed: new Map(),
      };
      this.all.set(userId, st);
    }
    return st;
  }
}

/** A failure as strict mode raises it: sanitised through the whole cause chain, always a `Mem01Error`. */
function toStrictError(err: unknown): Error {
  const clean = sanitizeError(err);
  return clean instanceof Mem01Error
    ? clean
    : new Mem01Error('pipeline_error', `memory pipeline failure: ${describeError(err)}`, { cause: clean });
}

export function sleep(ms: number, signal?: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
