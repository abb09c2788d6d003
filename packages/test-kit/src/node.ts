/**
 * The Node.js binaries tests spawn: the one running the tests (Node >= 22.13, which has `node:sqlite`), and an older
 * one (20 <= version < 22.13) to show what the packages do without `node:sqlite`, if the machine has one.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const atLeast = (version: string, major: number, minor: number): boolean => {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
};

/** The Node.js running the tests, for child processes; throws when it is older than 22.13 (no `node:sqlite`). */
export function nodeBinary(): string {
  if (!atLeast(process.versions.node, 22, 13)) {
    throw new Error(
      `tests run on Node.js ${process.versions.node}; they need >= 22.13 (node:sqlite): run them through pnpm, which uses the repository's Node`,
    );
  }
  return process.execPath;
}

export type OldNode = { readonly path: string; readonly version: string } | { readonly missing: string };

/**
 * A Node.js >= 20 and < 22.13 on this machine: `MEM01_OLD_NODE` if set, else every `node` on PATH, then
 * /usr/bin/node and /usr/local/bin/node. Tests must not assume one exists: without it they skip and say why.
 */
export function findOldNode(): OldNode {
  const explicit = process.env.MEM01_OLD_NODE;
  const candidates = explicit
    ? [explicit]
    : [
        ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
        '/usr/bin/node',
        '/usr/local/bin/node',
      ];
  const seen = new Set<string>();
  const looked: string[] = [];
  for (const candidate of candidates) {
    let real: string;
    try {
      accessSync(candidate, constants.X_OK);
      real = realpathSync(candidate);
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    const r = spawnSync(real, ['-p', 'process.versions.node'], { encoding: 'utf8', timeout: 20_000 });
    const version = r.status === 0 ? r.stdout.trim() : '';
    if (!version) continue;
    looked.push(`${candidate} (${version})`);
    if (atLeast(version, 20, 0) && !atLeast(version, 22, 13)) return { path: real, version };
  }
  return {
    missing: `no Node.js >= 20 and < 22.13 on this machine (${explicit ? `MEM01_OLD_NODE=${explicit}` : `looked at: ${looked.join(', ') || 'no node found'}`}); set MEM01_OLD_NODE=/path/to/node20 to run this`,
  };
}
