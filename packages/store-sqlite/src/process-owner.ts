/**
 * This process as the holder of outbox claims, and the probe that tells whether another process on this host still
 * runs (the rule that uses them is the store kit's `processHasExited`).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ProcessIdentity } from '@mem01/engine/store-kit';

/** This process: its start is process-wide (`process.uptime()`), so every worker thread computes the same one. */
export const THIS_PROCESS: ProcessIdentity = Object.freeze({
  host: hostname(),
  pid: process.pid,
  startedAt: Math.round(Date.now() - process.uptime() * 1000),
  token: randomUUID(),
});

/** Is there a process with this pid on this host? Signal 0 only checks; EPERM means it exists under another user. */
export function pidExists(pid: number): boolean {
  // 0 and negative pids address process groups: never probe them.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
