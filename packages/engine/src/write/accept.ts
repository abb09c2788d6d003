/**
 * Acceptance into the write pipeline: the checks a turn passes, the repeat filter (one message saved twice is
 * extracted once), the grant a capture is bound to, and the outbox write, in call order per user. Accepting never
 * waits for extraction: it hands the user to the scheduler, which starts it on the next tick.
 */

import { authorizeCapture } from '../capture.js';
import type { EngineCore } from '../engine-core.js';
import { describeError, InvalidInputError, sanitizeError } from '../errors.js';
import type { AppendEnqueue, OutboxInput, TranscriptStore } from '../ports.js';
import { assertPosition } from '../store-input.js';
import type { Scope } from '../types.js';
import { assertId, assertText, contentHash, normalizeScope } from '../util.js';
import type { Scheduler } from './schedule.js';
import type { UserStates } from './state.js';

/** A user turn repeating the conversation's previous one within this window is the same message saved twice. */
const REPEAT_WINDOW_MS = 10 * 60_000;
/** Conversations whose latest user turn is remembered for that check. */
const MAX_REMEMBERED_CONVERSATIONS = 10_000;

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

/** @internal Accepts turns into the outbox. */
export class Acceptance {
  constructor(
    private readonly core: EngineCore,
    private readonly users: UserStates,
    private readonly scheduler: Scheduler,
    private readonly transcript: TranscriptStore | null,
  ) {}

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
    for (const userId of userIds) this.users.raiseStrict(userId);
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
    for (const userId of userIds) this.scheduler.defer(userId);
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
    this.users.raiseStrict(s.userId);
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
        this.users.record(s, err, 1);
        this.users.state(s.userId).refusal = describeError(err);
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
    if (result.accepted > 0) this.scheduler.defer(s.userId);
    if (result.accepted > 0 && refused.length === 0) this.users.state(s.userId).refusal = null;
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
    const states = userIds.map((u) => this.users.state(u));
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
    const states = userIds.map((u) => this.users.state(u));
    for (const st of states) st.accepting.add(p);
    try {
      return await p;
    } finally {
      for (const st of states) st.accepting.delete(p);
    }
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
}
