/**
 * `MemoryAdmin`: reading and managing beliefs (recall, context, list, history, correct, forget, review) without an
 * extractor. It is what a CLI, an inspector or an admin service needs; `MemoryEngine` extends it with the write
 * pipeline, whose read barrier makes every one of these operations wait for the user's accepted writes.
 */
import { EngineCore, type EngineCoreOptions, type EngineEvent, type EngineStats } from './engine-core.js';
import { InvalidInputError } from './errors.js';
import * as lifecycle from './lifecycle.js';
import type { ListOptions } from './ports.js';
import { checkRecall, contextOf, type RecallOptions, recallBeliefs } from './recall-service.js';
import type { ContextBlock } from './render.js';
import type { Belief, Page, Scope, ScoredBelief } from './types.js';
import { assertId, assertText, normalizeScope } from './util.js';

export type MemoryAdminOptions = EngineCoreOptions;

/** Recall and lifecycle operations over one store, without an extractor. Safe to share between callers. */
export class MemoryAdmin {
  /** @internal */
  protected readonly core: EngineCore;

  constructor(options: MemoryAdminOptions) {
    this.core = new EngineCore(options, new.target.name);
  }

  get store() {
    return this.core.store;
  }

  get embedder() {
    return this.core.embedder;
  }

  get config() {
    return this.core.config;
  }

  /** @internal Waits for the user's accepted writes before an operation on their memory. None without a pipeline. */
  protected async beforeUserOperation(_userId: string): Promise<void> {}

  /** The canonical scope, once the admin is known to be open. */
  protected open(scope: Scope): Required<Scope> {
    this.core.assertOpen();
    return normalizeScope(scope);
  }

  // ---------------------------------------------------------------- reads

  /**
   * Recalls the active beliefs of one scope most relevant to `query` (a profile of the newest when the query is
   * empty), after the user's accepted writes. Never returns other scopes, pending, superseded, retracted or
   * forgotten beliefs.
   */
  async recall(scope: Scope, query: string, options: RecallOptions = {}): Promise<ScoredBelief[]> {
    const s = this.open(scope);
    checkRecall(this.core, query, options);
    await this.beforeUserOperation(s.userId);
    return recallBeliefs(this.core, s, query, options);
  }

  /** Recall rendered as the bounded context block. */
  async context(
    scope: Scope,
    query: string,
    options: RecallOptions & { readonly budgetBytes?: number | undefined } = {},
  ): Promise<ContextBlock & { readonly recalled: readonly ScoredBelief[] }> {
    const recalled = await this.recall(scope, query, options);
    return contextOf(this.core, recalled, query, options.budgetBytes);
  }

  /** Beliefs of a scope by status, newest first, after the user's accepted writes. */
  async list(scope: Scope, options?: ListOptions): Promise<Page<Belief>> {
    const s = this.open(scope);
    await this.beforeUserOperation(s.userId);
    return this.core.store.list(s, options);
  }

  /** A belief's lifecycle chain, or every belief of the scope including retired ones, oldest first. */
  async history(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<Belief[]> {
    const s = this.open(scope);
    if (options.id !== undefined) assertId(options.id, 'id');
    await this.beforeUserOperation(s.userId);
    return this.core.store.history(s, options);
  }

  async get(scope: Scope, id: string): Promise<Belief | null> {
    const s = this.open(scope);
    assertId(id, 'id');
    await this.beforeUserOperation(s.userId);
    return this.core.store.get(s, id);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * A user's correction: supersedes the belief with `text` as its new value and statement, with confidence 1 (the
   * same value confirms it instead). Returns the belief active afterwards. `expectedVersion` guards against a
   * concurrent change (`VersionConflictError`).
   */
  async correct(
    scope: Scope,
    id: string,
    text: string,
    options: lifecycle.VersionedOptions = {},
  ): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    assertText(text, 'text', this.core.config.maxTextBytes);
    if (options.expectedVersion !== undefined) lifecycle.assertVersion(options.expectedVersion);
    await this.beforeUserOperation(s.userId);
    return lifecycle.correct(this.core, s, id, text, options);
  }

  /**
   * Forgets a belief: its content leaves every read path (indexes, outbox, transcript); a content-free tombstone
   * stays. The episodes of the turns it came from are forgotten too.
   */
  async forget(
    scope: Scope,
    id: string,
    options: lifecycle.VersionedOptions & {
      /** Why (for the caller's logs). Checked, never stored: the tombstone and the audit log stay content-free. */
      readonly reason?: string | undefined;
    } = {},
  ): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    if (options.reason !== undefined) assertText(options.reason, 'reason', 1024, true);
    if (options.expectedVersion !== undefined) lifecycle.assertVersion(options.expectedVersion);
    await this.beforeUserOperation(s.userId);
    return lifecycle.forget(this.core, s, id, options);
  }

  /** Ends an active or pending belief without replacing it. */
  async retract(scope: Scope, id: string, options: lifecycle.VersionedOptions = {}): Promise<Belief> {
    return this.end(scope, id, 'retract', options);
  }

  /** Rejects a pending belief (it becomes retracted). */
  async reject(scope: Scope, id: string, options: lifecycle.VersionedOptions = {}): Promise<Belief> {
    return this.end(scope, id, 'reject', options);
  }

  private async end(
    scope: Scope,
    id: string,
    action: 'retract' | 'reject',
    options: lifecycle.VersionedOptions,
  ): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    if (options.expectedVersion !== undefined) lifecycle.assertVersion(options.expectedVersion);
    await this.beforeUserOperation(s.userId);
    return lifecycle.end(this.core, s, id, action, options);
  }

  /** Approves a pending belief: it becomes active and supersedes the active belief on its key, if any. */
  async approve(scope: Scope, id: string, options: lifecycle.VersionedOptions = {}): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    if (options.expectedVersion !== undefined) lifecycle.assertVersion(options.expectedVersion);
    await this.beforeUserOperation(s.userId);
    return lifecycle.approve(this.core, s, id, options);
  }

  /**
   * Adds a belief directly (a tool or an operator), under the same reconciliation rules as extraction:
   * the same value confirms, a different value on the same key supersedes.
   */
  async remember(scope: Scope, input: lifecycle.RememberInput): Promise<Belief> {
    const s = this.open(scope);
    const op = lifecycle.rememberOperation(this.core, input);
    const source = input.source ?? 'manual';
    if (source !== 'manual' && source !== 'tool') {
      throw new InvalidInputError('source', 'must be "manual" or "tool"');
    }
    await this.beforeUserOperation(s.userId);
    return lifecycle.remember(this.core, s, op, source);
  }

  // ---------------------------------------------------------------- state

  stats(): Readonly<EngineStats> {
    return { ...this.core.stats };
  }

  /** Subscribes to pipeline and recall events; returns the unsubscribe function. Events carry no belief text. */
  on(listener: (event: EngineEvent) => void): () => void {
    return this.core.on(listener);
  }

  /** Refuses further calls. The store stays open (it is the caller's). */
  async close(): Promise<void> {
    this.core.markClosed();
  }

  get isClosed(): boolean {
    return this.core.closed;
  }
}
