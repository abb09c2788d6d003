/**
 * Engine budgets (`config.budgets`): per-user counters of extractor calls and tokens in fixed windows, and a result
 * capacity (active beliefs per user), kept in the store so that every worker sharing it respects one budget.
 */
import type { EngineCore } from './engine-core.js';
import { BudgetExceededError, CapabilityError, describeError } from './errors.js';
import type { BudgetStore } from './ports.js';
import type { Usage } from './types.js';

const COUNTERS = [
  ['llm_calls', 'llmCallsPerUser', 'llmCalls'],
  ['input_tokens', 'inputTokensPerUser', 'inputTokens'],
  ['output_tokens', 'outputTokensPerUser', 'outputTokens'],
] as const;

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
  if (core.config.budgets.maxActiveBeliefsPerUser !== null) budgetStore(core, 'countActiveBeliefs');
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

/** `BudgetExceededError` when the user holds `maxActiveBeliefsPerUser` active beliefs (episodes left out). */
export async function checkCapacity(core: EngineCore, userId: string): Promise<void> {
  const max = core.config.budgets.maxActiveBeliefsPerUser;
  if (max === null) return;
  const n = await budgetStore(core, 'countActiveBeliefs').countActiveBeliefs(userId, {
    excludeKinds: ['episode'],
  });
  if (n >= max) {
    const resetAt = new Date(core.clock().getTime() + core.config.budgetRetryMs).toISOString();
    throw new BudgetExceededError(
      `result capacity reached for this user (${n} active beliefs, at most ${max}); retried after ${resetAt}`,
      { resetAt },
    );
  }
}

/** After an extractor call: adds what it used to the user's counters. A failure is logged, never raised. */
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
