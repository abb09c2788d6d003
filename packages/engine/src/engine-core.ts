/**
 * What every part of the engine shares: the store, the embedder, the resolved configuration, the clock, the
 * logger, counters and event listeners. The write pipeline, recall and lifecycle operations each take one.
 */

import { AccessCounter } from './access.js';
import { checkBudgetCapability, embeddingAllowed, embeddingUsage, recordUsage } from './budgets.js';
import { grantsOf } from './capture.js';
import { type EngineConfig, type EngineConfigInput, resolveConfig } from './config.js';
import { ClosedError, InvalidInputError } from './errors.js';
import { guardPort } from './port-guard.js';
import type { BeliefInsert, Embedder, EngineStore, Logger, Summarizer } from './ports.js';
import { extractiveSummarizer } from './summaries.js';
import type { Belief, Scope, Usage } from './types.js';

export interface EngineStats {
  accepted: number;
  duplicatesSkipped: number;
  extractedTurns: number;
  extractionCalls: number;
  /** Conversation summaries written (on demand, by `autoSummaries`, or again after a forget). */
  summaries: number;
  operationsApplied: number;
  operationsDropped: number;
  commits: number;
  commitRetries: number;
  failures: number;
  /** Accepted turns dropped without extraction because their capture grant ended. */
  turnsDropped: number;
  recalls: number;
  llmCalls: number;
  inputTokens: number;
  outputTokens: number;
  embeddingCalls: number;
  embeddingTokens: number;
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
  /** Accepted turns given up without extraction (their capture grant ended); `reason` holds ids only. */
  | { readonly type: 'dropped'; readonly scope: Scope; readonly reason: string; readonly turns: number }
  | { readonly type: 'recall'; readonly scope: Scope; readonly returned: number; readonly ms: number }
  /** A conversation's summary was written (`summary`: its id; null when nothing was left to summarize). */
  | {
      readonly type: 'summarized';
      readonly scope: Scope;
      readonly sessionId: string;
      readonly summary: string | null;
      readonly ms: number;
    };

/** Options shared by `MemoryAdmin` and `MemoryEngine`. */
export interface EngineCoreOptions {
  readonly store: EngineStore;
  /** Without an embedder, recall is lexical only. */
  readonly embedder?: Embedder | null | undefined;
  readonly config?: EngineConfigInput | undefined;
  /**
   * Writes conversation summaries (`summarize`, `config.autoSummaries`). Default: the engine's offline extractive
   * summarizer; `@mem01/openai` has a model's.
   */
  readonly summarizer?: Summarizer | undefined;
  /** Injected clock, for tests. */
  readonly clock?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** @internal The shared state of one engine. */
export class EngineCore {
  readonly store: EngineStore;
  readonly embedder: Embedder | null;
  readonly summarizer: Summarizer;
  readonly config: EngineConfig;
  readonly clock: () => Date;
  readonly logger: Logger | undefined;
  readonly stats: EngineStats = {
    accepted: 0,
    duplicatesSkipped: 0,
    extractedTurns: 0,
    extractionCalls: 0,
    summaries: 0,
    operationsApplied: 0,
    operationsDropped: 0,
    commits: 0,
    commitRetries: 0,
    failures: 0,
    turnsDropped: 0,
    recalls: 0,
    llmCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    embeddingCalls: 0,
    embeddingTokens: 0,
  };
  /** Aborted at close: cancels extractor and embedder calls still running. */
  readonly abort = new AbortController();
  /** Access counts of recalled beliefs, gathered in memory; null when off or the store keeps none. */
  readonly access: AccessCounter | null;
  private readonly listeners = new Set<(event: EngineEvent) => void>();
  private closedFlag = false;
  /** What `ClosedError` names. */
  private readonly what: string;

  constructor(options: EngineCoreOptions, what: string) {
    if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
    if (!options.store) throw new InvalidInputError('store', 'is required');
    // Every port call fails only with sanitised errors: what the engine throws, records or logs carries no secret.
    this.store = guardPort(options.store);
    this.embedder = options.embedder ? guardPort(options.embedder) : null;
    if (
      options.summarizer !== undefined &&
      (!options.summarizer || typeof options.summarizer.summarize !== 'function')
    ) {
      throw new InvalidInputError('summarizer', 'must have summarize()');
    }
    this.summarizer = guardPort(options.summarizer ?? extractiveSummarizer());
    this.config = resolveConfig(options.config, this.embedder);
    this.clock = options.clock ?? (() => new Date());
    this.logger = options.logger;
    this.what = what;
    // Settings a store cannot honour fail here, loudly, naming the store.
    if (this.config.requireCaptureGrant) grantsOf(this);
    checkBudgetCapability(this);
    this.access = this.config.accessCounts
      ? AccessCounter.for(this.store, this.config.accessFlushMs, this.clock, this.logger)
      : null;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  markClosed(): void {
    this.closedFlag = true;
    this.abort.abort();
  }

  assertOpen(): void {
    if (this.closedFlag) throw new ClosedError(this.what);
  }

  now(): string {
    return this.clock().toISOString();
  }

  on(listener: (event: EngineEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A listener's failure must not break the pipeline.
      }
    }
  }

  countUsage(usage: Usage | undefined): void {
    if (!usage) return;
    this.stats.llmCalls += usage.llmCalls ?? 0;
    this.stats.inputTokens += usage.inputTokens ?? 0;
    this.stats.outputTokens += usage.outputTokens ?? 0;
    this.stats.embeddingCalls += usage.embeddingCalls ?? 0;
    this.stats.embeddingTokens += usage.embeddingTokens ?? 0;
  }

  /** The most episodes one turn can be split into (a turn longer than `maxTextBytes` is split for length). */
  get episodeParts(): number {
    // Greedy packing leaves every two consecutive parts over `maxTextBytes` together.
    return Math.ceil((2 * this.config.maxTurnBytes) / this.config.maxTextBytes) + 1;
  }

  /** Whether recall can use vectors at all (an embedder and a store with vector search). */
  get vectors(): boolean {
    return this.embedder !== null && this.store.capabilities.vectorSearch !== 'none';
  }

  /**
   * Beliefs to insert, with the embeddings of their statements when the store keeps vectors. `known`: statements
   * embedded already (by this embedder), not embedded again.
   */
  async embedAll(
    beliefs: readonly Belief[],
    known?: ReadonlyMap<string, Float32Array> | undefined,
  ): Promise<BeliefInsert[]> {
    const scope = beliefs[0]?.scope;
    if (!this.embedder || !scope || this.store.capabilities.vectorSearch === 'none') {
      return beliefs.map((belief) => ({ belief }));
    }
    const missing = beliefs.filter((b) => !known?.has(b.statement));
    const vectors = new Map(known);
    if (missing.length > 0) {
      // A write's embeddings are not refused for a spent budget: extraction checks the budgets before it starts.
      const embedded = await this.embedTexts(
        missing.map((b) => b.statement),
        scope,
        this.abort.signal,
      );
      missing.forEach((b, i) => {
        const v = embedded[i];
        if (v) vectors.set(b.statement, v);
      });
    }
    return beliefs.map((belief) => ({ belief, embedding: vectors.get(belief.statement) ?? null }));
  }

  /**
   * The embedding of a recall query, or null when the user's embedding budget is spent (recall goes on without
   * vectors until the window ends).
   */
  async embedQuery(
    query: string,
    scope: Scope,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array | null> {
    const embedder = this.embedder;
    if (!embedder) throw new InvalidInputError('embedder', 'is not configured');
    if (!(await embeddingAllowed(this, scope.userId))) return null;
    const [v] = await this.embed(embedder, [query], scope, signal);
    if (!v) throw new InvalidInputError('embedder', 'returned no vector');
    return v;
  }

  /** Calls the embedder for `scope`'s user and counts what it reports it used (one call when it reports nothing). */
  /** Embeds `texts` for `scope` with the configured embedder, counting the usage it reports into the budgets. */
  async embedTexts(
    texts: readonly string[],
    scope: Scope,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array[]> {
    const embedder = this.embedder;
    if (!embedder) throw new Error('embedTexts needs an embedder');
    return this.embed(embedder, texts, scope, signal);
  }

  private async embed(
    embedder: Embedder,
    texts: readonly string[],
    scope: Scope,
    signal: AbortSignal | undefined,
  ): Promise<Float32Array[]> {
    const reports: Usage[] = [];
    let vectors: Float32Array[];
    try {
      vectors = await embedder.embed(texts, { signal, scope, onUsage: (u) => reports.push(u) });
    } catch (err) {
      // A call that failed part way (a second batch, say) counts the requests it reported.
      if (reports.length > 0) await this.countEmbedding(scope, embeddingUsage(reports));
      throw err;
    }
    await this.countEmbedding(scope, embeddingUsage(reports));
    return vectors;
  }

  private async countEmbedding(scope: Scope, usage: Usage): Promise<void> {
    this.countUsage(usage);
    await recordUsage(this, scope.userId, usage);
  }
}
