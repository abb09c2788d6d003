/**
 * `MemoryEngine`: `MemoryAdmin` plus the per-user write pipeline (accept → claim → extract → reconcile → commit) and
 * its read barrier. A thin facade: the pipeline lives in `write-pipeline.ts`, recall in `recall-service.ts`, the
 * lifecycle operations in `lifecycle.ts`.
 */
import type { EngineCoreOptions } from './engine-core.js';
import { InvalidInputError } from './errors.js';
import { MemoryAdmin } from './memory-admin.js';
import type { Extractor, OutboxInput, TranscriptStore } from './ports.js';
import type { Scope } from './types.js';
import { newId, normalizeScope } from './util.js';
import {
  type AppendTranscriptOptions,
  type AppendTranscriptResult,
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
    this.extractor = options.extractor;
    this.workerId = options.workerId ?? `worker-${newId()}`;
    this.transcript =
      options.transcript ??
      (isTranscriptStore(options.store) ? (options.store as unknown as TranscriptStore) : null);
    this.pipeline = new WritePipeline(this.core, this.extractor, this.transcript, this.workerId);
  }

  protected override beforeUserOperation(userId: string): Promise<void> {
    return this.pipeline.barrier(userId);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Accepts turns into the durable outbox. Resolves once they are accepted (durably, for a durable store), not
   * when they are extracted: extraction starts on the next tick, and the user's next read waits for it. In strict
   * mode a failure recorded for one of these users is raised here first.
   */
  accept(inputs: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }> {
    return this.pipeline.accept(inputs);
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
  runWorker(
    options: {
      readonly signal?: AbortSignal | undefined;
      readonly pollMs?: number | undefined;
      readonly userId?: string | undefined;
    } = {},
  ): Promise<void> {
    return this.pipeline.runWorker(options);
  }

  /**
   * Waits until the accepted writes of one user (or of every user this engine knows) are processed. For one user
   * it also waits, up to `timeoutMs` (default `config.flushTimeoutMs`), for turns another worker's lease holds;
   * turns still unprocessed then are reported in `lastError`. In strict mode, raises a failure recorded for the
   * user (`PendingWritesError` for turns left unprocessed).
   */
  flush(scope?: Scope, options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    return this.pipeline.flush(scope, options);
  }

  /** The last pipeline failure for a user, sanitized; null when the last attempt succeeded. */
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
