/**
 * Per-user caps on calls and tokens in fixed windows. In-process: each worker process counts its own calls. For one
 * budget shared by every worker of a database, use the engine's `config.budgets` (counted in the store).
 */
import { BudgetExceededError } from '@mem01/engine';

/** A spent budget. `resetAt` (ISO-8601) is when the user's window ends; the turns stay queued until then. */
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

interface Window {
  start: number;
  readonly used: Map<string, number>;
}

/** Counts named quantities per user within windows of `periodMs`. */
export class BudgetLedger {
  readonly #limits: Readonly<Record<string, number | undefined>>;
  readonly #periodMs: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();

  constructor(limits: Readonly<Record<string, number | undefined>>, periodMs: number, now: () => number) {
    this.#limits = limits;
    this.#periodMs = periodMs;
    this.#now = now;
  }

  /** True when no limit is configured. */
  get unlimited(): boolean {
    return Object.values(this.#limits).every((v) => v === undefined);
  }

  #window(userId: string): Window {
    const now = this.#now();
    let w = this.#windows.get(userId);
    if (!w || now - w.start >= this.#periodMs) {
      w = { start: now, used: new Map() };
      this.#windows.set(userId, w);
      if (this.#windows.size > 10_000) this.#prune(now);
    }
    return w;
  }

  #prune(now: number): void {
    for (const [k, w] of this.#windows) if (now - w.start >= this.#periodMs) this.#windows.delete(k);
  }

  /**
   * Reserves `amounts` for the user, all or nothing. Throws `OpenAIBudgetExceededError` (reserving nothing)
   * when any named budget would go over its limit, or, for an amount of 0 (a quantity known only after the call, such
   * as output tokens), when it has reached its limit.
   */
  reserve(userId: string, amounts: Readonly<Record<string, number>>): void {
    if (this.unlimited) return;
    const w = this.#window(userId);
    for (const [name, amount] of Object.entries(amounts)) {
      const limit = this.#limits[name];
      if (limit === undefined) continue;
      const used = w.used.get(name) ?? 0;
      if (used + amount > limit || (amount === 0 && used >= limit)) {
        throw new OpenAIBudgetExceededError(
          name,
          limit,
          this.#periodMs,
          new Date(w.start + this.#periodMs).toISOString(),
        );
      }
    }
    for (const [name, amount] of Object.entries(amounts)) w.used.set(name, (w.used.get(name) ?? 0) + amount);
  }

  /** Adjusts a reservation after the fact (positive or negative); never throws. */
  adjust(userId: string, name: string, delta: number): void {
    if (this.unlimited || delta === 0) return;
    const w = this.#windows.get(userId);
    if (!w) return;
    w.used.set(name, Math.max(0, (w.used.get(name) ?? 0) + delta));
  }

  /** What the user has used in the current window. */
  used(userId: string): Record<string, number> {
    const w = this.#windows.get(userId);
    if (!w || this.#now() - w.start >= this.#periodMs) return {};
    return Object.fromEntries(w.used);
  }
}
