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
 */

import { authorizeCapture, endedGrants } from './capture.js';
import type { EngineCore } from './engine-core.js';
import {
  BudgetExceededError,
  describeError,
  InvalidInputError,
  LeaseLostError,
  Mem01Error,
  PendingWritesError,
  ProviderError,
  sanitizeError,
} from './errors.js';
import { claimTurns, extractClaim } from './extract-claim.js';
import type {
  AppendEnqueue,
  CapturePolicy,
  Extractor,
  OutboxClaim,
  OutboxInput,
  TranscriptStore,
  WriteOutbox,
} from './ports.js';
import type { ReconcilePlan } from './reconcile.js';
import { assertPosition } from './store-input.js';
import type { Evidence, Scope } from './types.js';
import { assertId, assertText, contentHash, normalizeScope } from './util.js';

/** The longest wait between retries of a user whose store calls fail. */
const MAX_STORE_BACKOFF_MS = 30_000;
/** A user turn repeating the conversation's previous one within this window is the same message saved twice. */
const REPEAT_WINDOW_MS = 10 * 60_000;
/** Conversations whose latest user turn is remembered for that check. */
const MAX_REMEMBERED_CONVERSATIONS = 10_000;
/** How often `flush` looks again at turns another worker holds. */
const FLUSH_POLL_MS = 100;
/** The longest wait before retrying a failed extraction in this process. */
const MAX_EXTRACTION_BACKOFF_MS = 300_000;

interface UserState {
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

/** `accept`'s record of a conversation's latest user turn. */
interface RepeatRecord {
  readonly hash: string;
  readonly at: number;
  readonly position: number;
}

/** Options of `accept`. */
export interface AcceptOptions {
  /**
   * Skip a user turn that repeats the previous user turn this engine accepted in its conversation (same scope and
   * session id, the same text, said within ten minutes of it, at another position): a client's retry that chose a
   * new position. Reported as a duplicate, its ref naming the earlier turn. Default false.
   */
  readonly skipRepeats?: boolean | undefined;
}

/** A turn accepted into the outbox, as `accept` reports it and `settle` takes it. */
export interface TurnRef {
  readonly sessionId: string;
  readonly position: number;
}

/** What `accept` did: counts, and the turns it was given, in order, as the outbox keys them. */
export interface AcceptResult {
  /** Turns queued for extraction. */
  readonly accepted: number;
  /** Turns skipped: the outbox held their key (session id, position, content) already. */
  readonly duplicates: number;
  /**
   * Every turn given, in order (its canonical session id and position), to pass to `settle`. A turn skipped as a
   * repeat names the turn accepted before under the same key, so `settle` reports what that one committed.
   */
  readonly turns: readonly TurnRef[];
}

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

/** How many turns per user {@link UserState.committed} remembers. */
const MAX_COMMITTED_TURNS = 1000;
/** How many of the user's newest beliefs `settle` reads for turns another process extracted. */
const SETTLE_SCAN_LIMIT = 1000;

const turnKey = (namespace: string, sessionId: string, position: number): string =>
  `${namespace}\u0000${sessionId}\u0000${position}`;

export interface AppendTranscriptOptions {
  /** Turns to accept with the append: each names the index of its item in `items`. */
  readonly turns?: readonly AppendEnqueue[] | undefined;
  readonly operationId?: string | undefined;
  readonly operationFingerprint?: string | undefined;
  readonly replaceSuffix?: readonly unknown[] | undefined;
}

export interface AppendTranscriptResult {
  readonly positions: readonly number[];
  readonly duplicate: boolean;
  /** Turns accepted for extraction (0 for a repeated operation). */
  readonly accepted: number;
  /**
   * Turns refused at acceptance in failure-open mode (too long, invalid): their items are stored in the transcript,
   * but they are never extracted. Each failure is also recorded as the user's `lastError`. Empty when all passed.
   */
  readonly refused: readonly RefusedTurn[];
}

/** A turn that {@link WritePipeline.appendTranscript} stored but refused to accept for extraction. */
export interface RefusedTurn {
  /** The turn's position in `turns` as passed in. */
  readonly turn: number;
  /** Why, as a typed error (an `InvalidInputError` naming `turns[i].…`, with the size and the limit if too long). */
  readonly error: Error;
}

/** Options of `MemoryEngine.runWorker`. */
export interface RunWorkerOptions {
  /** Ends the loop when it aborts. */
  readonly signal?: AbortSignal | undefined;
  /** How long an idle worker waits before claiming again, in ms. Default 250. */
  readonly pollMs?: number | undefined;
  /** Claim only this user's turns. Default: any user's. */
  readonly userId?: string | undefined;
}

/** @internal */
export class WritePipeline {
  private readonly users = new Map<string, UserState>();
  /** Claims by `resume`/`runWorker` not yet placed on their user's chain (the barrier waits for them). */
  private readonly claimsInFlight = new Set<Promise<OutboxClaim | null>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly core: EngineCore,
    private readonly extractor: Extractor,
    private readonly transcript: TranscriptStore | null,
    readonly workerId: string,
    /** The host's capture policy, run by the planner on what extraction would insert. */
    private readonly policy: CapturePolicy | null = null,
  ) {}

  // ---------------------------------------------------------------- accepting

  /** Validates a turn for the outbox and returns its canonical form. */
  checkInput(input: OutboxInput, index = 0, list = 'inputs'): OutboxInput {
    const at = `${list}[${index}]`;
    if (!input || typeof input !== 'object') throw new InvalidInputError(at, 'must be an object');
    const scope = normalizeScope(input.scope);
    assertId(input.sessionId, `${at}.sessionId`);
    assertPosition(input.position, `${at}.position`);
    if (input.role !== 'user' && input.role !== 'assistant') {
      throw new InvalidInputError(`${at}.role`, 'must be "user" or "assistant"');
    }
    assertText(input.text, `${at}.text`, this.core.config.maxTurnBytes);
    if (typeof input.at !== 'string' || Number.isNaN(Date.parse(input.at))) {
      throw new InvalidInputError(`${at}.at`, 'must be an ISO-8601 date');
    }
    // The grant a turn is accepted under is the engine's to set, never the caller's.
    const { grantId: _grantId, ...turn } = input;
    return { ...turn, scope, at: new Date(input.at).toISOString() };
  }

  async accept(inputs: readonly OutboxInput[], options: AcceptOptions = {}): Promise<AcceptResult> {
    this.core.assertOpen();
    if (!Array.isArray(inputs)) throw new InvalidInputError('inputs', 'must be an array');
    const given = inputs.map((input, i) => this.checkInput(input, i));
    const userIds = [...new Set(given.map((c) => c.scope.userId))];
    for (const userId of userIds) this.raiseStrict(userId);
    const refs: TurnRef[] = given.map((c) => ({ sessionId: c.sessionId, position: c.position }));
    // The repeat rule, checked and recorded in one synchronous step so that concurrent repeats are skipped too.
    const repeats = options.skipRepeats === true ? this.repeatsOf(given, refs) : null;
    const checked = repeats ? given.filter((_, i) => !repeats.skipped.has(i)) : given;
    const skipped = repeats?.skipped.size ?? 0;
    this.core.stats.duplicatesSkipped += skipped;
    if (checked.length === 0) return { accepted: 0, duplicates: skipped, turns: refs };
    const writing = this.inCallOrder(
      userIds,
      // Each turn is bound to its scope's active grant (a capture needs one when grants are required).
      () =>
        authorizeCapture(
          this.core,
          checked.map((c) => c.scope),
        ),
      (grantOf) =>
        this.core.store.enqueue(
          checked.map((c) => {
            const grantId = grantOf(c.scope);
            return grantId === undefined ? c : { ...c, grantId };
          }),
        ),
    );
    const result = await writing.catch((err: unknown) => {
      // Nothing was accepted: a retry of these turns must not count as a repeat of them.
      for (const [conversation, record] of repeats?.recorded ?? []) {
        if (this.lastAccepted.get(conversation) === record) this.lastAccepted.delete(conversation);
      }
      throw err;
    });
    this.core.stats.accepted += result.accepted;
    this.core.stats.duplicatesSkipped += result.duplicates;
    for (const userId of userIds) this.defer(userId);
    return { accepted: result.accepted, duplicates: result.duplicates + skipped, turns: refs };
  }

  /**
   * With `skipRepeats`: which user turns repeat the previous user turn this engine accepted in their conversation
   * (same scope and session id, same text, `at` within {@link REPEAT_WINDOW_MS}); their refs are set to that turn's.
   * Records each turn kept as its conversation's latest.
   */
  private repeatsOf(
    given: readonly OutboxInput[],
    refs: TurnRef[],
  ): { skipped: Set<number>; recorded: Map<string, RepeatRecord> } {
    const skipped = new Set<number>();
    const recorded = new Map<string, RepeatRecord>();
    given.forEach((c, i) => {
      if (c.role !== 'user') return;
      const conversation = `${c.scope.userId}\u0000${c.scope.namespace ?? ''}\u0000${c.sessionId}`;
      const hash = contentHash(c.text);
      const at = Date.parse(c.at);
      const previous = this.lastAccepted.get(conversation);
      if (
        previous &&
        previous.hash === hash &&
        previous.position !== c.position &&
        Math.abs(at - previous.at) <= REPEAT_WINDOW_MS
      ) {
        skipped.add(i);
        refs[i] = { sessionId: c.sessionId, position: previous.position };
        return;
      }
      const record = { hash, at, position: c.position };
      recorded.set(conversation, record);
      this.lastAccepted.delete(conversation);
      this.lastAccepted.set(conversation, record);
      if (this.lastAccepted.size > MAX_REMEMBERED_CONVERSATIONS) {
        const oldest = this.lastAccepted.keys().next().value;
        if (oldest !== undefined) this.lastAccepted.delete(oldest);
      }
    });
    return { skipped, recorded };
  }

  /** `accept`'s repeat rule: the latest user turn accepted per conversation, newest conversations last (bounded). */
  private readonly lastAccepted = new Map<string, RepeatRecord>();

  /**
   * Appends items to a session's transcript and accepts `turns` for extraction, in one transaction when the
   * transcript is the store. A turn that cannot be accepted (oversized, say) is refused before anything is written
   * in strict mode; otherwise the items are stored, that turn is not extracted, and the failure is recorded.
   */
  async appendTranscript(
    scope: Scope,
    sessionId: string,
    items: readonly unknown[],
    options: AppendTranscriptOptions,
  ): Promise<AppendTranscriptResult> {
    this.core.assertOpen();
    const s = normalizeScope(scope);
    assertId(sessionId, 'sessionId');
    if (!Array.isArray(items)) throw new InvalidInputError('items', 'must be an array');
    const transcript = this.transcript;
    if (!transcript) {
      throw new InvalidInputError('transcript', 'this engine has no transcript store (pass `transcript`)');
    }
    this.raiseStrict(s.userId);
    const turns: AppendEnqueue[] = [];
    const refused: RefusedTurn[] = [];
    for (const [i, turn] of (options.turns ?? []).entries()) {
      try {
        if (!Number.isInteger(turn?.index) || turn.index < 0 || turn.index >= items.length) {
          throw new InvalidInputError(`turns[${i}].index`, `must point into items (0..${items.length - 1})`);
        }
        const c = this.checkInput({ scope: s, sessionId, position: 0, ...turn }, i, 'turns');
        turns.push({
          index: turn.index,
          role: c.role,
          text: c.text,
          at: c.at,
          ...(c.ref ? { ref: c.ref } : {}),
        });
      } catch (err) {
        if (this.core.config.strict) throw err;
        // Failure-open: the transcript keeps the item; only its extraction is skipped, and the user can see why
        // (the caller gets it back in `refused`, and it is the user's `lastError` until a later failure or success).
        this.record(s, err, 1);
        this.state(s.userId).refusal = describeError(err);
        refused.push({ turn: i, error: sanitizeError(err) });
      }
    }
    // One message saved twice (through the session and through `saveTurn`, say) is accepted once: a user turn that
    // repeats the conversation's previous user turn within minutes is stored in the transcript, not extracted again.
    const conversation = `${s.userId}\u0000${s.namespace}\u0000${sessionId}`;
    let previous = this.lastUserTurns.get(conversation);
    const fresh: AppendEnqueue[] = [];
    let repeated = 0;
    for (const t of turns) {
      if (t.role !== 'user') {
        fresh.push(t);
        continue;
      }
      const hash = contentHash(t.text);
      const at = Date.parse(t.at);
      if (previous && previous.hash === hash && Math.abs(at - previous.at) <= REPEAT_WINDOW_MS) {
        repeated++;
        continue;
      }
      fresh.push(t);
      previous = { hash, at };
    }
    turns.splice(0, turns.length, ...fresh);
    this.core.stats.duplicatesSkipped += repeated;
    const atomic = (transcript as unknown) === (this.core.store as unknown);
    const result = await this.inCallOrder(
      [s.userId],
      // Items without turns to accept are a plain transcript write; turns are capture, bound to the active grant.
      async () => {
        if (turns.length === 0) return;
        const grantId = (await authorizeCapture(this.core, [s]))(s);
        if (grantId !== undefined) turns.splice(0, turns.length, ...turns.map((t) => ({ ...t, grantId })));
      },
      async () => {
        const appended = await transcript.appendItems(s, sessionId, items, {
          operationId: options.operationId,
          operationFingerprint: options.operationFingerprint,
          replaceSuffix: options.replaceSuffix,
          ...(atomic ? { enqueue: turns } : {}),
        });
        if (appended.duplicate || turns.length === 0) return { ...appended, accepted: 0 };
        if (atomic) return { ...appended, accepted: turns.length };
        // A separate transcript: accept afterwards (idempotent by session, position and content, so a retry converges).
        const inputs: OutboxInput[] = [];
        for (const t of turns) {
          const position = appended.positions[t.index];
          if (position === undefined) continue;
          inputs.push({
            scope: s,
            sessionId,
            position,
            role: t.role,
            text: t.text,
            at: t.at,
            ref: t.ref,
            ...(t.grantId === undefined ? {} : { grantId: t.grantId }),
          });
        }
        const enq = await this.core.store.enqueue(inputs);
        this.core.stats.duplicatesSkipped += enq.duplicates;
        return { ...appended, accepted: enq.accepted };
      },
    );
    this.core.stats.accepted += result.accepted;
    if (previous && !result.duplicate) this.rememberUserTurn(conversation, previous);
    if (result.accepted > 0) this.defer(s.userId);
    if (result.accepted > 0 && refused.length === 0) this.state(s.userId).refusal = null;
    return { positions: result.positions, duplicate: result.duplicate, accepted: result.accepted, refused };
  }

  /**
   * Runs `prepare` (the grant lookup) at once, then `write` as {@link accepting} does, once every earlier accept or
   * append of these users has issued its write: a user's writes reach the store in the order they were called,
   * whatever their lookups take.
   */
  private async inCallOrder<P, T>(
    userIds: readonly string[],
    prepare: () => Promise<P>,
    write: (prepared: P) => Promise<T>,
  ): Promise<T> {
    const states = userIds.map((u) => this.state(u));
    const earlier = states.map((st) => st.issued);
    let issued!: () => void;
    const mine = new Promise<void>((resolve) => {
      issued = resolve;
    });
    for (const st of states) st.issued = mine;
    try {
      const prepared = await prepare();
      await Promise.all(earlier);
      const p = this.accepting(userIds, () => write(prepared));
      issued();
      return await p;
    } finally {
      issued();
    }
  }

  /** Runs a store write that accepts turns of `userIds`, so that their barriers wait for it. */
  private async accepting<T>(userIds: readonly string[], write: () => Promise<T>): Promise<T> {
    const p = write();
    const states = userIds.map((u) => this.state(u));
    for (const st of states) st.accepting.add(p);
    try {
      return await p;
    } finally {
      for (const st of states) st.accepting.delete(p);
    }
  }

  /** Extraction of a user's accepted turns starts on the next tick (or at the next barrier, whichever is first). */
  private defer(userId: string): void {
    const st = this.state(userId);
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
    const st = this.users.get(userId);
    if (!st || (!always && !st.deferred && !(st.retry !== null && st.retryNow))) return;
    st.deferred = false;
    if (st.retry) {
      clearTimeout(st.retry);
      st.retry = null;
    }
    this.schedule(userId);
  }

  /** The latest user turn accepted per conversation, newest conversations last (bounded). */
  private readonly lastUserTurns = new Map<string, { hash: string; at: number }>();

  private rememberUserTurn(conversation: string, turn: { hash: string; at: number }): void {
    this.lastUserTurns.delete(conversation);
    this.lastUserTurns.set(conversation, turn);
    if (this.lastUserTurns.size > MAX_REMEMBERED_CONVERSATIONS) {
      const oldest = this.lastUserTurns.keys().next().value;
      if (oldest !== undefined) this.lastUserTurns.delete(oldest);
    }
  }

  // ---------------------------------------------------------------- the barrier

  /**
   * Waits until the writes accepted for this user so far are processed (or have failed and been recorded). In
   * strict mode, raises a recorded failure.
   */
  async barrier(userId: string): Promise<void> {
    await this.settle(userId);
    this.raiseStrict(userId);
  }

  private async settle(userId: string): Promise<void> {
    // A claim of any user still in flight may be this user's turn: wait until it is on the user's chain.
    if (this.claimsInFlight.size > 0) await Promise.allSettled([...this.claimsInFlight]);
    const st = this.users.get(userId);
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
      for (const userId of this.users.keys()) this.kick(userId, true);
      await Promise.all([...this.users.values()].map((s) => s.tail));
      for (const userId of this.users.keys()) this.raiseStrict(userId);
      return;
    }
    const { userId } = normalizeScope(scope);
    const timeoutMs = options.timeoutMs ?? this.core.config.flushTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0)
      throw new InvalidInputError('timeoutMs', 'must be a non-negative integer');
    const deadline = performance.now() + timeoutMs;
    const st = this.state(userId);
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
    this.raiseStrict(userId);
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
    const st = this.state(s.userId);
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

  private reportPending(st: UserState, pending: number, until: string, why: string): void {
    const message = `${pending} accepted turn${pending === 1 ? ' is' : 's are'} not extracted yet: ${why} until ${until}`;
    st.lastError = message;
    this.core.logger?.warn(`mem01: ${message}`);
    if (this.core.config.strict && st.strictError === undefined) {
      st.strictError = new PendingWritesError(message, { pending, until });
    }
  }

  // ---------------------------------------------------------------- draining

  /** Puts a drain of the user's queued turns on the user's chain. Cheap when one is already waiting there. */
  private schedule(userId: string): void {
    if (this.core.closed) return;
    const st = this.state(userId);
    if (st.queued) return;
    st.queued = true;
    st.tail = st.tail.then(async () => {
      st.queued = false;
      await this.drainUser(userId);
    });
  }

  private async drainUser(userId: string): Promise<void> {
    const st = this.state(userId);
    await this.withUserSlot(async () => {
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
        this.record({ userId }, err, 0);
        this.retryLater(
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
    if (backlog.staleLeases > 0) return this.retryLater(userId, 0);
    if (backlog.queued + backlog.claimed === 0 || backlog.nextClaimableAt === null) return;
    this.retryLater(userId, Math.max(0, Date.parse(backlog.nextClaimableAt) - now) + 5);
  }

  /**
   * A drain of this user after `ms` (unless the engine closes first). `now`: a barrier may start it sooner (a failed
   * store call; see {@link UserState.retryNow}).
   */
  private retryLater(userId: string, ms: number, now = false): void {
    if (this.core.closed) return;
    const st = this.state(userId);
    if (st.retry) clearTimeout(st.retry);
    st.retryNow = now;
    st.retry = setTimeout(() => {
      st.retry = null;
      this.schedule(userId);
    }, ms);
    // A retry must not keep a process alive: a durable outbox keeps the turns for the next start.
    st.retry.unref?.();
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
    this.claimsInFlight.add(pending);
    let claim: OutboxClaim | null;
    try {
      claim = await pending;
    } catch (err) {
      this.claimsInFlight.delete(pending);
      throw err;
    }
    if (!claim) {
      this.claimsInFlight.delete(pending);
      return false;
    }
    const held = claim;
    // The lease is kept alive from the claim on: the claim may wait on the user's chain and for a slot first.
    const heartbeat = this.heartbeat(held);
    const st = this.state(held.scope.userId);
    const run = st.tail.then(() => this.withUserSlot(() => this.processClaim(held, heartbeat)));
    st.tail = run.then(
      () => undefined,
      () => undefined,
    );
    // On the chain now: a barrier that waited for this claim will find it there.
    this.claimsInFlight.delete(pending);
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

  /** Bounded concurrency across users. */
  private async withUserSlot<T>(fn: () => Promise<T>): Promise<T> {
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
    const st = this.state(scope.userId);
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
        this.retryLater(scope.userId, Math.max(0, Date.parse(retryAt) - core.clock().getTime()) + 5);
        return false;
      }
      this.record(scope, err, claim.entries.length);
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
        this.retryLater(
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

  /** Records a pipeline failure of a user: `lastError`, the strict error, counters, an event and a warning. */
  private record(scope: Scope, err: unknown, turns: number): void {
    const st = this.state(scope.userId);
    const message = describeError(err);
    this.core.stats.failures++;
    st.lastError = message;
    if (this.core.config.strict) st.strictError = toStrictError(err);
    this.core.emit({ type: 'error', scope, error: message, turns });
    this.core.logger?.warn(`mem01: memory pipeline failure: ${message}`);
  }

  // ---------------------------------------------------------------- state

  lastError(userId: string): string | null {
    const st = this.users.get(userId);
    return st?.lastError ?? st?.refusal ?? null;
  }

  /** Strict mode: raises (once) a failure recorded for this user. */
  raiseStrict(userId: string): void {
    const st = this.users.get(userId);
    if (!st || st.strictError === undefined) return;
    const err = st.strictError;
    st.strictError = undefined;
    throw err;
  }

  /** Drains what was accepted (deferred turns start now), then stops every timer. */
  async close(): Promise<void> {
    for (const [userId, st] of this.users) {
      if (st.retry) {
        clearTimeout(st.retry);
        st.retry = null;
      }
      if (st.deferred) this.kick(userId);
    }
    await Promise.all([...this.users.values()].map((s) => s.tail));
  }

  private state(userId: string): UserState {
    let st = this.users.get(userId);
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
      this.users.set(userId, st);
    }
    return st;
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

/** A failure as strict mode raises it: sanitised through the whole cause chain, always a `Mem01Error`. */
function toStrictError(err: unknown): Error {
  const clean = sanitizeError(err);
  return clean instanceof Mem01Error
    ? clean
    : new Mem01Error('pipeline_error', `memory pipeline failure: ${describeError(err)}`, { cause: clean });
}

function sleep(ms: number, signal?: AbortSignal | undefined): Promise<void> {
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
