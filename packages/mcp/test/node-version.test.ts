/**
 * On a Node.js older than the server needs, the bin says so in words meant for someone running a server (not the
 * store's advice to library users). Runs when this machine has such a Node (MEM01_OLD_NODE, or /usr/bin/node,
 * /usr/local/bin/node); skipped, saying why, when it has none.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assertBuilt, BIN, tempDir } from './helpers.js';

function oldNode(): string | undefined {
  const candidates = [process.env.MEM01_OLD_NODE, '/usr/bin/node', '/usr/local/bin/node'];
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue;
    const v = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    const [major = 0, minor = 0] = v.split('.').map(Number);
    if (major >= 20 && (major < 22 || (major === 22 && minor < 13))) return path;
  }
  return undefined;
}

const node = oldNode();

describe('mem01-mcp on a Node.js older than 22.13', () => {
  it.skipIf(!node)('exits 1 with one line that says which Node.js it needs', () => {
    assertBuilt();
    const home = tempDir();
    try {
      const r = spawnSync(node as string, [BIN, '--user', 'alice'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH, MEM01_HOME: home.path },
        timeout: 60_000,
      });
      expect(r.status).toBe(1);
      const lines = r.stderr.trim().split('\n');
      const error = lines.at(-1) ?? '';
      expect(error).toMatch(
        /^mem01-mcp: error \[unsupported_runtime\]: mem01-mcp needs Node\.js >= 22\.13; this process runs Node\.js 2\d\.\d+\.\d+\. Run it with Node\.js 22\.13 or newer\.$/,
      );
      expect(r.stderr).not.toMatch(/memSession|pass \{ store \}/);
    } finally {
      home.remove();
    }
  });
});
