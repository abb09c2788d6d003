/**
 * Loads `node:sqlite` on first use instead of importing it statically: a static import fails at link time on a
 * Node.js without the module (Node 20 throws `ERR_UNKNOWN_BUILTIN_MODULE` before any code of ours runs), so
 * merely importing this package, or a package that may fall back to it, would crash the process.
 */
import type * as NodeSqlite from 'node:sqlite';
import { UnsupportedRuntimeError } from '@mem01/engine';

/** The first Node.js release with an unflagged `node:sqlite` that has `loadExtension` (for sqlite-vec). */
export const MIN_NODE_VERSION = '22.13.0';

let loaded: typeof NodeSqlite | undefined;

/**
 * `node:sqlite`, or an {@link UnsupportedRuntimeError} (code `unsupported_runtime`) on a Node.js older than
 * 22.13 or a runtime without the module. The memory and Postgres stores have no such requirement.
 */
export function loadNodeSqlite(): typeof NodeSqlite {
  if (loaded) return loaded;
  const version = process.versions.node;
  const found = `Node.js ${version ?? 'unknown'}`;
  const required = `Node.js >= ${MIN_NODE_VERSION.replace(/\.0$/, '')}`;
  const advice =
    'Upgrade Node.js, or use a store that works on Node.js 20: @mem01/store-memory or @mem01/store-postgres ' +
    '(with mem01session: pass { store } or set DATABASE_URL).';
  if (version === undefined || compareVersions(version, MIN_NODE_VERSION) < 0) {
    throw new UnsupportedRuntimeError(
      `mem01's SQLite store (@mem01/store-sqlite) needs ${required} for node:sqlite; this process runs ${found}. ${advice}`,
      { required, found },
    );
  }
  let mod: typeof NodeSqlite | undefined;
  let cause: unknown;
  try {
    mod = process.getBuiltinModule('node:sqlite') as typeof NodeSqlite | undefined;
  } catch (err) {
    cause = err;
  }
  if (!mod) {
    throw new UnsupportedRuntimeError(
      `mem01's SQLite store (@mem01/store-sqlite) needs node:sqlite, which this runtime (${found}) does not provide. ${advice}`,
      { required, found, cause },
    );
  }
  loaded = mod;
  return mod;
}

/** Compares dotted numeric versions (`22.13.0` vs `20.20.2`); a missing part counts as 0. */
function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const pb = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
