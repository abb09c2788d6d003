/**
 * `MemSession`: an Agents SDK `Session` whose transcript lives in a mem01 store and whose textual turns feed
 * the user's long-term belief memory.
 */
import { createHash } from 'node:crypto';
import {
  type Belief,
  ClosedError,
  describeError,
  InvalidInputError,
  normalizeScope,
  type OutboxInput,
  type Scope,
} from '@mem01/engine';
import { type AppendEnqueue, assertId, assertText, stableJson } from '@mem01/engine/store-kit';
import type {
  AgentInputItem,
  SessionHistoryTransaction,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents';
import { turnOf } from './items.js';
import {
  checkGivenRuntime,
  type MemoryRuntimeOptions,
  type Runtime,
  type RuntimeSpec,
  resolveRuntime,
} from './resolve-runtime.js';
import { createRunConfig, type MemoryRunConfig } from './run-hooks.js';
import { acquireRuntime, type RuntimeLease } from './runtime-registry.js';

/** Options of {@link memSession}. */
export interface MemSessionOptions extends MemoryRuntimeOptions {
  /** Whose memory this conversation reads and feeds. Required. */
  readonly userId: string;
  /** Optional partition of the user's memory (a project or an agent). */
  readonly namespace?: string | undefined;
}

/** Options of {@link MemSession.memoryHistory}. */
export interface MemoryHistoryOptions {
  /** Include superseded, retracted and forgotten beliefs (tombstones carry no content). Default false. */
  readonly includeInvalidated?: boolean | undefined;
  /** At most this many, the newest. Default all. */
  readonly limit?: number | undefined;
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
export class MemSession implements SessionHistoryTransactionAwareSession {
  readonly sessionId: string;
  readonly scope: Readonly<{ userId: string; namespace: string }>;
  readonly strict: boolean;
  private readonly spec: ReturnType<typeof resolveRuntime> | null;
  /** A runtime the caller opened and owns (`options.runtime`). */
  private readonly given: Runtime | null;
  private lease: RuntimeLease | null = null;
  private closed = false;
  private localError: string | null = null;
  private lastQuery = '';
  private opened: Runtime | null = null;

  constructor(sessionId: string, options: MemSessionOptions) {
    assertId(sessionId, 'sessionId');
    if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
    this.sessionId = sessionId;
    this.scope = normalizeScope({ userId: options.userId, namespace: options.namespace });
    this.strict = options.strict ?? false;
    this.given = checkGivenRuntime(options);
    this.spec = this.given ? null : resolveRuntime(options);
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
    return runtime;
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
    return items.map((item) => structuredClone(item) as AgentInputItem);
  }

  /**
   * Stores the raw items (without the synthetic memory item) and, in the same transaction, accepts every
   * textual user and assistant message for extraction.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidInputError('items', 'must be an array');
    if (items.length === 0) return;
    await this.append(items, {});
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const rt = await this.runtime();
    const item = await rt.transcript.popItem(this.scope, this.sessionId);
    return item === undefined ? undefined : (structuredClone(item) as AgentInputItem);
  }

  /** Removes the transcript of this conversation. Beliefs are not touched (see {@link clearMemory}). */
  async clearSession(): Promise<void> {
    const rt = await this.runtime();
    await rt.transcript.clearSession(this.scope, this.sessionId);
  }

  /**
   * Applies an SDK history transaction atomically and idempotently: a retried operation id with the same
   * transaction is a no-op; with a different one, or a suffix that no longer matches, it fails unchanged.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    const { operationId, transaction } = checkTransaction(args);
    const rt = await this.runtime();
    const keep = (item: unknown) => !rt.injected.isInjected(item);
    const fingerprint = createHash('sha256').update(stableJson(transaction)).digest('hex');
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
    const kept = items.filter((item) => !rt.injected.isInjected(item)).map((item) => structuredClone(item));
    if (kept.length === 0 && !always) return;
    const at = new Date().toISOString();
    const turns: AppendEnqueue[] = [];
    kept.forEach((item, index) => {
      const turn = turnOf(item);
      if (turn) turns.push({ index, role: turn.role, text: turn.text, at });
    });
    // The engine stores the items and accepts the turns in one transaction, and its read barrier knows about them:
    // the user's next recall, in this run or the next, waits for their extraction. An unacceptable turn fails the
    // call in strict mode before anything is written, and is recorded (its item still stored) otherwise.
    await rt.engine.appendTranscript(this.scope, this.sessionId, kept, { ...options, turns });
  }

  // ---------------------------------------------------------------- runs

  /**
   * Fresh hooks for ONE run: spread them into the run options together with `session`. Using the same config
   * for a second run, or for two runs at once, throws `RunConfigReusedError`.
   */
  runConfig(): MemoryRunConfig {
    if (this.closed) throw new ClosedError(`memSession ${this.sessionId}`);
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
    });
  }

  /** The recall query of the latest run of this session (the latest user text). */
  get latestQuery(): string {
    return this.lastQuery;
  }

  // ---------------------------------------------------------------- memory management

  /** The user's beliefs, oldest first; with `includeInvalidated`, retired ones and tombstones too. */
  async memoryHistory(options: MemoryHistoryOptions = {}): Promise<Belief[]> {
    const limit = options.limit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new InvalidInputError('limit', 'must be a positive integer');
    }
    const rt = await this.runtime();
    const all = await rt.engine.history(this.scope);
    const kept = options.includeInvalidated
      ? all
      : all.filter((b) => b.status === 'active' || b.status === 'pending');
    return limit === undefined ? kept : kept.slice(-limit);
  }

  /** A user's correction: the belief is superseded by `text` with full confidence. Returns the new belief. */
  async correctMemory(id: string, text: string): Promise<Belief> {
    const rt = await this.runtime();
    return rt.engine.correct(this.scope, id, text);
  }

  /**
   * Forgets a belief: its content leaves every read path, a content-free tombstone stays. `reason` is
   * checked and logged (without the belief's text); the audit log stays content-free.
   */
  async forgetMemory(id: string, options: { readonly reason?: string | undefined } = {}): Promise<Belief> {
    if (options.reason !== undefined) assertText(options.reason, 'reason', 1000);
    const rt = await this.runtime();
    const tombstone = await rt.engine.forget(this.scope, id);
    if (options.reason)
      rt.logger?.info(`mem01: belief ${id} forgotten (reason given: ${options.reason.length} chars)`);
    return tombstone;
  }

  /** Waits until this user's accepted turns are extracted. In strict mode, raises a recorded failure. */
  async flushMemory(): Promise<void> {
    const rt = await this.runtime();
    await rt.engine.flush(this.scope);
  }

  /**
   * Forgets every active and pending belief of this user and namespace (content-free tombstones stay).
   * Returns how many were forgotten. Transcripts are not touched (see {@link clearSession}).
   */
  async clearMemory(): Promise<number> {
    const rt = await this.runtime();
    await rt.engine.flush(this.scope);
    let count = 0;
    for (;;) {
      const page = await rt.engine.list(this.scope, { statuses: ['active', 'pending'], limit: 500 });
      if (page.items.length === 0) return count;
      for (const b of page.items) {
        await rt.engine.forget(this.scope, b.id);
        count++;
      }
    }
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

  /** Shows ids and scope only: no stores, keys or connection strings. */
  toJSON(): Record<string, unknown> {
    return { type: 'MemSession', sessionId: this.sessionId, scope: this.scope, strict: this.strict };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemSession ${JSON.stringify(this.toJSON())}`;
  }
}

function checkTransaction(args: SessionHistoryTransactionArgs): {
  operationId: string;
  transaction: SessionHistoryTransaction;
} {
  if (!args || typeof args !== 'object') throw new InvalidInputError('args', 'must be an object');
  const { operationId, transaction } = args;
  if (typeof operationId !== 'string' || operationId.trim() === '') {
    throw new InvalidInputError('operationId', 'must be a non-empty string');
  }
  if (!transaction || typeof transaction !== 'object') {
    throw new InvalidInputError('transaction', 'must be an object');
  }
  if (transaction.type === 'append_items') {
    if (!Array.isArray(transaction.items))
      throw new InvalidInputError('transaction.items', 'must be an array');
  } else if (transaction.type === 'replace_suffix') {
    if (!Array.isArray(transaction.expectedSuffix) || !Array.isArray(transaction.replacement)) {
      throw new InvalidInputError('transaction', 'expectedSuffix and replacement must be arrays');
    }
  } else {
    throw new InvalidInputError('transaction.type', 'must be append_items or replace_suffix');
  }
  return { operationId, transaction: structuredClone(transaction) };
}

/** @internal Scope helper for the other entry points. */
export function scopeOf(options: { userId: string; namespace?: string | undefined }): Scope {
  return normalizeScope({ userId: options.userId, namespace: options.namespace });
}
