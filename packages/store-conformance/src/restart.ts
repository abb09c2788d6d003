/**
 * The restart check of the stores' process tests: a process started after one SIGKILLed mid-extraction serves the
 * user's next recall (the read barrier `flush`, then `recall`) and prints a {@link RestartReport}; each store's test
 * spawns its own processes, and checks the report with {@link expectRestartServedAll}.
 */
import { expect } from 'vitest';

/** What the restarted process prints, as one JSON line. */
export interface RestartReport {
  /** Since the process started: Node start-up, imports, opening and the recall. */
  readonly recallMs: number;
  readonly recalled: string[];
  readonly beliefs: string[];
  readonly backlog: { readonly queued: number; readonly claimed: number };
  readonly lastError: string | null;
}

/**
 * Checks the restarted process's run: it exited 0 with nothing on stderr, and every one of the `turns` turns of
 * `userId` (`"<userId> turn <i> from child"`) is stored and recalled, with nothing queued or claimed and no
 * extraction error. Logs how long the recall took. Returns the turn texts, in order.
 */
export function expectRestartServedAll(
  run: { readonly code: number | null; readonly stdout: string; readonly stderr: string },
  processMs: number,
  store: string,
  userId: string,
  turns: number,
): string[] {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as RestartReport;
  console.log(
    `${store}: restarted process recalled ${result.recallMs.toFixed(0)} ms after it started ` +
      `(${processMs.toFixed(0)} ms from spawn to exit)`,
  );
  const all = Array.from({ length: turns }, (_, i) => `${userId} turn ${i} from child`);
  expect(result.lastError).toBeNull();
  expect(result.backlog).toMatchObject({ queued: 0, claimed: 0 });
  expect([...result.beliefs].sort()).toEqual(all);
  expect([...result.recalled].sort()).toEqual(all);
  return all;
}
