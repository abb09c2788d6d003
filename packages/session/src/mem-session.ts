/**
 * `MemSession`: an Agents SDK `Session` whose transcript lives in a mem01 store and whose textual turns feed
 * the user's long-term belief memory.
 */
import { createHash } from 'node:crypto';
import {
  BELIEF_KINDS,
  type Belief,
  type BeliefKind,
  type BudgetUsage,
  ClosedError,
  type EraseReceipt,
  InvalidInputError,
  Mem01Error,
  type Scope,
} from '@mem01/engine';
import {
  type AppendEnqueue,
  assertId,
  assertText,
  BELIEF_STATUSES,
  describeError,
  MAX_LIST_LIMIT,
  normalizeScope,
  operationConflictError,
  sanitizeError,
  snapshotItem,
  stableJson,
  suffixMismatchError,
} from '@mem01/engine/binding-kit';
import {
  acquireRuntime,
  checkGivenRuntime,
  type MemoryRuntimeOptions,
  type MemoryRuntime as Runtime,
  type RuntimeLease,
  type RuntimeSpec,
  resolveRuntime,
  resolveWorkingMemorySize,
  type WorkingMemorySize,
} from '@mem01/runtime';
// Types only: the session is structural, so loading it never loads the SDK (nor ties it to one SDK version).
import type { AgentInputItem, Session } from '@openai/agents';
import { SessionHistoryError } from './errors.js';
import { injectedBlocks, lastTurnsStart, turnOf } from './items.js';
import { createRunConfig, type MemoryRunConfig } from './run-hooks.js';
import {
  applyMutations,
  checkMutations,
  checkTransaction,
  type HistoryMutationArgs,
  type HistoryTransactionArgs,
  SDK_MESSAGES,
} from './session-history.js';

/**
 * Every kind but `reply` (the assistant's own words, listed only when `kinds` names them): the beliefs, the episodes,
 * the conversation summaries and the notes.
 */
const KINDS_BUT_REPLIES = BELIEF_KINDS.filter((k) => k !== 'reply');

/** Options of {@link memSession}. */
export interface MemSessionOptions extends MemoryRuntimeOptions {
  /** Whose memory this conversation reads and feeds. Required. */
  readonly userId: string;
  /** Optional partition of the user's memory (a project or an agent). */
  readonly namespace?: string | undefined;
  /**
   * `false`: the session keeps its transcript in the shared store but never reads or feeds long-term memory (no
   * recall into runs, nothing accepted for extraction). Default true.
   */
  readonly longTerm?: boolean | undefined;
  /**
   * Called with the (sanitised) error whenever long-term memory degrades: a failed recall or enqueue, a failed
   * barrier, and an extraction failure, reported at this session's next operation. Beside `lastMemoryError` and
   * the logger; an exception thrown by the callback is ignored.
   */
  readonly onError?: ((error: Error) => void) | undefined;
  /**
   * Working memory: how many of the latest user turns of this conversation (each with what follows it) recall leaves
   * out, since the model reads them in the session history; their episodes, and beliefs drawn from them alone, are
   * not recalled into the block. A count of user turns (0: recall from the whole conversation too), or `'all'`: the
   * whole conversation, as the session hands the model its whole history. Default `MEM01_WORKING_MEMORY_SIZE`, else
   * `'all'`. What the user said in other conversations is recalled either way.
   */
  readonly workingMemorySize?: WorkingMemorySize | undefined;
}

/** Options of {@link MemSession.memoryHistory}. */
export interface MemoryHistoryOptions {
  /**
   * Include superseded, retracted and forgotten beliefs (tombstones carry no content), and what a capture grant that
   * has ended (revoked or expired) captured (each with its `grantId`). Default false.
   */
  readonly includeInvalidated?: boolean | undefined;
  /** At most this many, the newest. Default all. */
  readonly limit?: number | undefined;
  /** Only beliefs with evidence from this conversation (for example what one conversation taught). */
  readonly sessionId?: string | undefined;
  /**
   * Only these kinds (`['episode']`: what the user said, turn by turn; `['summary']`: the conversation summaries, one
   * per conversation, with `sessionId` the summary of that one). Default every kind but `reply`: the beliefs, the
   * episodes, the summaries and the notes (the assistant's replies are listed only when named here).
   */
  readonly kinds?: readonly BeliefKind[] | undefined;
}

/**
 * Creates a session for conversation `sessionId` of `options.userId`. Pass it to `Runner.run` together with a
 * fresh `session.runConfig()` for long-term memory; alone, it is a plain transcript session.
 *
 * @example
 * const session = memSession('conversation-7', { userId: 'user-123' });
 * const result = await new Runner().run(agent, 'Where do I live?', { session, ...session.runConfig() });
 * await session.close();
 */
export function memSession(sessionId: string, options: MemSessionOptions): MemSession {
  return new MemSession(sessionId, options);
}

/**
 * A `Session` (item-for-item like the SDK's `MemorySession`) plus the memory hooks and memory management.
 * Sessions with identical settings share one runtime; `close()` releases this session's share.
 */
export class MemSession implements Session {
  readonly sessionId: string;
  readonly scope: Readonly<{ userId: string; namespace: string }>;
  /** Raise memory failures instead of degrading: the runtime engine's `strict`, however it was set. */
  readonly strict: boolean;
  /** The user turns of this conversation left out of recall (see {@link MemSessionOptions.workingMemorySize}). */
  readonly workingMemorySize: WorkingMemorySize;
  /**
   * The transcript position of each item `getItems()` returned whole, by object: the SDK hands those very objects to
   * `sessionInputCallback` as the history, and the run hooks find where working memory begins by them.
   */
  private readonly positions = new WeakMap<object, number>();
  private readonly spec: ReturnType<typeof resolveRuntime> | null;
  /** A runtime the caller opened and owns (`options.runtime`). */
  private readonly given: Runtime | null;
  private lease: RuntimeLease | null = null;
  private closed = false;
  private localError: string | null = null;
  private lastQuery = '';
  private opened: Runtime | null = null;
  private readonly longTerm: boolean;
  private readonly onError: ((error: Error) => void) | undefined;
  /** The pipeline failure last reported to `onError`, so each one is reported once. */
  private reportedPipelineError: string | null = null;

  constructor(sessionId: string, options: MemSessionOptions) {
    assertId(sessionId, 'sessionId');
    if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
    this.sessionId = sessionId;
    this.scope = normalizeScope({ userId: options.userId, namespace: options.namespace });
    if (options.longTerm !== undefined && typeof options.longTerm !== 'boolean') {
      throw new InvalidInputError('longTerm', 'must be a boolean');
    }
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw new InvalidInputError('onError', 'must be a function');
    }
    this.workingMemorySize = resolveWorkingMemorySize(options.workingMemorySize, options.env ?? process.env);
    this.longTerm = options.longTerm ?? true;
    this.onError = options.onError;
    this.given = checkGivenRuntime(options);
    this.spec = this.given ? null : resolveRuntime(options);
    this.strict = this.given ? this.given.engine.config.strict : (this.spec as RuntimeSpec).strict;
  }

  /** The shared runtime, opened on first use. */
  async runtime(): Promise<Runtime> {
    if (this.closed) throw new ClosedError(`memSession ${this.sessionId}`);
    let runtime: Runtime;
    if (this.given) {
      runtime = this.given;
    } else {
      this.lease ??= acquireRuntime(this.spec as RuntimeSpec);
      runtime = await this.lease.runtime;
    }
    this.opened = runtime;
    if (runtime.engine.isClosed) throw new ClosedError('mem01session runtime');
    this.reportPipelineError(runtime);
    return runtime;
  }

  /** An extraction failure recorded since the last operation goes to `onError`, once. */
  private reportPipelineError(runtime: Runtime): void {
    if (!this.onError || !this.longTerm) return;
    const current = runtime.engine.lastError(this.scope);
    if (current === null) {
      this.reportedPipelineError = null;
      return;
    }
    if (current === this.reportedPipelineError) return;
    this.reportedPipelineError = current;
    this.notify(new Mem01Error('pipeline_error', `memory pipeline failure: ${current}`));
  }

  private notify(error: Error): void {
    try {
      this.onError?.(error);
    } catch {
      // A failing callback must not break the run it reports on.
    }
  }

  // ---------------------------------------------------------------- Session

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The newest `limit` items in chronological order (all without `limit`; none when `limit <= 0`), as copies. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const rt = await this.runtime();
    if (limit !== undefined && limit <= 0) return [];
    const items = await rt.transcript.getItems(this.scope, this.sessionId, limit);
    const copies = items.map((item) => structuredClone(item) as AgentInputItem);
    // The whole transcript: its items are at positions 0..n-1 (the transcript contract).
    if (limit === undefined) {
      copies.forEach((item, i) => {
        this.positions.set(item, i);
      });
    }
    return copies;
  }

  /**
   * Stores the raw items (without the synthetic memory item) and, in the same transaction, accepts every
   * textual user and assistant message for extraction. Each item must be a plain JSON object (what every store
   * returns as given); anything else throws `InvalidInputError('items[i]', …)` naming the index, and nothing is
   * stored.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidInputError('items', 'must be an array');
    if (items.length === 0) return;
    const plain = items.map((item, i) => snapshotItem(item, `items[${i}]`));
    await this.append(plain, {});
  }

  /**
   * Removes and returns the newest item. Another user's (or namespace's) conversation with this id throws
   * `InvalidInputError('owner', …)` and changes nothing.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const rt = await this.runtime();
    const item = await rt.transcript.popItem(this.scope, this.sessionId);
    return item === undefined ? undefined : (structuredClone(item) as AgentInputItem);
  }

  /**
   * Removes the transcript of this conversation and its recorded operation ids. Beliefs are not touched (see
   * {@link clearMemory}). Another user's (or namespace's) conversation with this id throws
   * `InvalidInputError('owner', …)` and changes nothing.
   */
  async clearSession(): Promise<void> {
    const rt = await this.runtime();
    await rt.transcript.clearSession(this.scope, this.sessionId);
  }

  /**
   * Applies an SDK history transaction atomically and idempotently, under the SDK's contract and with its error
   * wording: a retried operation id with the same transaction is a no-op; with a different one (also after an
   * empty append) it fails unchanged, as does a suffix that no longer matches. Arguments and items are checked
   * first, as the SDK's `MemorySession` checks them: a refused item is named by its index, never its content.
   * Every refusal is a {@link SessionHistoryError}, and nothing is written or recorded.
   */
  async applyHistoryTransaction(args: HistoryTransactionArgs<AgentInputItem>): Promise<void> {
    const { operationId, transaction } = checkTransaction(args);
    const rt = await this.runtime();
    const keep = (item: unknown) => !injectedBlocks(rt).isInjected(item);
    const fingerprint = createHash('sha256').update(stableJson(transaction)).digest('hex');
    try {
      if (transaction.type === 'append_items') {
        await this.append(
          transaction.items.filter(keep),
          { operationId, operationFingerprint: fingerprint },
          true,
        );
      } else {
        await this.append(
          transaction.replacement.filter(keep),
          {
            operationId,
            operationFingerprint: fingerprint,
            replaceSuffix: transaction.expectedSuffix.filter(keep),
          },
          true,
        );
      }
    } catch (err) {
      throw asHistoryError(err);
    }
  }

  /**
   * The SDK's `applyHistoryMutations`: each `replace_function_call` mutation puts its replacement where the first
   * stored function call of its `callId` is and drops the other calls of that id. All mutations apply atomically,
   * as one replacement of the changed end of the transcript; if the transcript changed meanwhile, it fails
   * unchanged ({@link SessionHistoryError} `history_suffix_mismatch`). Turns already accepted for extraction are
   * not accepted again.
   */
  async applyHistoryMutations(args: HistoryMutationArgs<AgentInputItem>): Promise<void> {
    const mutations = checkMutations(args);
    if (mutations.length === 0) return;
    const rt = await this.runtime();
    const current = await rt.transcript.getItems(this.scope, this.sessionId);
    const next = applyMutations(current, mutations);
    let from = 0;
    while (
      from < current.length &&
      from < next.length &&
      stableJson(current[from]) === stableJson(next[from])
    ) {
      from++;
    }
    if (from === current.length && from === next.length) return;
    try {
      await rt.engine.appendTranscript(this.scope, this.sessionId, next.slice(from), {
        replaceSuffix: current.slice(from),
        turns: [],
      });
    } catch (err) {
      throw asHistoryError(err);
    }
  }

  private async append(
    items: readonly unknown[],
    options: {
      readonly operationId?: string;
      readonly operationFingerprint?: string;
      readonly replaceSuffix?: readonly unknown[];
    },
    always = false,
  ): Promise<void> {
    const rt = await this.runtime();
    // The items are already plain copies (checked by the caller), never the caller's objects.
    const kept = items.filter((item) => !injectedBlocks(rt).isInjected(item));
    if (kept.length === 0 && !always) return;
    const at = new Date().toISOString();
    const turns: AppendEnqueue[] = [];
    if (this.longTerm) {
      kept.forEach((item, index) => {
        const turn = turnOf(item);
        if (turn) turns.push({ index, role: turn.role, text: turn.text, at });
      });
    }
    // The engine stores the items and accepts the turns in one transaction, and its read barrier knows about them:
    // the user's next recall, in this run or the next, waits for their extraction. An unacceptable turn fails the
    // call in strict mode before anything is written, and is recorded (its item still stored) otherwise.
    const result = await rt.engine.appendTranscript(this.scope, this.sessionId, kept, { ...options, turns });
    // A refused turn (too long, say) is stored but never remembered: say so now, not at some later operation.
    for (const refusal of result.refused) {
      this.notify(refusal.error);
    }
    if (result.refused.length > 0) this.reportedPipelineError = rt.engine.lastError(this.scope);
  }

  // ---------------------------------------------------------------- runs

  /**
   * Fresh hooks for ONE run: spread them into the run options together with `session`. Using the same config
   * for a second run, or for two runs at once, throws `RunConfigReusedError`.
   */
  runConfig(): MemoryRunConfig {
    if (this.closed) throw new ClosedError(`memSession ${this.sessionId}`);
    if (!this.longTerm) return passThroughRunConfig();
    return createRunConfig({
      scope: this.scope,
      strict: this.strict,
      runtime: () => this.runtime(),
      recordError: (err) => this.recordError(err),
      recordSuccess: () => {
        this.localError = null;
      },
      noteQuery: (q) => {
        this.lastQuery = q;
      },
      workingMemory: (history) => this.workingMemoryOf(history),
    });
  }

  /**
   * Where the last `workingMemorySize` user turns of `history` begin in this conversation's transcript; undefined
   * for size 0, an empty history, or items this session did not read (then recall leaves nothing out).
   */
  private workingMemoryOf(
    history: readonly unknown[],
  ): { sessionId: string; fromPosition: number } | undefined {
    if (this.workingMemorySize === 0) return undefined;
    const first = history[lastTurnsStart(history, this.workingMemorySize)];
    const fromPosition = first && typeof first === 'object' ? this.positions.get(first) : undefined;
    return fromPosition === undefined ? undefined : { sessionId: this.sessionId, fromPosition };
  }

  /** The recall query of the latest run of this session (the latest user text). */
  get latestQuery(): string {
    return this.lastQuery;
  }

  // ---------------------------------------------------------------- memory management

  /**
   * The user's beliefs, oldest first (by id, which is time-ordered); with `includeInvalidated`, retired ones,
   * tombstones and what an ended capture grant captured too. Filtered and paged in the store: `limit` reads only the
   * newest `limit` matches.
   */
  async memoryHistory(options: MemoryHistoryOptions = {}): Promise<Belief[]> {
    const limit = options.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new InvalidInputError('limit', 'must be a positive integer');
    }
    if (options.sessionId !== undefined) assertId(options.sessionId, 'sessionId');
    if (options.kinds !== undefined && !Array.isArray(options.kinds)) {
      throw new InvalidInputError('kinds', 'must be an array of belief kinds');
    }
    const rt = await this.runtime();
    if (options.kinds?.length === 0) return [];
    const newestFirst: Belief[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof rt.engine.list>> = await rt.engine.list(this.scope, {
        statuses: options.includeInvalidated ? BELIEF_STATUSES : ['active', 'pending'],
        includeEndedGrants: options.includeInvalidated === true,
        // The assistant's replies only when asked for: the history is what is known about the user.
        kinds: options.kinds ?? KINDS_BUT_REPLIES,
        sessionId: options.sessionId,
        limit: Math.min(MAX_LIST_LIMIT, limit === undefined ? MAX_LIST_LIMIT : limit - newestFirst.length),
        cursor,
      });
      newestFirst.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null && (limit === undefined || newestFirst.length < limit));
    return newestFirst.reverse();
  }

  /**
   * Writes the summary of one of this user's conversations (default: this session's own), after the user's accepted
   * writes: the engine's `summarize`. A compressed, dated `summary` belief (subject `conversation`, attribute
   * `summary:<sessionId>`, `validFrom`/`validTo` the conversation's first and last turn, evidence the turns it quotes)
   * drawn from the turns of that conversation that are still remembered (what the user said, first of all), by the
   * runtime engine's summarizer (offline and extractive by default). A new summary of the same conversation supersedes the last (its history
   * stays); the same text confirms it. `memoryHistory({ kinds: ['summary'], sessionId })` lists it; recall may bring it
   * into the block as `[conversation YYYY-MM-DD] …`.
   *
   * Only this session's user + namespace: another user's conversation with the same id has nothing of this user's to
   * summarize. Returns the active summary, or null when the conversation has nothing left to summarize (no turn, or
   * only questions); its last summary, if any, is then retracted. An id that is not a valid conversation id (empty, too
   * long, control characters) throws `InvalidInputError('sessionId', …)`.
   */
  async summarizeConversation(sessionId: string = this.sessionId): Promise<Belief | null> {
    assertId(sessionId, 'sessionId');
    const rt = await this.runtime();
    return rt.engine.summarize(this.scope, sessionId);
  }

  /** A user's correction: the belief is superseded by `text` with full confidence. Returns the new belief. */
  async correctMemory(id: string, text: string): Promise<Belief> {
    const rt = await this.runtime();
    return rt.engine.correct(this.scope, id, text);
  }

  /**
   * Forgets a belief: its content leaves every read path (with its episodes, see the engine's `forget`), a
   * content-free tombstone stays, and the user's transcripts are redacted: the turns it came from read
   * `[forgotten]`, the user's other items lose the belief's value and statement. `reason` is checked and logged
   * (without the belief's text); the audit log stays content-free.
   */
  async forgetMemory(id: string, options: { readonly reason?: string | undefined } = {}): Promise<Belief> {
    if (options.reason !== undefined) assertText(options.reason, 'reason', 1000);
    const rt = await this.runtime();
    const tombstone = await rt.engine.forget(this.scope, id);
    if (options.reason)
      rt.logger?.info(`mem01: belief ${id} forgotten (reason given: ${options.reason.length} chars)`);
    return tombstone;
  }

  /**
   * What this user used of each budget in the current window (the engine's `usage`): extractor calls and tokens,
   * embedder calls and tokens, as counted in the store by every runtime sharing it, and the active beliefs, each with
   * this runtime's limit (null: none), and the window's start and end. Does not wait for queued turns.
   */
  async memoryUsage(): Promise<BudgetUsage> {
    const rt = await this.runtime();
    return rt.engine.usage(this.scope);
  }

  /** Waits until this user's accepted turns are extracted. In strict mode, raises a recorded failure. */
  async flushMemory(): Promise<void> {
    const rt = await this.runtime();
    await rt.engine.flush(this.scope);
  }

  /**
   * Erases this user's memory in this namespace for good, after the user's accepted writes: every belief in every
   * status (superseded, retracted and pending ones, episodes, forgotten tombstones) with its embedding, and the
   * scope's outbox entries, audit records, operation keys and capture grants, in one store transaction. Nothing of
   * it stays: {@link memoryHistory} with `includeInvalidated` returns nothing afterwards. Transcripts are not touched,
   * this one included (see {@link clearSession}); nor are the user's other namespaces or budget counters. Returns
   * what was deleted (`transcriptItems` is 0).
   */
  async clearMemory(): Promise<EraseReceipt> {
    const rt = await this.runtime();
    return rt.engine.eraseScope(this.scope);
  }

  /** The latest memory failure for this user (recall here, or extraction in the pipeline), sanitized; else null. */
  get lastMemoryError(): string | null {
    if (this.localError) return this.localError;
    const rt = this.opened;
    return rt && !rt.engine.isClosed ? rt.engine.lastError(this.scope) : null;
  }

  /** @internal */
  recordError(err: unknown): void {
    const message = describeError(err);
    this.localError = message;
    this.opened?.logger?.warn(`mem01: ${message}`);
    this.notify(sanitizeError(err));
  }

  /** Releases this session's share of the runtime; the last one drains accepted writes and closes it. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const lease = this.lease;
    this.lease = null;
    if (lease) await lease.release();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** `await using session = memSession(...)`: closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Shows ids and scope only: no stores, keys or connection strings. */
  toJSON(): Record<string, unknown> {
    return { type: 'MemSession', sessionId: this.sessionId, scope: this.scope, strict: this.strict };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemSession ${JSON.stringify(this.toJSON())}`;
  }
}

/** Hooks that leave the run as the SDK would run it without memory (`longTerm: false`). */
function passThroughRunConfig(): MemoryRunConfig {
  return {
    sessionInputCallback: (history, newItems) => [...history, ...newItems],
    callModelInputFilter: ({ modelData }) => modelData,
  };
}

/** The store's refusals of a history change, in the SDK's words; other errors pass unchanged. */
function asHistoryError(err: unknown): unknown {
  if (!(err instanceof InvalidInputError)) return err;
  if (err.message === operationConflictError().message) {
    return new SessionHistoryError('history_operation_conflict', SDK_MESSAGES.conflict, {
      field: 'operationId',
      cause: err,
    });
  }
  if (err.message === suffixMismatchError().message) {
    return new SessionHistoryError('history_suffix_mismatch', SDK_MESSAGES.suffix, {
      field: 'transaction.expectedSuffix',
      cause: err,
    });
  }
  return err;
}

/** @internal Scope helper for the other entry points. */
export function scopeOf(options: { userId: string; namespace?: string | undefined }): Scope {
  return normalizeScope({ userId: options.userId, namespace: options.namespace });
}
