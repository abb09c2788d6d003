/**
 * The runtime: the per-user write pipeline (accept → claim → extract → reconcile → commit), the read barrier,
 * recall and lifecycle operations. Stores and extractors are ports; this file holds the policy.
 */
import { canonicalKey, createBelief, isBeliefKind } from './belief.js';
import { type EngineConfig, type EngineConfigInput, resolveConfig } from './config.js';
import {
  BudgetExceededError,
  ClosedError,
  DuplicateActiveBeliefError,
  describeError,
  InvalidInputError,
  LeaseLostError,
  Mem01Error,
  NotFoundError,
  ProviderError,
  VersionConflictError,
} from './errors.js';
import type {
  BeliefInsert,
  BeliefUpdate,
  CandidateBelief,
  Embedder,
  EngineStore,
  ExtractionOperation,
  ExtractionTurn,
  Extractor,
  ListOptions,
  Logger,
  OutboxClaim,
  OutboxInput,
} from './ports.js';
import { collapseCovered, rankHits, rankProfile } from './recall.js';
import { beliefKey, operationRefs, type ReconcilePlan, reconcile, validateOperations } from './reconcile.js';
import { type ContextBlock, renderContextBlock } from './render.js';
import { contentWords } from './text.js';
import type {
  Belief,
  BeliefKind,
  BeliefSource,
  BeliefStatus,
  Page,
  Scope,
  ScoredBelief,
  Usage,
} from './types.js';
import { assertId, assertText, newId, normalizeScope, sameScope } from './util.js';

export interface MemoryEngineOptions {
  readonly store: EngineStore;
  readonly extractor: Extractor;
  /** Without an embedder, recall is lexical only. */
  readonly embedder?: Embedder | null | undefined;
  readonly config?: EngineConfigInput | undefined;
  /** Injected clock, for tests. */
  readonly clock?: (() => Date) | undefined;
  /** Name of this worker in outbox claims. Default a random id. */
  readonly workerId?: string | undefined;
  readonly logger?: Logger | undefined;
}

export interface RecallOptions {
  /** At most this many beliefs. Default `config.recallLimit`. */
  readonly limit?: number | undefined;
  /** Return per-signal scores (always computed; this only keeps them). */
  readonly explain?: boolean | undefined;
  /** Include these kinds only. */
  readonly kinds?: readonly BeliefKind[] | undefined;
  /** Skip the read barrier (used by the pipeline itself). */
  readonly noBarrier?: boolean | undefined;
  /** Use vector similarity when an embedder is configured. Default true. */
  readonly vector?: boolean | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface RememberInput {
  readonly kind: BeliefKind;
  readonly subject?: string | undefined;
  readonly attribute: string;
  readonly value: string;
  readonly statement?: string | undefined;
  readonly confidence?: number | undefined;
  readonly source?: Extract<BeliefSource, 'manual' | 'tool'> | undefined;
}

export interface EngineStats {
  accepted: number;
  duplicatesSkipped: number;
  extractedTurns: number;
  extractionCalls: number;
  operationsApplied: number;
  operationsDropped: number;
  commits: number;
  commitRetries: number;
  failures: number;
  recalls: number;
  llmCalls: number;
  inputTokens: number;
  outputTokens: number;
  embeddingCalls: number;
}

export type EngineEvent =
  | {
      readonly type: 'extracted';
      readonly scope: Scope;
      readonly turns: number;
      readonly inserted: number;
      readonly updated: number;
      readonly dropped: number;
      readonly usage: Usage | undefined;
      readonly ms: number;
    }
  | { readonly type: 'error'; readonly scope: Scope; readonly error: string; readonly turns: number }
  | { readonly type: 'deferred'; readonly scope: Scope; readonly reason: string; readonly turns: number }
  | { readonly type: 'recall'; readonly scope: Scope; readonly returned: number; readonly ms: number };

interface UserState {
  /** Resolves when every drain scheduled so far for this user has finished. */
  tail: Promise<void>;
  /** A drain is scheduled but has not started: a new schedule can ride on it. */
  queued: boolean;
  lastError: string | null;
  /** Strict mode: the error to raise at the next enqueue or barrier. */
  strictError: unknown;
}

const RACE_RETRIES = 8;

/**
 * The mem01 engine. One per process and store is typical; it is safe to share between sessions.
 */
export class MemoryEngine {
  readonly store: EngineStore;
  readonly extractor: Extractor;
  readonly embedder: Embedder | null;
  readonly config: EngineConfig;
  readonly workerId: string;
  private readonly clock: () => Date;
  private readonly logger: Logger | undefined;
  private readonly users = new Map<string, UserState>();
  private readonly listeners = new Set<(event: EngineEvent) => void>();
  private readonly statsData: EngineStats = {
    accepted: 0,
    duplicatesSkipped: 0,
    extractedTurns: 0,
    extractionCalls: 0,
    operationsApplied: 0,
    operationsDropped: 0,
    commits: 0,
    commitRetries: 0,
    failures: 0,
    recalls: 0,
    llmCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    embeddingCalls: 0,
  };
  /** Claims by `resume`/`runWorker` not yet placed on their user's chain (the barrier waits for them). */
  private readonly claimsInFlight = new Set<Promise<OutboxClaim | null>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  private readonly abort = new AbortController();

  constructor(options: MemoryEngineOptions) {
    if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
    if (!options.store) throw new InvalidInputError('store', 'is required');
    if (!options.extractor || typeof options.extractor.extract !== 'function') {
      throw new InvalidInputError('extractor', 'is required and must have extract()');
    }
    this.store = options.store;
    this.extractor = options.extractor;
    this.embedder = options.embedder ?? null;
    this.config = resolveConfig(options.config, this.embedder);
    this.clock = options.clock ?? (() => new Date());
    this.workerId = options.workerId ?? `worker-${newId()}`;
    this.logger = options.logger;
  }

  // ---------------------------------------------------------------- writes

  /**
   * Accepts turns into the durable outbox and schedules their extraction. Resolves once the turns are
   * accepted (durably, for a durable store), not when they are extracted. In strict mode a failure recorded
   * for one of these users is raised here first.
   */
  async accept(inputs: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new InvalidInputError('inputs', 'must be an array');
    const checked = inputs.map((input, i) => this.checkInput(input, i));
    for (const input of checked) this.raiseStrict(input.scope.userId);
    if (checked.length === 0) return { accepted: 0, duplicates: 0 };
    const result = await this.store.enqueue(checked);
    this.statsData.accepted += result.accepted;
    this.statsData.duplicatesSkipped += result.duplicates;
    for (const userId of new Set(checked.map((c) => c.scope.userId))) this.schedule(userId);
    return result;
  }

  /** Validates a turn for the outbox. Exposed so bindings can check turns before a transcript transaction. */
  checkInput(input: OutboxInput, index = 0): OutboxInput {
    if (!input || typeof input !== 'object')
      throw new InvalidInputError(`inputs[${index}]`, 'must be an object');
    const scope = normalizeScope(input.scope);
    assertId(input.sessionId, `inputs[${index}].sessionId`);
    if (!Number.isInteger(input.position) || input.position < 0) {
      throw new InvalidInputError(`inputs[${index}].position`, 'must be a non-negative integer');
    }
    if (input.role !== 'user' && input.role !== 'assistant') {
      throw new InvalidInputError(`inputs[${index}].role`, 'must be "user" or "assistant"');
    }
    assertText(input.text, `inputs[${index}].text`, this.config.maxTextBytes);
    if (typeof input.at !== 'string' || Number.isNaN(Date.parse(input.at))) {
      throw new InvalidInputError(`inputs[${index}].at`, 'must be an ISO-8601 date');
    }
    return { ...input, scope, at: new Date(input.at).toISOString() };
  }

  /**
   * Schedules extraction of a user's queued turns. Call after turns were enqueued by other means (a transcript
   * append with `enqueue`). Cheap when a drain is already scheduled.
   */
  schedule(userId: string): void {
    if (this.closed) return;
    const st = this.state(userId);
    if (st.queued) return;
    st.queued = true;
    // No timer: the engine keeps none beyond a call. A binding that must not be held up by extraction (the
    // Agents SDK session) defers its schedule() call itself; the read barrier waits either way.
    st.tail = st.tail.then(async () => {
      st.queued = false;
      await this.drainUser(userId);
    });
  }

  /** Processes everything queued in the store, for every user (for example after a crash). */
  async resume(): Promise<void> {
    this.assertOpen();
    const workers = Array.from({ length: this.config.concurrency }, async () => {
      while (!this.closed) {
        if (!(await this.claimAndRun(undefined))) return;
      }
    });
    await Promise.all(workers);
  }

  /**
   * A worker loop for multi-process deployments: claims any user's turns, processes them, and polls when idle.
   * Runs until `signal` aborts or the engine closes.
   */
  async runWorker(
    options: {
      readonly signal?: AbortSignal | undefined;
      readonly pollMs?: number | undefined;
      readonly userId?: string | undefined;
    } = {},
  ): Promise<void> {
    this.assertOpen();
    const pollMs = options.pollMs ?? 250;
    let failures = 0;
    while (!this.closed && !options.signal?.aborted) {
      let worked: boolean;
      try {
        worked = await this.claimAndRun(options.userId);
        failures = 0;
      } catch (err) {
        // A database outage must not end the worker: back off (up to 30 s) and try again.
        failures++;
        this.logger?.warn(`mem01: worker cannot claim (attempt ${failures}): ${describeError(err)}`);
        await sleep(Math.min(30_000, pollMs * 2 ** Math.min(failures, 7)), options.signal);
        continue;
      }
      if (worked) continue;
      await sleep(pollMs, options.signal);
    }
  }

  /**
   * Waits until the accepted writes of one user (or of every user this engine knows) are processed.
   * In strict mode, raises a failure recorded for that user.
   */
  async flush(scope?: Scope): Promise<void> {
    if (scope === undefined) {
      for (const userId of this.users.keys()) this.schedule(userId);
      await Promise.all([...this.users.values()].map((s) => s.tail));
      for (const userId of this.users.keys()) this.raiseStrict(userId);
      return;
    }
    const { userId } = normalizeScope(scope);
    this.schedule(userId);
    await this.barrier(userId);
  }

  private async barrier(userId: string): Promise<void> {
    // A claim of any user still in flight may be this user's turn: wait until it is on the user's chain.
    if (this.claimsInFlight.size > 0) await Promise.allSettled([...this.claimsInFlight]);
    const st = this.users.get(userId);
    if (st) await st.tail;
    this.raiseStrict(userId);
  }

  /**
   * Claims the oldest turns of any user (or of `userId`) and processes them on that user's chain, so the user's
   * read barrier waits for them exactly as for turns this engine accepted. Returns false when nothing was claimable.
   */
  private async claimAndRun(userId: string | undefined): Promise<boolean> {
    const pending = this.store.claim({ ...this.claimOptions(), userId });
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
    const st = this.state(held.scope.userId);
    const run = st.tail.then(() => this.withUserSlot(held.scope.userId, () => this.processClaim(held)));
    st.tail = run.then(
      () => undefined,
      () => undefined,
    );
    // On the chain now: a barrier that waited for this claim will find it there.
    this.claimsInFlight.delete(pending);
    await run;
    return true;
  }

  // ---------------------------------------------------------------- reads

  /**
   * Recalls the active beliefs of one scope most relevant to `query` (a profile of the newest when the query is
   * empty), after the user's accepted writes. Never returns other scopes, pending, superseded, retracted or
   * forgotten beliefs.
   */
  async recall(scope: Scope, query: string, options: RecallOptions = {}): Promise<ScoredBelief[]> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertText(query, 'query', this.config.maxTextBytes, true);
    const limit = options.limit ?? this.config.recallLimit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new InvalidInputError('limit', 'must be an integer between 1 and 1000');
    }
    if (!options.noBarrier) await this.barrier(s.userId);
    const started = performance.now();
    const kinds = options.kinds ? new Set(options.kinds) : null;
    const keep = (b: Belief): boolean =>
      b.status === 'active' &&
      sameScope(b.scope, s) &&
      (kinds ? kinds.has(b.kind) : this.config.episodic || b.kind !== 'episode');
    const now = this.clock().getTime();
    let ranked: ScoredBelief[];
    if (query.trim() === '') {
      const page = await this.store.list(s, { statuses: ['active'], limit: Math.min(1000, limit * 4) });
      ranked = rankProfile(page.items.filter(keep), { now, limit, config: this.config.ranking });
    } else {
      const candidateLimit = Math.max(this.config.candidateLimit, limit);
      // Only content words reach the lexical index: "what is my" must not make a belief relevant.
      const terms = contentWords(query);
      const lexicalP =
        terms.length > 0
          ? this.store.searchLexical(s, terms.join(' '), { limit: candidateLimit })
          : Promise.resolve([]);
      const vectorP =
        this.embedder && options.vector !== false && this.store.capabilities.vectorSearch !== 'none'
          ? this.embedQuery(query, s, options.signal).then((v) =>
              this.store.searchVector(s, v, { limit: candidateLimit }),
            )
          : Promise.resolve([]);
      const [lexical, vector] = await Promise.all([lexicalP, vectorP]);
      // Rank a wider list, then drop what adds no evidence (an episode and the belief distilled from it).
      ranked = collapseCovered(
        rankHits(
          lexical.filter((h) => keep(h.belief)),
          vector.filter((h) => keep(h.belief)),
          { now, limit: limit * 4, config: this.config.ranking },
        ),
        limit,
      );
    }
    this.statsData.recalls++;
    this.emit({ type: 'recall', scope: s, returned: ranked.length, ms: performance.now() - started });
    return options.explain ? ranked : ranked.map(({ belief, score }) => ({ belief, score }));
  }

  /** Recall rendered as the bounded context block. */
  async context(
    scope: Scope,
    query: string,
    options: RecallOptions & { readonly budgetBytes?: number | undefined } = {},
  ): Promise<ContextBlock & { readonly recalled: readonly ScoredBelief[] }> {
    const recalled = await this.recall(scope, query, options);
    const block = renderContextBlock(
      recalled.map((r) => r.belief),
      options.budgetBytes ?? this.config.budgetBytes,
    );
    return { ...block, recalled };
  }

  /** Beliefs of a scope by status, newest first, after the user's accepted writes. */
  async list(scope: Scope, options?: ListOptions): Promise<Page<Belief>> {
    this.assertOpen();
    const s = normalizeScope(scope);
    await this.barrier(s.userId);
    return this.store.list(s, options);
  }

  /** A belief's lifecycle chain, or every belief of the scope including retired ones, oldest first. */
  async history(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<Belief[]> {
    this.assertOpen();
    const s = normalizeScope(scope);
    if (options.id !== undefined) assertId(options.id, 'id');
    await this.barrier(s.userId);
    return this.store.history(s, options);
  }

  async get(scope: Scope, id: string): Promise<Belief | null> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertId(id, 'id');
    await this.barrier(s.userId);
    return this.store.get(s, id);
  }

  // ---------------------------------------------------------------- lifecycle operations

  /**
   * A user's correction: supersedes the belief with `text` as its new value and statement, with confidence 1.
   * `expectedVersion` guards against a concurrent change (`VersionConflictError`).
   */
  async correct(
    scope: Scope,
    id: string,
    text: string,
    options: { readonly expectedVersion?: number | undefined } = {},
  ): Promise<Belief> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertId(id, 'id');
    assertText(text, 'text', this.config.maxTextBytes);
    await this.barrier(s.userId);
    const now = this.now();
    const current = await this.requireBelief(s, id, options.expectedVersion);
    if (current.status !== 'active' && current.status !== 'pending') {
      throw new InvalidInputError(
        'id',
        `belief ${id} is ${current.status}; only active or pending beliefs can be corrected`,
      );
    }
    const replacement = createBelief(
      {
        scope: s,
        kind: current.kind,
        subject: current.subject,
        attribute: current.attribute,
        value: text.trim(),
        statement: text.trim(),
        confidence: 1,
        source: 'correction',
        supersedes: current.id,
        evidence: [],
        at: now,
      },
      this.config.maxTextBytes,
    );
    // A pending belief being corrected is not active, so an active one on the same key is the one replaced.
    const active =
      current.status === 'active' ? current : (await this.store.getActiveByKeys(s, [current]))[0];
    const updates: BeliefUpdate[] = [
      {
        id: current.id,
        expectedVersion: current.version,
        set: {
          status: 'superseded' as const,
          supersededBy: replacement.id,
          invalidatedAt: now,
          updatedAt: now,
        },
      },
    ];
    if (active && active.id !== current.id) {
      updates.push({
        id: active.id,
        expectedVersion: active.version,
        set: { status: 'superseded', supersededBy: replacement.id, invalidatedAt: now, updatedAt: now },
      });
    }
    await this.store.commit({
      scope: s,
      inserts: [await this.withEmbedding(replacement)],
      updates,
      audit: [{ at: now, scope: s, beliefId: replacement.id, action: 'correct', actor: 'user' }],
    });
    return replacement;
  }

  /**
   * Forgets a belief: its content leaves every read path (indexes, outbox, transcript); a content-free tombstone
   * stays. With the episodic tier, the episodes of the turns it came from are forgotten too.
   */
  async forget(
    scope: Scope,
    id: string,
    options: {
      readonly expectedVersion?: number | undefined;
      /** Why (for the caller's logs). Checked, never stored: the tombstone and the audit log stay content-free. */
      readonly reason?: string | undefined;
    } = {},
  ): Promise<Belief> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertId(id, 'id');
    if (options.reason !== undefined) assertText(options.reason, 'reason', 1024, true);
    if (options.expectedVersion !== undefined) assertVersion(options.expectedVersion);
    await this.barrier(s.userId);
    const before = await this.store.get(s, id);
    const tombstone = await this.store.forget(s, id, {
      at: this.now(),
      expectedVersion: options.expectedVersion,
    });
    // The episodic tier keeps the turns a belief came from verbatim: forgetting the belief forgets them too, or
    // recall would still return the fact in the user's own words.
    if (before && before.status !== 'forgotten' && before.kind !== 'episode' && before.evidence.length > 0) {
      const keys = before.evidence.map((e) => ({
        subject: 'user',
        attribute: episodeKey(e.sessionId, e.position),
      }));
      for (const episode of await this.store.getActiveByKeys(s, keys)) {
        if (episode.kind === 'episode') await this.store.forget(s, episode.id, { at: this.now() });
      }
    }
    return tombstone;
  }

  /** Ends an active or pending belief without replacing it. */
  async retract(
    scope: Scope,
    id: string,
    options: { readonly expectedVersion?: number | undefined } = {},
  ): Promise<Belief> {
    return this.transition(scope, id, options.expectedVersion, ['active', 'pending'], 'retracted', 'retract');
  }

  /** Rejects a pending belief (it becomes retracted). */
  async reject(scope: Scope, id: string, options: { readonly expectedVersion?: number | undefined } = {}) {
    return this.transition(scope, id, options.expectedVersion, ['pending'], 'retracted', 'reject');
  }

  /** Approves a pending belief: it becomes active and supersedes the active belief on its key, if any. */
  async approve(
    scope: Scope,
    id: string,
    options: { readonly expectedVersion?: number | undefined } = {},
  ): Promise<Belief> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertId(id, 'id');
    await this.barrier(s.userId);
    return this.retryRace(async () => {
      const now = this.now();
      const current = await this.requireBelief(s, id, options.expectedVersion);
      if (current.status !== 'pending')
        throw new InvalidInputError('id', `belief ${id} is ${current.status}, not pending`);
      const [active] = await this.store.getActiveByKeys(s, [current]);
      const updates: BeliefUpdate[] = [
        {
          id: current.id,
          expectedVersion: current.version,
          set: { status: 'active' as const, updatedAt: now, supersededBy: null, invalidatedAt: null },
        },
      ];
      if (active) {
        updates.push({
          id: active.id,
          expectedVersion: active.version,
          set: {
            status: 'superseded' as const,
            supersededBy: current.id,
            invalidatedAt: now,
            updatedAt: now,
          },
        });
      }
      await this.store.commit({
        scope: s,
        inserts: [],
        updates,
        audit: [{ at: now, scope: s, beliefId: current.id, action: 'approve', actor: 'user' }],
      });
      return { ...current, status: 'active', version: current.version + 1, updatedAt: now };
    });
  }

  /**
   * Adds a belief directly (a tool or an operator), under the same reconciliation rules as extraction:
   * the same value confirms, a different value on the same key supersedes.
   */
  async remember(scope: Scope, input: RememberInput): Promise<Belief> {
    this.assertOpen();
    const s = normalizeScope(scope);
    if (!input || typeof input !== 'object') throw new InvalidInputError('input', 'must be an object');
    if (!isBeliefKind(input.kind))
      throw new InvalidInputError('kind', `unknown kind ${JSON.stringify(input.kind)}`);
    assertText(input.attribute, 'attribute', 256);
    assertText(input.value, 'value', this.config.maxTextBytes);
    if (input.statement !== undefined) assertText(input.statement, 'statement', this.config.maxTextBytes);
    await this.barrier(s.userId);
    const op: ExtractionOperation = {
      op: 'add',
      kind: input.kind,
      subject: input.subject ?? 'user',
      attribute: input.attribute,
      value: input.value,
      statement: input.statement ?? input.value,
      confidence: input.confidence ?? 1,
      evidence: [],
    };
    const plan = await this.applyOperations(s, [op], [], input.source ?? 'manual', 'manual', undefined);
    const id = plan.touched[0] ?? plan.inserts[0]?.id;
    const belief = id ? await this.store.get(s, id) : null;
    if (!belief) throw new NotFoundError('remembered belief');
    return belief;
  }

  // ---------------------------------------------------------------- state

  /** The last pipeline failure for a user, sanitized; null when the last attempt succeeded. */
  lastError(scope: Scope): string | null {
    const { userId } = normalizeScope(scope);
    return this.users.get(userId)?.lastError ?? null;
  }

  stats(): Readonly<EngineStats> {
    return { ...this.statsData };
  }

  /** Subscribes to pipeline and recall events; returns the unsubscribe function. Events carry no belief text. */
  on(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drains every scheduled write, then refuses further calls. The store stays open (it is the caller's). */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.users.values()].map((s) => s.tail));
    this.closed = true;
    this.abort.abort();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---------------------------------------------------------------- pipeline internals

  private state(userId: string): UserState {
    let st = this.users.get(userId);
    if (!st) {
      st = { tail: Promise.resolve(), queued: false, lastError: null, strictError: undefined };
      this.users.set(userId, st);
    }
    return st;
  }

  private claimOptions() {
    return {
      worker: this.workerId,
      leaseMs: this.config.leaseMs,
      now: this.now(),
      maxEntries: this.extractor.batchChars ? this.config.maxBatchTurns : 1,
      maxChars: this.extractor.batchChars || undefined,
    };
  }

  private async drainUser(userId: string): Promise<void> {
    await this.withUserSlot(userId, async () => {
      for (;;) {
        const claim = await this.store.claim({ ...this.claimOptions(), userId });
        if (!claim) return;
        const ok = await this.processClaim(claim);
        if (!ok) return;
      }
    });
  }

  /** Bounded concurrency across users. */
  private async withUserSlot<T>(_userId: string, fn: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so the count never overshoots.
    if (this.running >= this.config.concurrency) {
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

  /** Extracts, reconciles and commits one claim. Returns false when the user's drain should stop. */
  private async processClaim(claim: OutboxClaim): Promise<boolean> {
    const st = this.state(claim.scope.userId);
    const started = performance.now();
    const scope = normalizeScope(claim.scope);
    const turns: ExtractionTurn[] = claim.entries.map((e) => ({
      id: e.id,
      sessionId: e.sessionId,
      position: e.position,
      role: e.role,
      text: e.text,
      at: e.at,
      ...(e.ref === undefined ? {} : { ref: e.ref }),
    }));
    try {
      const userText = turns
        .filter((t) => t.role === 'user')
        .map((t) => t.text)
        .join('\n');
      let operations: ExtractionOperation[] = [];
      let usage: Usage | undefined;
      if (userText.trim() !== '') {
        const candidates = await this.findCandidates(scope, userText);
        const result = await this.extractor.extract({
          scope,
          turns,
          candidates,
          now: this.now(),
          signal: this.abort.signal,
        });
        usage = result.usage;
        this.countUsage(usage);
        this.statsData.extractionCalls++;
        operations = validateOperations(
          result.operations as unknown[],
          new Set(candidates.map((c) => c.id)),
          this.config.maxTextBytes,
        );
      }
      if (this.config.episodic) operations = [...operations, ...episodes(turns)];
      const plan = await this.applyOperations(scope, operations, turns, 'extracted', this.workerId, {
        claimId: claim.claimId,
        entryIds: claim.entries.map((e) => e.id),
      });
      st.lastError = null;
      this.statsData.extractedTurns += turns.length;
      this.emit({
        type: 'extracted',
        scope,
        turns: turns.length,
        inserted: plan.inserts.length,
        updated: plan.updates.length,
        dropped: plan.dropped.length,
        usage,
        ms: performance.now() - started,
      });
      return true;
    } catch (err) {
      const message = describeError(err);
      if (err instanceof LeaseLostError) {
        this.logger?.warn(`mem01: ${message}`);
        return false;
      }
      if (err instanceof BudgetExceededError) {
        const retryAt =
          err.resetAt ?? new Date(this.clock().getTime() + this.config.budgetRetryMs).toISOString();
        await this.store.release(claim, { retryAt, reason: message }).catch(() => undefined);
        st.lastError = message;
        this.emit({ type: 'deferred', scope, reason: message, turns: turns.length });
        this.logger?.warn(`mem01: extraction deferred for a user: ${message}`);
        return false;
      }
      this.statsData.failures++;
      st.lastError = message;
      if (this.config.strict) st.strictError = err;
      this.emit({ type: 'error', scope, error: message, turns: turns.length });
      this.logger?.warn(`mem01: extraction failed: ${message}`);
      const retryAt =
        err instanceof ProviderError && err.retryAfterMs !== undefined
          ? new Date(this.clock().getTime() + err.retryAfterMs).toISOString()
          : undefined;
      await this.store
        .fail(claim, message, { maxAttempts: this.config.maxAttempts, retryAt })
        .catch(() => undefined);
      return false;
    }
  }

  /** The user's existing active beliefs most related to the batch, offered to the extractor. */
  private async findCandidates(scope: Scope, text: string): Promise<CandidateBelief[]> {
    const options: RecallOptions = {
      limit: this.config.candidatesForExtraction,
      noBarrier: true,
      kinds: ['identity', 'preference', 'goal', 'decision', 'fact', 'relationship', 'event'],
    };
    const query = text.slice(0, 4000);
    // Candidates are a hint for the extractor: when the embedder fails, lexical candidates keep extraction going
    // (and the commit, which needs embeddings, reports the failure if it persists).
    const hits = await this.recall(scope, query, options).catch((err: unknown) => {
      this.logger?.warn(`mem01: vector candidates unavailable, using lexical only: ${describeError(err)}`);
      return this.recall(scope, query, { ...options, vector: false });
    });
    return hits.map(({ belief: b }) => ({
      id: b.id,
      kind: b.kind,
      subject: b.subject,
      attribute: b.attribute,
      value: b.value,
      statement: b.statement,
      confidence: b.confidence,
      storedAt: b.storedAt,
    }));
  }

  /** Reconciles operations against fresh state and commits, re-reading and retrying when a racing writer wins. */
  private async applyOperations(
    scope: Scope,
    operations: readonly ExtractionOperation[],
    turns: readonly ExtractionTurn[],
    source: BeliefSource,
    actor: string,
    complete: { claimId: string; entryIds: string[] } | undefined,
  ): Promise<ReconcilePlan> {
    const refs = operationRefs(operations);
    return this.retryRace(async () => {
      const byId = new Map<string, Belief>();
      for (const id of refs.ids) {
        const b = await this.store.get(scope, id);
        if (b) byId.set(id, b);
      }
      const keys = [
        ...refs.keys,
        ...[...byId.values()].map((b) => ({ subject: b.subject, attribute: b.attribute })),
      ];
      const active = keys.length > 0 ? await this.store.getActiveByKeys(scope, dedupeKeys(keys)) : [];
      const activeByKey = new Map(active.map((b) => [beliefKey(b.subject, b.attribute), b]));
      const plan = reconcile(
        operations,
        turns,
        { byId, activeByKey },
        {
          scope,
          now: this.now(),
          pendingBelow: this.config.pendingBelow,
          source,
          actor,
          maxTextBytes: this.config.maxTextBytes,
          requireGrounding: source === 'extracted',
        },
      );
      const inserts = await this.embedAll(plan.inserts);
      await this.store.commit({ scope, inserts, updates: plan.updates, audit: plan.audit, complete });
      this.statsData.commits++;
      this.statsData.operationsApplied += operations.length - plan.dropped.length;
      this.statsData.operationsDropped += plan.dropped.length;
      return plan;
    });
  }

  private async retryRace<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const race = err instanceof DuplicateActiveBeliefError || err instanceof VersionConflictError;
        if (!race || attempt >= RACE_RETRIES) throw err;
        this.statsData.commitRetries++;
      }
    }
  }

  private async transition(
    scope: Scope,
    id: string,
    expectedVersion: number | undefined,
    from: readonly BeliefStatus[],
    to: BeliefStatus,
    action: 'retract' | 'reject',
  ): Promise<Belief> {
    this.assertOpen();
    const s = normalizeScope(scope);
    assertId(id, 'id');
    await this.barrier(s.userId);
    const now = this.now();
    const current = await this.requireBelief(s, id, expectedVersion);
    if (!from.includes(current.status)) {
      throw new InvalidInputError('id', `belief ${id} is ${current.status}; expected ${from.join(' or ')}`);
    }
    await this.store.commit({
      scope: s,
      inserts: [],
      updates: [
        {
          id,
          expectedVersion: current.version,
          set: { status: to, invalidatedAt: now, validTo: current.validTo ?? now, updatedAt: now },
        },
      ],
      audit: [{ at: now, scope: s, beliefId: id, action, actor: 'user' }],
    });
    return { ...current, status: to, invalidatedAt: now, version: current.version + 1, updatedAt: now };
  }

  private async requireBelief(
    scope: Scope,
    id: string,
    expectedVersion: number | undefined,
  ): Promise<Belief> {
    if (expectedVersion !== undefined) assertVersion(expectedVersion);
    const current = await this.store.get(scope, id);
    if (!current) throw new NotFoundError(`belief ${id}`);
    if (expectedVersion !== undefined && current.version !== expectedVersion) {
      throw new VersionConflictError(id, expectedVersion, current.version);
    }
    return current;
  }

  private async embedAll(beliefs: readonly Belief[]): Promise<BeliefInsert[]> {
    if (!this.embedder || beliefs.length === 0 || this.store.capabilities.vectorSearch === 'none') {
      return beliefs.map((belief) => ({ belief }));
    }
    const vectors = await this.embedder.embed(
      beliefs.map((b) => b.statement),
      { signal: this.abort.signal, scope: beliefs[0]?.scope },
    );
    this.statsData.embeddingCalls++;
    return beliefs.map((belief, i) => ({ belief, embedding: vectors[i] ?? null }));
  }

  private async withEmbedding(belief: Belief): Promise<BeliefInsert> {
    const [insert] = await this.embedAll([belief]);
    return insert ?? { belief };
  }

  private async embedQuery(
    query: string,
    scope: Scope,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array> {
    const [v] = await (this.embedder as Embedder).embed([query], { signal, scope });
    this.statsData.embeddingCalls++;
    if (!v) throw new InvalidInputError('embedder', 'returned no vector');
    return v;
  }

  private countUsage(usage: Usage | undefined): void {
    if (!usage) return;
    this.statsData.llmCalls += usage.llmCalls ?? 0;
    this.statsData.inputTokens += usage.inputTokens ?? 0;
    this.statsData.outputTokens += usage.outputTokens ?? 0;
    this.statsData.embeddingCalls += usage.embeddingCalls ?? 0;
  }

  /**
   * Strict mode: raises (once) a pipeline failure recorded for this user, as `accept` and the read barrier do.
   * For bindings that enqueue turns through a transcript transaction instead of `accept`.
   */
  raiseIfFailed(scope: Scope): void {
    this.raiseStrict(normalizeScope(scope).userId);
  }

  private raiseStrict(userId: string): void {
    const st = this.users.get(userId);
    if (!st || st.strictError === undefined) return;
    const err = st.strictError;
    st.strictError = undefined;
    throw err instanceof Mem01Error ? err : new Mem01Error('store_error', describeError(err), { cause: err });
  }

  private emit(event: EngineEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not break the pipeline.
      }
    }
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private assertOpen(): void {
    if (this.closed) throw new ClosedError('MemoryEngine');
  }
}

function assertVersion(v: unknown): void {
  if (!Number.isInteger(v) || (v as number) < 1)
    throw new InvalidInputError('expectedVersion', 'must be a positive integer');
}

function dedupeKeys(keys: readonly { subject: string; attribute: string }[]) {
  const seen = new Map<string, { subject: string; attribute: string }>();
  for (const k of keys) seen.set(beliefKey(k.subject, k.attribute), k);
  return [...seen.values()];
}

/** The key of the episode of one turn. */
function episodeKey(sessionId: string, position: number): string {
  return canonicalKey(`episode:${sessionId}:${position}`);
}

/** The episodic tier: each user turn kept verbatim as an `episode` belief on a key of its own. */
function episodes(turns: readonly ExtractionTurn[]): ExtractionOperation[] {
  return turns
    .filter((t) => t.role === 'user' && t.text.trim() !== '')
    .map((t) => ({
      op: 'add' as const,
      kind: 'episode' as const,
      subject: 'user',
      attribute: episodeKey(t.sessionId, t.position),
      value: t.text,
      statement: t.text,
      confidence: 1,
      validFrom: t.at,
      evidence: [{ turnId: t.id, quote: t.text }],
    }));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
