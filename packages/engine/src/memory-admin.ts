/**
 * `MemoryAdmin`: reading and managing beliefs (recall, context, list, history, correct, forget, review) without an
 * extractor. It is what a CLI, an inspector or an admin service needs; `MemoryEngine` extends it with the write
 * pipeline, whose read barrier makes every one of these operations wait for the user's accepted writes.
 */

import { validateImportRecords } from './belief-input.js';
import { type BudgetUsage, budgetUsage, checkCapacity } from './budgets.js';
import {
  authorizeCapture,
  endedGrants,
  type GrantCaptureOptions,
  grantCapture,
  grantsOf,
} from './capture.js';
import { EngineCore, type EngineCoreOptions, type EngineEvent, type EngineStats } from './engine-core.js';
import { CapabilityError, InvalidInputError } from './errors.js';
import * as lifecycle from './lifecycle.js';
import { assertKey } from './operations.js';
import type {
  BeliefInsert,
  CaptureGrant,
  ClearAllReceipt,
  ClearAllStore,
  EngineStore,
  EraseReceipt,
  ListOptions,
} from './ports.js';
import {
  type BlockSizeOption,
  checkRecall,
  clipQuery,
  contextOf,
  type RecallOptions,
  recallBeliefs,
  type SelectedContext,
  selectedContext,
} from './recall-service.js';
import type { ContextBlock } from './render.js';
import { validateMetadata } from './store-input.js';
import { activeSummaries, rewriteRetired, writeSummary } from './summaries.js';
import type { Belief, BeliefMetadata, Page, Scope, ScoredBelief } from './types.js';
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
   * forgotten beliefs. A query longer than `MAX_QUERY_CHARS` is cut there, at a word boundary (callers need not).
   */
  async recall(scope: Scope, query: string, options: RecallOptions = {}): Promise<ScoredBelief[]> {
    const s = this.open(scope);
    query = clipQuery(query, this.core.config.maxTextBytes);
    checkRecall(this.core, query, options);
    await this.beforeUserOperation(s.userId);
    const recalled = await recallBeliefs(this.core, s, query, options);
    // Counted in memory only: the counts are written in batches, off recall's path.
    this.core.access?.note(
      s,
      recalled.map((r) => r.belief.id),
    );
    return recalled;
  }

  /**
   * Recall rendered as the bounded context block; or, given `{ ids }`, the block of the beliefs the host chose, in the
   * order given: ids unknown or of another scope are skipped as `not_found`, beliefs not active (pending, retired,
   * forgotten) as `not_active`, repeated ids as `duplicate` (each listed in `skipped`). Whole beliefs only, up to
   * `blockBytes` (default `config.blockBytes`; `budgetBytes` is its deprecated name); those left out for space are
   * counted in `omitted`.
   */
  context(
    scope: Scope,
    query: string,
    options?: RecallOptions & BlockSizeOption,
  ): Promise<ContextBlock & { readonly recalled: readonly ScoredBelief[] }>;
  context(
    scope: Scope,
    selection: { readonly ids: readonly string[] } & BlockSizeOption,
  ): Promise<SelectedContext>;
  async context(
    scope: Scope,
    queryOrSelection: string | ({ readonly ids: readonly string[] } & BlockSizeOption),
    options: RecallOptions & BlockSizeOption = {},
  ): Promise<(ContextBlock & { readonly recalled: readonly ScoredBelief[] }) | SelectedContext> {
    if (typeof queryOrSelection === 'string') {
      const query = clipQuery(queryOrSelection, this.core.config.maxTextBytes);
      const recalled = await this.recall(scope, query, options);
      return contextOf(this.core, recalled, query, options);
    }
    const s = this.open(scope);
    if (
      queryOrSelection === null ||
      typeof queryOrSelection !== 'object' ||
      !Array.isArray(queryOrSelection.ids)
    )
      throw new InvalidInputError('selection', 'must be a query string or { ids: string[] }');
    const { ids } = queryOrSelection;
    if (ids.length > 1000) throw new InvalidInputError('ids', 'at most 1000 ids');
    ids.forEach((id, i) => {
      assertId(id, `ids[${i}]`);
    });
    await this.beforeUserOperation(s.userId);
    return selectedContext(this.core, s, ids, queryOrSelection);
  }

  /**
   * Beliefs of a scope by status (and, when asked, kind and evidence session), newest first, paged in the store, after
   * the user's accepted writes. What a capture grant that has ended (revoked or expired) captured is left out, in every
   * status, unless `includeEndedGrants` (for audit, as `history` and `get` show it).
   */
  async list(
    scope: Scope,
    options?: ListOptions & {
      /** Keep what a capture grant that has ended captured (each with its `grantId`). Default false. */
      readonly includeEndedGrants?: boolean | undefined;
    },
  ): Promise<Page<Belief>> {
    const s = this.open(scope);
    if (options !== undefined && (options === null || typeof options !== 'object'))
      throw new InvalidInputError('options', 'must be an object');
    const { includeEndedGrants, ...listOptions } = options ?? {};
    await this.beforeUserOperation(s.userId);
    const ended = includeEndedGrants ? [] : [...(await endedGrants(this.core, s)).keys()];
    if (ended.length === 0) return this.core.store.list(s, listOptions);
    return this.core.store.list(s, {
      ...listOptions,
      excludeGrants: [...(listOptions.excludeGrants ?? []), ...ended],
    });
  }

  /**
   * A belief's lifecycle chain, or every belief of the scope including retired ones, oldest first. Beliefs captured
   * under a capture grant that has ended are here too (with their `grantId`), for audit, unless `hideEndedGrants`
   * leaves them out as recall and `list` do.
   */
  async history(
    scope: Scope,
    options: {
      readonly id?: string | undefined;
      /** Leave out what a capture grant that has ended (revoked or expired) captured. Default false. */
      readonly hideEndedGrants?: boolean | undefined;
    } = {},
  ): Promise<Belief[]> {
    const s = this.open(scope);
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    if (options.id !== undefined) assertId(options.id, 'id');
    await this.beforeUserOperation(s.userId);
    const all = await this.core.store.history(s, options.id === undefined ? {} : { id: options.id });
    if (!options.hideEndedGrants) return all;
    const ended = await endedGrants(this.core, s);
    return all.filter((b) => b.grantId === undefined || !ended.has(b.grantId));
  }

  /**
   * One belief of `scope` by id, in any status but forgotten (superseded, retracted, pending and what an ended grant
   * captured are returned as they are); null for an unknown id, another scope's, or a forgotten one: what was forgotten
   * is gone for its reader (its content-free tombstone stays in `history` for audit).
   */
  async get(scope: Scope, id: string): Promise<Belief | null> {
    const s = this.open(scope);
    assertId(id, 'id');
    await this.beforeUserOperation(s.userId);
    const b = await this.core.store.get(s, id);
    return b && b.status !== 'forgotten' ? b : null;
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
    options: lifecycle.VersionedOptions & {
      /** Host metadata of the replacement. Default: the corrected belief's. */
      readonly metadata?: BeliefMetadata | undefined;
    } = {},
  ): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    assertText(text, 'text', this.core.config.maxTextBytes);
    this.checkMutation(options);
    const metadata = validateMetadata(options.metadata, 'metadata');
    await this.beforeUserOperation(s.userId);
    return lifecycle.correct(this.core, s, id, text, { ...options, metadata });
  }

  /** Checks a mutation's version (required with `config.requireVersion`) and operation key. */
  private checkMutation(options: lifecycle.VersionedOptions): void {
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    lifecycle.checkVersion(this.core, options.expectedVersion);
    assertKey(this.core, options.key);
  }

  /**
   * Forgets a belief: its content leaves every read path (indexes, outbox, transcript); a content-free tombstone
   * stays. Every episode of the scope that keeps one of the turns it came from, or whose text carries its value or
   * statement (whole words, any case), is forgotten with it, and the transcript turns of those episodes lose all
   * their text: recall returns the value neither as a belief nor in the user's words, and the transcript agrees.
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
    this.checkMutation(options);
    await this.beforeUserOperation(s.userId);
    // The conversation summaries the forget retires (one quoted a forgotten turn, or carries the value) are written
    // again from what is left.
    const summaries = await activeSummaries(this.core, s);
    const forgotten = await lifecycle.forget(this.core, s, id, options);
    if (summaries.size > 0) await rewriteRetired(this.core, s, summaries, id);
    return forgotten;
  }

  /**
   * Writes the summary of one conversation (`sessionId`) of the scope, after the user's accepted writes: a compressed,
   * dated `summary` belief drawn from the conversation's turns still remembered, by the engine's summarizer (offline
   * and extractive by default, a model's with `@mem01/openai`). A new summary of the same conversation supersedes the
   * last (its history stays); the same text confirms it. Returns the active summary, or null when the conversation has
   * nothing left to summarize (no turn, or only questions); its last summary, if any, is then retracted.
   */
  async summarize(
    scope: Scope,
    sessionId: string,
    options: { readonly signal?: AbortSignal | undefined } = {},
  ): Promise<Belief | null> {
    const s = this.open(scope);
    assertId(sessionId, 'sessionId');
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    await this.beforeUserOperation(s.userId);
    return writeSummary(this.core, s, sessionId, 'summarize', options.signal);
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
    this.checkMutation(options);
    await this.beforeUserOperation(s.userId);
    return lifecycle.end(this.core, s, id, action, options);
  }

  /** Approves a pending belief: it becomes active and supersedes the active belief on its key, if any. */
  async approve(scope: Scope, id: string, options: lifecycle.VersionedOptions = {}): Promise<Belief> {
    const s = this.open(scope);
    assertId(id, 'id');
    this.checkMutation(options);
    await this.beforeUserOperation(s.userId);
    return lifecycle.approve(this.core, s, id, options);
  }

  /**
   * Adds a belief directly (a tool or an operator), under the same reconciliation rules as extraction:
   * the same value confirms, a different value on the same key supersedes. `options.state: 'pending'` holds it for
   * review; `options.key` makes it idempotent; `options.metadata` is kept on it. A capture (see
   * `config.requireCaptureGrant`), within the result capacity (`config.budgets.maxActiveBeliefsPerUser`).
   */
  async remember(
    scope: Scope,
    input: lifecycle.RememberInput,
    options?: lifecycle.RememberOptions,
  ): Promise<Belief> {
    const s = this.open(scope);
    const op = lifecycle.rememberOperation(this.core, input);
    const source = input.source ?? 'manual';
    if (source !== 'manual' && source !== 'tool') {
      throw new InvalidInputError('source', 'must be "manual" or "tool"');
    }
    const checked = lifecycle.checkRememberOptions(options);
    assertKey(this.core, checked.key);
    const grantId = (await authorizeCapture(this.core, [s]))(s);
    await this.beforeUserOperation(s.userId);
    await checkCapacity(this.core, s.userId);
    return lifecycle.remember(this.core, s, op, source, checked, grantId);
  }

  // ---------------------------------------------------------------- import

  /**
   * Restores exported belief records (an export file, another store) into one scope, verbatim: ids, versions,
   * lifecycle, evidence and embeddings. Every record is checked before anything is written (the store kit's
   * `validateImportRecords`: whole beliefs, no unknown field, of `scope`, or with `anyNamespace` of any namespace of
   * its user, no id twice, no two active on one key); the first bad one throws `InvalidRecordError` naming its index,
   * and nothing is written. Records whose id is stored already are skipped, so a repeated import is a no-op. Waits for
   * the user's accepted writes first; all-or-nothing in the store (an active record on the key of a stored active
   * belief: `DuplicateActiveBeliefError`; an embedding of another length: `DimensionMismatchError`).
   */
  async importRecords(
    scope: Scope,
    records: readonly BeliefInsert[],
    options: {
      /** Accept records of any namespace of the scope's user (a whole user's export). Default false. */
      readonly anyNamespace?: boolean | undefined;
    } = {},
  ): Promise<{ inserted: number; skipped: number }> {
    const s = this.open(scope);
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    const target = { userId: s.userId, namespace: options.anyNamespace ? null : s.namespace };
    const valid = validateImportRecords(records, target, this.core.config.maxTextBytes);
    await this.beforeUserOperation(s.userId);
    this.core.assertOpen();
    return this.core.store.importBeliefs(valid);
  }

  // ---------------------------------------------------------------- capture grants

  /**
   * Records a capture grant for the user + namespace, from now: the SHA-256 digest of `intent` (what the user was
   * told memory is for; the text is not stored), an optional expiry, and the host's optional `policyId`,
   * `principalId` and `decisionId`. Under `key`, granting again with the same content returns the recorded grant, and
   * with different content fails with `OperationConflictError`. With `config.requireCaptureGrant`, capture needs one
   * valid grant. What is captured while a grant is the scope's active one is bound to it (see `revokeCapture`).
   */
  async grantCapture(scope: Scope, options: GrantCaptureOptions): Promise<CaptureGrant> {
    const s = this.open(scope);
    return grantCapture(this.core, s, options);
  }

  /**
   * Revokes the scope's grants (or only grant `id`) now; returns how many were revoked. Once a grant is revoked (or has
   * expired), the turns still queued under it are dropped unextracted (dead, text erased, a content-free reason), the
   * pending beliefs it captured cannot be approved (`CaptureGrantEndedError`), and what it captured (beliefs and
   * episodes) is left out of recall, the block and `list`; `history`, `get` and the audit log still show the records.
   */
  async revokeCapture(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<number> {
    const s = this.open(scope);
    if (options.id !== undefined) assertId(options.id, 'id');
    return grantsOf(this.core).revokeGrants(s, { at: this.core.now(), id: options.id });
  }

  /** Every capture grant of the scope, revoked and expired ones too, oldest first. */
  async captureGrants(scope: Scope): Promise<CaptureGrant[]> {
    return grantsOf(this.core).listGrants(this.open(scope));
  }

  /** The scope's grant valid now (by the engine's clock), or null. */
  async activeCaptureGrant(scope: Scope): Promise<CaptureGrant | null> {
    return grantsOf(this.core).activeGrant(this.open(scope), this.core.now());
  }

  // ---------------------------------------------------------------- erasing

  /**
   * Erases every user of the store (hard delete: beliefs, transcripts, outbox, audit, operation keys, grants, budget
   * counters) and returns what was deleted. Turns still queued are deleted too; an extraction in flight then finds its
   * lease lost and writes nothing. `CapabilityError` for a store without `clearAll`.
   */
  async clearAll(): Promise<ClearAllReceipt> {
    this.core.assertOpen();
    const store = this.core.store as Partial<ClearAllStore>;
    if (typeof store.clearAll !== 'function') throw new CapabilityError(this.core.store.name, 'clearAll');
    this.core.access?.discard();
    return store.clearAll.call(this.core.store);
  }

  /**
   * Erases one scope (this user and namespace) for good, after the user's accepted writes (on a `MemoryEngine`, as
   * `flush(scope)` waits for them, strict mode's recorded failure included): its beliefs in every status with their embeddings (episodes and tombstones too), its
   * outbox entries, audit records, operation keys and capture grants, in one store transaction. Transcripts are not
   * touched; nor are the user's other namespaces, other users, or the user's budget counters (they span the user's
   * namespaces). Returns what was deleted (`transcriptItems` is 0). A turn accepted after the wait is not erased; an
   * extraction another worker still holds then finds its lease lost and writes nothing. `CapabilityError` for a store
   * without `eraseScope`.
   */
  async eraseScope(scope: Scope): Promise<EraseReceipt> {
    const s = this.open(scope);
    const store = this.core.store as Partial<Pick<EngineStore, 'eraseScope'>>;
    if (typeof store.eraseScope !== 'function') throw new CapabilityError(this.core.store.name, 'eraseScope');
    await this.beforeErase(s);
    this.core.assertOpen();
    this.core.access?.discard(s);
    return store.eraseScope.call(this.core.store, s);
  }

  /** @internal Waits for the scope's accepted writes before an erase. */
  protected beforeErase(scope: Required<Scope>): Promise<void> {
    return this.beforeUserOperation(scope.userId);
  }

  // ---------------------------------------------------------------- budgets

  /**
   * What the scope's user used of each budget in the current window (`config.budgets`; budgets are per user, across
   * namespaces): extractor calls and tokens, embedder calls and tokens, as counted in the store by every engine
   * sharing it, and the active beliefs now, each with this engine's limit (null: none), and the window's start and
   * end. Counters are kept only by engines with a call or token budget set (`counting` says whether this one is).
   * Does not wait for the user's queued turns: a spent budget holds them. `CapabilityError` for a store without
   * budget counters.
   */
  async usage(scope: Scope): Promise<BudgetUsage> {
    const s = this.open(scope);
    return budgetUsage(this.core, s.userId);
  }

  // ---------------------------------------------------------------- state

  stats(): Readonly<EngineStats> {
    return { ...this.core.stats };
  }

  /** Subscribes to pipeline and recall events; returns the unsubscribe function. Events carry no belief text. */
  on(listener: (event: EngineEvent) => void): () => void {
    return this.core.on(listener);
  }

  /** Writes the access counts gathered so far, then refuses further calls. The store stays open (it is the caller's). */
  async close(): Promise<void> {
    if (this.core.closed) return;
    await this.core.access?.flush();
    this.core.markClosed();
  }

  get isClosed(): boolean {
    return this.core.closed;
  }
}
