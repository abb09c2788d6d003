/**
 * Budgets are the engine's (`config.budgets`, counted in the store so that every worker sharing it respects one
 * budget); the OpenAI extractor and embedder only report what each call used, and the engine counts it. What is left
 * here are the deprecated names of the budgets this package used to keep in process, which now say what to use.
 */
import { BudgetExceededError, ConfigError } from '@mem01/engine';

/**
 * @deprecated Nothing in `@mem01/openai` throws it any more: a spent budget is the engine's `BudgetExceededError`
 * (set `config.budgets`). Kept so that existing `instanceof` checks still compile.
 */
export class OpenAIBudgetExceededError extends BudgetExceededError {
  declare readonly resetAt: string;
  readonly budget: string;
  constructor(budget: string, limit: number, periodMs: number, resetAt: string) {
    super(
      `${budget} budget spent for this user (${limit} per ${periodMs} ms); the call was not made and the turns stay queued until ${resetAt}`,
      { resetAt },
    );
    this.budget = budget;
  }
}

/** What replaces the extractor's and embedder's own budgets, for the errors below. */
const USE_ENGINE_BUDGETS =
  'budgets are the engine’s now: set them in the engine config (`engine: { budgets: { … } }` of memSession or ' +
  'openMemoryRuntime, `new MemoryEngine({ config: { budgets } })`, or the MEM01_*_PER_USER variables), which counts ' +
  'the usage this package reports in the store; read them with `engine.usage(scope)`';

/** `ConfigError` for the removed `budgets` option of `createOpenAIExtractor` / `createOpenAIEmbedder`. */
export function refuseOwnBudgets(options: { readonly budgets?: unknown }, factory: string): void {
  if (options.budgets !== undefined)
    throw new ConfigError(`${factory}({ budgets }) is no longer supported: ${USE_ENGINE_BUDGETS}`);
}

/** `ConfigError` for the removed `budgetUsed()` of the extractor and the embedder. */
export function budgetUsedRemoved(): never {
  throw new ConfigError(`budgetUsed() is no longer supported: ${USE_ENGINE_BUDGETS}`);
}
