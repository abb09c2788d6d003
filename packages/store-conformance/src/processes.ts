/** Process identities for the liveness tests: this process, its predecessor, an exited one, one on another host. */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ProcessIdentity } from '@mem01/engine/store-kit';

/** This process as a store computes it (another token: a store's token is private to its module). */
export function thisProcess(): ProcessIdentity {
  return {
    host: hostname(),
    pid: process.pid,
    startedAt: Math.round(Date.now() - process.uptime() * 1000),
    token: randomUUID(),
  };
}

let exitedPid: number | null = null;

/** A process of this host that has exited: a Node process run to its end (and reaped), once per test run. */
export function exitedProcess(): ProcessIdentity {
  if (exitedPid === null) {
    const run = spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
    if (run.pid === undefined || run.status !== 0)
      throw new Error(`cannot run ${process.execPath}: ${run.error}`);
    exitedPid = run.pid;
  }
  return { host: hostname(), pid: exitedPid, startedAt: Date.now() - 60_000, token: randomUUID() };
}

/** This process's predecessor with the same pid (a restarted container's pid 1, say): it started a minute earlier. */
export function predecessorProcess(): ProcessIdentity {
  const self = thisProcess();
  return { ...self, startedAt: self.startedAt - 60_000, token: randomUUID() };
}

/** A live process of this host other than this one: the parent (the test runner). */
export function liveProcess(): ProcessIdentity {
  return { host: hostname(), pid: process.ppid, startedAt: Date.now() - 3_600_000, token: randomUUID() };
}

/** A process on another host: its pid cannot be probed from here, whatever it is. */
export function remoteProcess(): ProcessIdentity {
  return { ...exitedProcess(), host: `elsewhere-${randomUUID()}` };
}
