/**
 * Finds a Node.js older than 22.13 (no usable `node:sqlite`) on this machine, to run the package on it. Tests
 * must not assume one exists: without it they skip and say why.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export type OldNode = { readonly path: string; readonly version: string } | { readonly missing: string };

/** `MEM01_OLD_NODE` if set, else every `node` on PATH, then the usual system locations; the first with 20 <= version < 22.13. */
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
    let version: string;
    try {
      version = execFileSync(real, ['-p', 'process.versions.node'], {
        encoding: 'utf8',
        timeout: 20_000,
      }).trim();
    } catch {
      continue;
    }
    looked.push(`${candidate} (${version})`);
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major >= 20 && (major < 22 || (major === 22 && minor < 13))) return { path: real, version };
  }
  return {
    missing: `no Node.js >= 20 and < 22.13 on this machine (${explicit ? `MEM01_OLD_NODE=${explicit}` : `looked at: ${looked.join(', ') || 'no node found'}`}); set MEM01_OLD_NODE=/path/to/node20 to run this`,
  };
}
