/**
 * Engine budgets (`config.budgets`): per-user counters of extractor and embedder calls and tokens in fixed windows,
 * and a result capacity (active beliefs per user), kept in the store so that every worker sharing it respects one
 * budget; and `usage()`, what a user has used of them.
 */
import { BYTES_PER_TOKEN } from './config.js';
import type { EngineCore } from './engine-core.js';
import { BudgetExceededError, CapabilityError, describeError } from './errors.js';
import type { BudgetStore } from './ports.js';
import { CONVERSATION_KINDS, type Usage } from './types.js';

const COUNTERS = [
  ['llm_calls', 'llmCallsPerUser', 'llmCalls'],
  ['input_tokens', 'inputTokensPerUser', 'inputTokens'],
  ['output_tokens', 'outputTokensPerUser', 'outputTokens'],
  ['embedding_calls', 'embeddingCallsPerUser', 'embeddingCalls'],
  ['embedding_tokens', 'embeddingTokensPerUser', 'embeddingTokens'],
] as const;

/** The counters of the embedder, checked before a recall query's embedding. */
const EMBEDDING_COUNTERS = COUNTERS.filter(([name]) => name.startsWith('embedding_'));

/** One budget in {@link BudgetUsage}: what the user used in the current window, and the limit (null: none). */
export interface BudgetLine {
  readonly used: number;
  readonly limit: number | null;
}

/**
 * What a user used of each budget in the current window (`MemoryAdmin.usage`), read from the store: the counters
 * every engine sharing it added to, against this engine's limits (`config.budgets`).
 */
export interface BudgetUsage {
  readonly userId: string;
  /** The window's length (`config.budgets.periodMs`). */
  readonly periodMs: number;
  /** Start of the current window (inclusive), ISO-8601 UTC; windows are aligned to the Unix epoch. */
  readonly windowStart: string;
  /** End of the current window (exclusive), ISO-8601 UTC: when the counters start again from zero. */
  readonly windowEnd: string;
  /**
   * Whether this engine adds to the counters: only while one of its call or token budgets is set (it then keeps
   * every counter, limited or not). Other engines sharing the store may count when this one does not.
   */
  readonly counting: boolean;
  /** Extractor calls (`usage.llmCalls`). */
  readonly llmCalls: BudgetLine;
  readonly inputTokens: BudgetLine;
  readonly outputTokens: BudgetLine;
  /** Embedder calls (provider requests as the embedder reports them, else one per call). */
  readonly embeddingCalls: BudgetLine;
  readonly embeddingTokens: BudgetLine;
  /** Active beliefs now, in every namespace, episodes left out, against `maxActiveBeliefsPerUser`. */
  readonly activeBeliefs: BudgetLine;
  /**
   * The estimated tokens of those beliefs' statements (UTF-8 bytes / `BYTES_PER_TOKEN`, rounded up), against
   * `maxActiveTokensPerUser`.
   */
  readonly activeTokens: BudgetLine;
}

/** Whether any call or token budget is set. */
function countsUsage(core: EngineCore): boolean {
  const b = core.config.budgets;
  return COUNTERS.some(([, limit]) => b[limit] !== null);
}

/** The store's budget counters; `CapabilityError` naming a store without them. */
function budgetStore(core: EngineCore, method: keyof BudgetStore): BudgetStore {
  const s = core.store as Partial<BudgetStore>;
  if (typeof s[method] !== 'function') throw new CapabilityError(core.store.name, `budgets (${method})`);
  return s as BudgetStore;
}

/** Throws `CapabilityError` at construction when budgets are set and the store cannot keep them. */
export function checkBudgetCapability(core: EngineCore): void {
  if (countsUsage(core)) budgetStore(core, 'chargeBudget');
  const b = core.config.budgets;
  if (b.maxActiveBeliefsPerUser !== null || b.maxActiveTokensPerUser !== null)
    budgetStore(core, 'countActiveBeliefs');
}

function window(core: EngineCore): { start: string; end: string } {
  const period = core.config.budgets.periodMs;
  const start = Math.floor(core.clock().getTime() / period) * period;
  return { start: new Date(start).toISOString(), end: new Date(start + period).toISOString() };
}

/**
 * Before an extractor call for `userId`: `BudgetExceededError` (with `resetAt`, the window's end) when a call or token
 * counter of the user's window has reached its limit, and (with `capacity`) when the user holds the most active
 * beliefs allowed (`resetAt`: now + `budgetRetryMs`, when the engine looks again).
 */
export async function checkBudgets(core: EngineCore, userId: string, capacity = true): Promise<void> {
  const b = core.config.budgets;
  if (countsUsage(core)) {
    const w = window(core);
    const result = await budgetStore(core, 'chargeBudget').chargeBudget({
      userId,
      windowStart: w.start,
      charges: COUNTERS.flatMap(([name, limit]) =>
        b[limit] === null ? [] : [{ name, amount: 0, limit: b[limit] }],
      ),
    });
    if (!result.charged) {
      throw new BudgetExceededError(
        `${result.name} budget spent for this user (${result.limit} per ${b.periodMs} ms); the turns stay queued until ${w.end}`,
        { resetAt: w.end },
      );
    }
  }
  if (capacity) await checkCapacity(core, userId);
}

/** The estimated tokens of `bytes` UTF-8 bytes of statements. */
const tokensOf = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN);

/** The user's active beliefs (episodes left out), in beliefs or in estimated tokens. */
async function activeOf(core: EngineCore, userId: string, unit: 'beliefs' | 'tokens'): Promise<number> {
  const n = await budgetStore(core, 'countActiveBeliefs').countActiveBeliefs(userId, {
    excludeKinds: [...CONVERSATION_KINDS],
    unit: unit === 'tokens' ? 'bytes' : 'beliefs',
  });
  return unit === 'tokens' ? tokensOf(n) : n;
}

/**
 * `BudgetExceededError` when the user holds `maxActiveBeliefsPerUser` active beliefs, or their statements hold
 * `maxActiveTokensPerUser` tokens (episodes left out).
 */
export async function checkCapacity(core: EngineCore, userId: string): Promise<void> {
  const b = core.config.budgets;
  for (const [max, unit, what] of [
    [b.maxActiveBeliefsPerUser, 'beliefs', 'active beliefs'],
    [b.maxActiveTokensPerUser, 'tokens', 'estimated tokens of active beliefs'],
  ] as const) {
    if (max === null) continue;
    const n = await activeOf(core, userId, unit);
    if (n >= max) {
      const resetAt = new Date(core.clock().getTime() + core.config.budgetRetryMs).toISOString();
      throw new BudgetExceededError(
        `result capacity reached for this user (${n} ${what}, at most ${max}); retried after ${resetAt}`,
        { resetAt },
      );
    }
  }
}

/**
 * After an extractor or embedder call: adds what it used to the user's counters (without a check: one batch may go
 * over a limit). A failure is logged, never raised.
 */
export async function recordUsage(core: EngineCore, userId: string, usage: Usage | undefined): Promise<void> {
  if (!usage || !countsUsage(core)) return;
  const charges = COUNTERS.flatMap(([name, , field]) => {
    const amount = usage[field];
    return typeof amount === 'number' && Number.isSafeInteger(amount) && amount > 0
      ? [{ name, amount, limit: null }]
      : [];
  });
  if (charges.length === 0) return;
  try {
    await budgetStore(core, 'chargeBudget').chargeBudget({
      userId,
      windowStart: window(core).start,
      charges,
    });
  } catch (err) {
    core.logger?.warn(`mem01: budget usage not recorded: ${describeError(err)}`);
  }
}

/**
 * Before a recall query's embedding for `userId`: false when an embedding call or token counter of the user's
 * window has reached its limit (recall then goes on without vectors); true when none is set.
 */
export async function embeddingAllowed(core: EngineCore, userId: string): Promise<boolean> {
  const b = core.config.budgets;
  const charges = EMBEDDING_COUNTERS.flatMap(([name, limit]) =>
    b[limit] === null ? [] : [{ name, amount: 0, limit: b[limit] }],
  );
  if (charges.length === 0) return true;
  const result = await budgetStore(core, 'chargeBudget').chargeBudget({
    userId,
    windowStart: window(core).start,
    charges,
  });
  return result.charged;
}

/**
 * What one embedder call used, from the reports it gave through `onUsage` (well-formed counts only): their sums, or
 * one call when it reported nothing.
 */
export function embeddingUsage(reports: readonly Usage[]): Usage {
  if (reports.length === 0) return { embeddingCalls: 1 };
  let calls = 0;
  let tokens = 0;
  const count = (n: unknown): number => (typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0);
  for (const r of reports) {
    calls += count(r?.embeddingCalls);
    tokens += count(r?.embeddingTokens);
  }
  return { embeddingCalls: calls, embeddingTokens: tokens };
}

/** `MemoryAdmin.usage`: the user's counters of the current window and active beliefs, against the limits. */
export async function budgetUsage(core: EngineCore, userId: string): Promise<BudgetUsage> {
  const b = core.config.budgets;
  const w = window(core);
  const used = await budgetStore(core, 'readBudget').readBudget({ userId, windowStart: w.start });
  const active = await activeOf(core, userId, 'beliefs');
  const tokens = await activeOf(core, userId, 'tokens');
  const line = (name: (typeof COUNTERS)[number][0], limit: (typeof COUNTERS)[number][1]): BudgetLine => ({
    used: used[name] ?? 0,
    limit: b[limit],
  });
  return {
    userId,
    periodMs: b.periodMs,
    windowStart: w.start,
    windowEnd: w.end,
    counting: countsUsage(core),
    llmCalls: line('llm_calls', 'llmCallsPerUser'),
    inputTokens: line('input_tokens', 'inputTokensPerUser'),
    outputTokens: line('output_tokens', 'outputTokensPerUser'),
    embeddingCalls: line('embedding_calls', 'embeddingCallsPerUser'),
    embeddingTokens: line('embedding_tokens', 'embeddingTokensPerUser'),
    activeBeliefs: { used: active, limit: b.maxActiveBeliefsPerUser },
    activeTokens: { used: tokens, limit: b.maxActiveTokensPerUser },
  };
}
