/**
 * Runtime sharing: sessions with identical settings share one store + engine through a reference-counted
 * lease. The last release drains accepted writes and closes what the package opened.
 */
import { ClosedError } from '@mem01/engine';
import type { MemoryRuntime as Runtime, RuntimeSpec } from './resolve-runtime.js';

interface Entry {
  readonly key: string;
  readonly runtime: Promise<Runtime>;
  refs: number;
}

const entries = new Map<string, Entry>();
/** Runtimes being closed, by key: a new lease for the same settings waits for the close to finish. */
const closing = new Map<string, Promise<void>>();

/** A hold on a shared runtime. `release()` is idempotent. */
export interface RuntimeLease {
  readonly key: string;
  readonly runtime: Promise<Runtime>;
  release(): Promise<void>;
}

/** Takes a lease on the runtime for `spec`, opening it when no session holds one. */
export function acquireRuntime(spec: RuntimeSpec): RuntimeLease {
  let entry = entries.get(spec.key);
  if (!entry) {
    const pendingClose = closing.get(spec.key);
    const runtime = (pendingClose ? pendingClose.then(() => spec.open()) : spec.open()).catch(
      (err: unknown) => {
        // A runtime that failed to open is not shared: the next session tries again.
        if (entries.get(spec.key) === created) entries.delete(spec.key);
        throw err;
      },
    );
    const created: Entry = { key: spec.key, runtime, refs: 0 };
    entry = created;
    entries.set(spec.key, entry);
  }
  entry.refs++;
  const held = entry;
  let released: Promise<void> | null = null;
  return {
    key: spec.key,
    runtime: held.runtime,
    release() {
      released ??= releaseEntry(held);
      return released;
    },
  };
}

async function releaseEntry(entry: Entry): Promise<void> {
  entry.refs--;
  if (entry.refs > 0 || entries.get(entry.key) !== entry) return;
  entries.delete(entry.key);
  await closeEntry(entry);
}

async function closeEntry(entry: Entry): Promise<void> {
  const done = (async () => {
    let runtime: Runtime;
    try {
      runtime = await entry.runtime;
    } catch {
      return; // never opened: nothing to close
    }
    await runtime.close();
  })();
  closing.set(entry.key, done);
  try {
    await done;
  } finally {
    if (closing.get(entry.key) === done) closing.delete(entry.key);
  }
}

/**
 * Drains and closes every runtime this package opened, whatever sessions still hold them (for process
 * shutdown). Sessions used afterwards fail with `ClosedError`. Stores passed in by the caller stay open.
 */
export async function closeSharedRuntimes(): Promise<void> {
  pinned.clear();
  const all = [...entries.values()];
  entries.clear();
  for (const e of all) e.refs = 0;
  await Promise.all([...all.map(closeEntry), ...closing.values()]);
}

/** Number of open shared runtimes (for tests and diagnostics). */
export function sharedRuntimeCount(): number {
  return entries.size;
}

/** Throws `ClosedError` when the runtime's engine was closed (e.g. by {@link closeSharedRuntimes}). */
export function assertRuntimeOpen(runtime: Runtime): void {
  if (runtime.engine.isClosed) throw new ClosedError('mem01session runtime');
}

/** Leases held by the helper functions (tools, instructions, saveTurn) until {@link closeSharedRuntimes}. */
const pinned = new Map<string, RuntimeLease>();

/** The runtime for `spec`, held for the rest of the process (or until {@link closeSharedRuntimes}). */
export async function pinnedRuntime(spec: RuntimeSpec): Promise<Runtime> {
  let lease = pinned.get(spec.key);
  if (!lease) {
    lease = acquireRuntime(spec);
    pinned.set(spec.key, lease);
  }
  try {
    const runtime = await lease.runtime;
    if (runtime.engine.isClosed) throw new ClosedError('mem01session runtime');
    return runtime;
  } catch (err) {
    if (pinned.get(spec.key) === lease) {
      pinned.delete(spec.key);
      await lease.release();
    }
    throw err;
  }
}
