/**
 * `MemoryEngine`: `MemoryAdmin` plus the per-user write pipeline (accept → claim → extract → reconcile → commit) and
 * its read barrier. A thin facade: the pipeline lives in `write-pipeline.ts`, recall in `recall-service.ts`, the
 * lifecycle operations in `lifecycle.ts`.
 */

import { authorizeCapture } from './capture.js';
import type { EngineCoreOptions } from './engine-core.js';
import { InvalidInputError } from './errors.js';
import type { RememberInput, RememberOptions } from './lifecycle.js';
import { MemoryAdmin } from './memory-admin.js';
import { assertKey } from './operations.js';
import { guardPort } from './port-guard.js';
import type { CapturePolicy, Extractor, OutboxInput, TranscriptStore } from './ports.js';
import {
  checkRememberText,
  type RememberTextOptions,
  type RememberTextResult,
  rememberText,
} from './remember-text.js';
import type { Belief, Scope } from './types.js';
import { assertId, newId, normalizeScope } from './util.js';
import {
  type AcceptOptions,
  type AcceptResult,
  type AppendTranscriptOptions,
  type AppendTranscriptResult,
  type RunWorkerOptions,
  type SettleResult,
  type TurnRef,
  WritePipeline,
} from './write-pipeline.js';

export interface MemoryEngineOptions extends EngineCoreOptions {
  readonly extractor: Extractor;
  /**
   * Where transcripts live, for {@link MemoryEngine.appendTranscript}. Default: the store, when it keeps
   * transcripts (every mem01 store does), so that a turn is stored and accepted in one transaction.
   */
  readonly transcript?: TranscriptStore | undefined;
  /** Name of this worker in outbox claims. Default a random id. */
  readonly workerId?: string | undefined;
  /**
   * The host's capture policy: run by the planner on every belief (and episode) extraction would insert, before the
   * commit; its revision is recorded with each decision in the audit log. Without one, the engine's own rules decide.
   */
  readonly capturePolicy?: CapturePolicy | undefined;
}

/** The mem01 engine. One per process and store is typical; it is safe to share between sessions. */
export class MemoryEngine extends MemoryAdmin {
  readonly extractor: Extractor;
  readonly workerId: string;
  /** Where {@link appendTranscript} writes, or null when neither the store nor the options give one. */
  readonly transcript: TranscriptStore | null;
  private readonly pipeline: WritePipeline;

  constructor(options: MemoryEngineOptions) {
    super(options);
    if (!options.extractor || typeof options.extractor.extract !== 'function') {
      throw new InvalidInputError('extractor', 'is required and must have extract()');
    }
    this.extractor = guardPort(options.extractor);
    this.workerId = options.workerId ?? `worker-${newId()}`;
    const transcript =
      options.transcript ??
      (isTranscriptStore(options.store) ? (options.store as unknown as TranscriptStore) : null);
    this.transcript = transcript && guardPort(transcript);
    const policy = options.capturePolicy;
    if (policy !== undefined) {
      if (!policy || typeof policy !== 'object' || typeof policy.decide !== 'function')
        throw new InvalidInputError('capturePolicy', 'must be { revision, decide(candidate, review) }');
      assertId(policy.revision, 'capturePolicy.revision');
    }
    this.pipeline = new WritePipeline(
      this.core,
      this.extractor,
      this.transcript,
      this.workerId,
      policy ?? null,
    );
  }

  /**
   * Remembers for `scope`, outside a conversation.
   *
   * - Structured (`{ kind, attribute, value, ... }`): that belief, as in {@link MemoryAdmin.remember}.
   * - Free text: the extractor turns it into beliefs, planned like extraction (a same value confirms, a new value
   *   supersedes); when it draws none, the text is kept as written, as a belief of kind `note`. `stored` says which.
   *   `source` (a label of the host's, with `sourceRef`) is kept as the new beliefs' `origin`; `state: 'pending'`
   *   holds them for review; `key` makes the call idempotent. Budgets apply (`config.budgets`).
   *
   * Both are a capture: with `config.requireCaptureGrant`, refused with `CaptureNotAuthorizedError` (nothing written)
   * unless the scope holds a valid grant. Waits for the user's accepted writes first.
   */
  override remember(scope: Scope, input: RememberInput, options?: RememberOptions): Promise<Belief>;
  override remember(scope: Scope, text: string, options?: RememberTextOptions): Promise<RememberTextResult>;
  override async remember(
    scope: Scope,
    input: RememberInput | string,
    options?: RememberOptions | RememberTextOptions,
  ): Promise<Belief | RememberTextResult> {
    if (typeof input !== 'string') return super.remember(scope, input, options as RememberOptions);
    const s = this.open(scope);
    const checked = checkRememberText(this.core, input, options);
    assertKey(this.core, checked.options.key);
    const grantId = (await authorizeCapture(this.core, [s]))(s);
    await this.beforeUserOperation(s.userId);
    return rememberText(this.core, this.extractor, s, checked.text, checked.options, checked.origin, grantId);
  }

  protected override beforeUserOperation(userId: string): Promise<void> {
    return this.pipeline.barrier(userId);
  }

  /** An erase waits as `flush(scope)` does: for turns another worker's lease holds too, up to the flush timeout. */
  protected override beforeErase(scope: Required<Scope>): Promise<void> {
    return this.pipeline.flush(scope);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Accepts turns into the durable outbox. Resolves once they are accepted (durably, for a durable store), not
   * when they are extracted: extraction starts on the next tick, and the user's next read waits for it. In strict
   * mode a failure recorded for one of these users is raised here first. Returns the counts and the turns given (as
   * refs for {@link settle}); with `skipRepeats`, a user turn repeating its conversation's previous one is skipped.
   */
  accept(inputs: readonly OutboxInput[], options?: AcceptOptions): Promise<AcceptResult> {
    return this.pipeline.accept(inputs, options);
  }

  /**
   * Appends items to `scope`'s session transcript and accepts `options.turns` for extraction, in one transaction
   * when the transcript is the store. Like {@link accept}, it does not wait for extraction, and the user's next
   * read waits for these turns. A turn that cannot be accepted (oversized, say) fails the call before anything is
   * written in strict mode; otherwise the items are stored, that turn is not extracted, and `lastError` says why.
   */
  appendTranscript(
    scope: Scope,
    sessionId: string,
    items: readonly unknown[],
    options: AppendTranscriptOptions = {},
  ): Promise<AppendTranscriptResult> {
    return this.pipeline.appendTranscript(scope, sessionId, items, options);
  }

  /** Validates a turn for the outbox. Exposed so bindings can check turns before they write anything. */
  checkInput(input: OutboxInput, index = 0): OutboxInput {
    return this.pipeline.checkInput(input, index);
  }

  /** Processes everything queued in the store, for every user (for example after a crash). */
  resume(): Promise<void> {
    return this.pipeline.resume();
  }

  /**
   * A worker loop for multi-process deployments: claims any user's turns, processes them, and polls when idle.
   * Runs until `signal` aborts or the engine closes.
   */
  runWorker(options: RunWorkerOptions = {}): Promise<void> {
    return this.pipeline.runWorker(options);
  }

  /**
   * Waits until the accepted writes of one user (or of every user this engine knows) are processed. For one user
   * it also waits, up to `timeoutMs` (default `config.flushTimeoutMs`), for turns another worker's lease holds;
   * turns still unprocessed then are reported in `lastError`. In strict mode, raises a failure recorded for the
   * user (`PendingWritesError` for turns left unprocessed).
   */
  async flush(scope?: Scope, options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    try {
      await this.pipeline.flush(scope, options);
    } finally {
      // Access counts gathered in memory are written too (of every scope: one small batch each).
      await this.core.access?.flush();
    }
  }

  /**
   * The last pipeline failure for a user, sanitized; null when the last attempt succeeded. A turn refused at
   * acceptance (too long, invalid) stays reported after later extractions succeed, until a later append of this user
   * is accepted whole or another failure replaces it: that turn will never be remembered.
   */
  /**
   * Waits as {@link flush} does for the user of `scope` (their accepted turns, including ones another worker's lease
   * holds, up to `timeoutMs`), then returns the ids of the beliefs the extraction of `turns` (as `accept` returned
   * them) committed and still active or pending, new or confirmed, and how many of the user's accepted turns are still
   * waiting. A turn extracted by another process is found by the evidence of the user's newest beliefs.
   */
  settle(
    scope: Scope,
    turns: readonly TurnRef[],
    options: { readonly timeoutMs?: number | undefined } = {},
  ): Promise<SettleResult> {
    return this.pipeline.settleTurns(scope, turns, options);
  }

  lastError(scope: Scope): string | null {
    return this.pipeline.lastError(normalizeScope(scope).userId);
  }

  /** Drains every accepted write, then refuses further calls. The store stays open (it is the caller's). */
  override async close(): Promise<void> {
    if (this.isClosed) return;
    await this.pipeline.close();
    await super.close();
  }
}

function isTranscriptStore(value: unknown): boolean {
  const s = value as Partial<Record<keyof TranscriptStore, unknown>> | null;
  return (
    !!s &&
    typeof s.appendItems === 'function' &&
    typeof s.getItems === 'function' &&
    typeof s.popItem === 'function' &&
    typeof s.clearSession === 'function'
  );
}
