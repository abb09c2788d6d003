/**
 * Entry points for agents that do not use the session hooks: dynamic instructions, context and search
 * helpers, and saving a turn by hand.
 */

import { createHash } from 'node:crypto';
import {
  AUTHORITY_POLICY,
  type Belief,
  type BudgetUsage,
  ClosedError,
  type ContextBlock,
  InvalidInputError,
  renderContextBlock,
  type Scope,
  type ScoredBelief,
  type SelectedContext,
} from '@mem01/engine';
import { type AppendEnqueue, assertId, normalizeScope, sanitizeError } from '@mem01/engine/binding-kit';
import {
  checkGivenRuntime,
  type MemoryRuntimeOptions,
  pinnedRuntime,
  type MemoryRuntime as Runtime,
  resolveRuntime,
} from '@mem01/runtime';
import type { Agent, AgentOutputType, RunContext } from '@openai/agents';
import { turnOf } from './items.js';
import type { MemSession } from './mem-session.js';
import { recallBlock } from './recall-block.js';

/**
 * Whose memory and which runtime. With `session`, its runtime (and, unless given, its user and namespace) is
 * used; otherwise the runtime options choose one, shared with sessions of identical settings and held until
 * `closeSharedRuntimes()`.
 */
export interface MemoryHelperOptions extends MemoryRuntimeOptions {
  readonly userId?: string | undefined;
  readonly namespace?: string | undefined;
  readonly session?: MemSession | undefined;
  /**
   * Called with the (sanitised) error whenever memory degrades (a recall that fails and falls back, a tool call
   * that fails). Beside the logger; an exception thrown by the callback is ignored.
   */
  readonly onError?: ((error: Error) => void) | undefined;
}

/** @internal Reports a degradation to `onError`, never letting the callback's own failure escape. */
export function reportError(
  options: { readonly onError?: ((error: Error) => void) | undefined },
  err: unknown,
): void {
  try {
    options.onError?.(sanitizeError(err));
  } catch {
    // The callback's failure must not break the run it reports on.
  }
}

/** @internal */
export async function helperRuntime(
  options: MemoryHelperOptions,
): Promise<{ runtime: Runtime; scope: Scope }> {
  if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
  if (options.session) {
    const scope =
      options.userId === undefined
        ? options.session.scope
        : normalizeScope({ userId: options.userId, namespace: options.namespace });
    const runtime = await options.session.runtime();
    return { runtime, scope };
  }
  const scope = normalizeScope({ userId: options.userId, namespace: options.namespace });
  // `blockBytes` (or its deprecated name `budgetBytes`) of a helper call is a per-call block size, not a runtime
  // setting: it must not pick another runtime, whose read barrier would not wait for this runtime's writes.
  const { blockBytes: _perCall, budgetBytes: _perCallOld, ...runtimeOptions } = options;
  const given = checkGivenRuntime(runtimeOptions);
  if (given) {
    if (given.engine.isClosed) throw new ClosedError('mem01session runtime');
    return { runtime: given, scope };
  }
  const runtime = await pinnedRuntime(resolveRuntime(runtimeOptions));
  return { runtime, scope };
}

/** Options of {@link getMemoryContext}: a `query` to recall for, or the `ids` the host selected. */
export interface MemoryContextOptions extends MemoryHelperOptions {
  /** What to recall for; empty for a profile of the newest beliefs. Not with `ids`. */
  readonly query?: string | undefined;
  /**
   * Host-selected beliefs (ids from `searchMemories`, the tools or a list), rendered in the order given instead of a
   * recall: active beliefs of this user only; the others are left out and listed in `skipped`. Not with `query`.
   */
  readonly ids?: readonly string[] | undefined;
  /** Block size in UTF-8 bytes. Default: the runtime's `blockBytes` (800). */
  readonly blockBytes?: number | undefined;
  /** @deprecated The earlier name of `blockBytes`; use `blockBytes`. */
  readonly budgetBytes?: number | undefined;
}

/** What {@link getMemoryContext} returns. */
export interface MemoryContext extends Pick<ContextBlock, 'text' | 'bytes' | 'beliefs' | 'omitted'> {
  /** With `ids`: the ids left out (`not_found`, `not_active`, `duplicate`), in the order given. Empty for a query. */
  readonly skipped: SelectedContext['skipped'];
}

/**
 * The bounded memory block, as the hooks would inject it (after the user's accepted writes): recalled for `query`,
 * or of the beliefs the host selected by `ids`.
 */
export async function getMemoryContext(options: MemoryContextOptions): Promise<MemoryContext> {
  const selection = contextSelection(options);
  const { runtime, scope } = await helperRuntime(options);
  const block = await recallBlock(runtime, scope, selection, {
    blockBytes: options.blockBytes,
    budgetBytes: options.budgetBytes,
    purpose: 'context',
  });
  return {
    text: block.text,
    bytes: block.bytes,
    beliefs: block.beliefs,
    omitted: block.omitted,
    skipped: block.skipped,
  };
}

/** The query, or the host's `{ ids }`, of a helper call: exactly one of them. */
function contextSelection(
  options: { readonly query?: unknown; readonly ids?: unknown } | undefined,
): string | { readonly ids: readonly string[] } {
  if (options?.ids !== undefined) {
    if (options.query !== undefined) throw new InvalidInputError('ids', 'give `query` or `ids`, not both');
    return { ids: checkIds(options.ids) };
  }
  if (typeof options?.query !== 'string') throw new InvalidInputError('query', 'must be a string');
  return options.query;
}

/** Host-selected ids: an array of ids (the engine checks each and the count). */
function checkIds(ids: unknown): readonly string[] {
  if (!Array.isArray(ids)) throw new InvalidInputError('ids', 'must be an array of belief ids');
  ids.forEach((id, i) => {
    assertId(id, `ids[${i}]`);
  });
  return ids as readonly string[];
}

/** Options of {@link searchMemories}. */
export interface SearchMemoriesOptions extends MemoryHelperOptions {
  readonly query: string;
  /** At most this many. Default the engine's `recallLimit` (6). */
  readonly limit?: number | undefined;
  /** Only results scoring at least this (0..1; the engine's `minScore`). Default 0. */
  readonly minScore?: number | undefined;
}

/**
 * The user's active beliefs and episodes most relevant to `query`, best first, each with its `score` (0..1) and
 * `tier` (`belief`, `episode` or `summary`).
 */
export async function searchMemories(options: SearchMemoriesOptions): Promise<ScoredBelief[]> {
  if (typeof options?.query !== 'string') throw new InvalidInputError('query', 'must be a string');
  const { runtime, scope } = await helperRuntime(options);
  return runtime.engine.recall(scope, options.query, {
    limit: options.limit,
    minScore: options.minScore,
  });
}

/**
 * What the user used of each budget in the current window: extractor calls and tokens, embedder calls and tokens
 * (counted in the store by every runtime sharing it, while a call or token budget is set) and the active beliefs,
 * each with the runtime's limit (null: none), and the window's start and end. Does not wait for queued turns.
 *
 * @example
 * const u = await getMemoryUsage({ userId: 'user-123' });
 * if (u.embeddingCalls.limit !== null && u.embeddingCalls.used >= u.embeddingCalls.limit) console.log(u.windowEnd);
 */
export async function getMemoryUsage(options: MemoryHelperOptions): Promise<BudgetUsage> {
  const { runtime, scope } = await helperRuntime(options);
  return runtime.engine.usage(scope);
}

/** Options of {@link saveTurn}. */
export interface SaveTurnOptions extends MemoryHelperOptions {
  /**
   * The conversation the turn belongs to (its transcript). Default: `session`'s conversation when `session` is
   * given, else {@link savedTurnsSessionId} of the user and namespace (one conversation of saved turns per user).
   */
  readonly sessionId?: string | undefined;
  /** What the user said. */
  readonly user?: string | undefined;
  /** What the assistant answered (context for extraction, never evidence about the user). */
  readonly assistant?: string | undefined;
}

/**
 * Saves one turn without the session hooks: appends it to the conversation's transcript and accepts its
 * text for extraction in the same transaction. Resolves once accepted, not once extracted. Returns the
 * conversation it went to (`sessionId`) with the items' positions there.
 *
 * @example
 * await saveTurn({ userId: 'user-123', user: 'I moved to Lisbon', assistant: 'Noted!' });
 */
export async function saveTurn(
  options: SaveTurnOptions,
): Promise<{ sessionId: string; positions: readonly number[]; accepted: number }> {
  if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
  if (options.sessionId !== undefined) assertId(options.sessionId, 'sessionId');
  const items: unknown[] = [];
  if (options.user !== undefined) {
    if (typeof options.user !== 'string') throw new InvalidInputError('user', 'must be a string');
    items.push({ role: 'user', content: options.user });
  }
  if (options.assistant !== undefined) {
    if (typeof options.assistant !== 'string') throw new InvalidInputError('assistant', 'must be a string');
    items.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: options.assistant }],
    });
  }
  if (items.length === 0) throw new InvalidInputError('user', 'give `user`, `assistant` or both');
  const { runtime, scope } = await helperRuntime(options);
  const sessionId =
    options.sessionId ??
    (options.session && options.userId === undefined
      ? options.session.sessionId
      : savedTurnsSessionId(scope));
  const at = new Date().toISOString();
  const turns: AppendEnqueue[] = [];
  items.forEach((item, index) => {
    const turn = turnOf(item);
    if (turn) turns.push({ index, ...turn, at });
  });
  const result = await runtime.engine.appendTranscript(scope, sessionId, items, { turns });
  return { sessionId, positions: result.positions, accepted: result.accepted };
}

/**
 * The conversation {@link saveTurn} uses when no `sessionId` is given: one per user and namespace,
 * `saved-turns:` and a hash of the two (a session id belongs to one user store-wide, so it cannot be shared).
 */
export function savedTurnsSessionId(scope: { userId: string; namespace?: string | undefined }): string {
  const { userId, namespace } = normalizeScope(scope);
  return `saved-turns:${createHash('sha256')
    .update(JSON.stringify([userId, namespace]))
    .digest('hex')
    .slice(0, 32)}`;
}

/** Options of {@link memoryInstructions}. */
export interface MemoryInstructionsOptions extends Omit<MemoryHelperOptions, 'userId'> {
  /**
   * `profile` (default): the newest active beliefs; `query`: recall for the run's input; `full`: both. The query
   * is `query(runContext)` when given, else the latest user text of `session`'s current run, else
   * `runContext.context` when it is a string or has a string `input`/`query` field; otherwise a profile.
   */
  readonly mode?: 'profile' | 'query' | 'full' | undefined;
  /**
   * Whose memory: a user id, or a function of the run context resolved on every run, for an app that serves many
   * users with one agent (e.g. `(ctx) => ctx.context.userId`).
   */
  readonly userId?: string | ((runContext: RunContext<unknown>) => string) | undefined;
  readonly query?: ((runContext: RunContext<unknown>) => string | undefined) | undefined;
  /**
   * Host-selected beliefs instead of a recall: the block holds these, in the order given (active beliefs of this user
   * only; the engine's `context(scope, { ids })`). A list, or a function of the run context resolved on every run
   * (e.g. `(ctx) => ctx.context.pinnedMemoryIds`). No beliefs found: the base instructions alone. Not with `mode` or
   * `query`.
   */
  readonly ids?:
    | readonly string[]
    | ((runContext: RunContext<unknown>) => readonly string[] | undefined)
    | undefined;
  /** Block size in UTF-8 bytes. Default: the runtime's `blockBytes` (800). */
  readonly blockBytes?: number | undefined;
  /** @deprecated The earlier name of `blockBytes`; use `blockBytes`. */
  readonly budgetBytes?: number | undefined;
}

/**
 * Dynamic instructions for an agent of any output type: the agent parameter is taken as `unknown` so the function
 * is assignable to `Agent<TContext, TOutput>['instructions']` whatever `TOutput` is.
 */
type Instructions<TContext> = (runContext: RunContext<TContext>, agent: unknown) => Promise<string>;

/**
 * Dynamic agent instructions: `base` followed by the memory block (recalled, or of the host-selected `ids`) and the
 * authority policy. A recall failure degrades to `base` alone (the failure is logged through the runtime's logger).
 */
export function memoryInstructions<TContext = unknown>(
  base:
    | string
    | ((
        runContext: RunContext<TContext>,
        agent: Agent<TContext, AgentOutputType>,
      ) => string | Promise<string>),
  options: MemoryInstructionsOptions,
): Instructions<TContext> {
  if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
  const mode = options.mode ?? 'profile';
  if (!['profile', 'query', 'full'].includes(mode)) {
    throw new InvalidInputError('mode', 'must be profile, query or full');
  }
  if (options.ids !== undefined) {
    if (options.mode !== undefined || options.query !== undefined)
      throw new InvalidInputError('ids', 'give `ids` or `mode`/`query`, not both');
    if (typeof options.ids !== 'function') checkIds(options.ids);
  }
  const perRun = typeof options.userId === 'function' ? options.userId : null;
  if (!options.session && !perRun) normalizeScope({ userId: options.userId, namespace: options.namespace });
  return async (runContext, agent) => {
    const baseText =
      typeof base === 'function' ? await base(runContext, agent as Agent<TContext, AgentOutputType>) : base;
    let runtime: Runtime | undefined;
    try {
      const userId = perRun
        ? perRun(runContext as RunContext<unknown>)
        : (options.userId as string | undefined);
      const resolved = await helperRuntime({ ...options, userId });
      runtime = resolved.runtime;
      const size = { blockBytes: options.blockBytes, budgetBytes: options.budgetBytes };
      // Both names with different values are refused by the engine at the recall below, before this is used.
      const budget = options.blockBytes ?? options.budgetBytes ?? runtime.blockBytes;
      if (options.ids !== undefined) {
        const ids =
          typeof options.ids === 'function'
            ? checkIds(options.ids(runContext as RunContext<unknown>) ?? [])
            : options.ids;
        const block = await recallBlock(runtime, resolved.scope, { ids }, { ...size, purpose: 'selected' });
        if (block.beliefs.length === 0) return baseText;
        return `${baseText}\n\n${block.text}\n\n${AUTHORITY_POLICY}`;
      }
      const beliefs: Belief[] = [];
      const seen = new Set<string>();
      const add = (list: readonly Belief[]) => {
        for (const b of list) {
          if (!seen.has(b.id)) {
            seen.add(b.id);
            beliefs.push(b);
          }
        }
      };
      const query = mode === 'profile' ? '' : queryOf(options, runContext as RunContext<unknown>);
      const recall = async (q: string, purpose: string) =>
        add((await recallBlock(runtime as Runtime, resolved.scope, q, { ...size, purpose })).beliefs);
      if (query) await recall(query, 'instructions');
      if (mode !== 'query' || !query) await recall('', 'profile');
      if (beliefs.length === 0) return baseText;
      const block = renderContextBlock(beliefs, budget, { query });
      return `${baseText}\n\n${block.text}\n\n${AUTHORITY_POLICY}`;
    } catch (err) {
      runtime?.logger?.warn(
        `mem01: memory instructions fell back to the base instructions: ${String((err as Error)?.message ?? err)}`,
      );
      reportError(options, err);
      return baseText;
    }
  };
}

function queryOf(options: MemoryInstructionsOptions, runContext: RunContext<unknown>): string {
  const fromFn = options.query?.(runContext);
  if (typeof fromFn === 'string') return fromFn;
  const fromSession = options.session?.latestQuery;
  if (fromSession) return fromSession;
  const ctx = runContext?.context as unknown;
  if (typeof ctx === 'string') return ctx;
  if (ctx && typeof ctx === 'object') {
    const rec = ctx as Record<string, unknown>;
    if (typeof rec.input === 'string') return rec.input;
    if (typeof rec.query === 'string') return rec.query;
  }
  return '';
}
