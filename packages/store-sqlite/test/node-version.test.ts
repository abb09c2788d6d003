/**
 * `node:sqlite` is loaded on first use, so the package imports on any Node.js and a Node.js without it gets one
 * clear error instead of `ERR_UNKNOWN_BUILTIN_MODULE` at link time. The old Node runs the built dist.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOldNode } from '@mem01/test-kit';
import { describe, expect, it } from 'vitest';
import { loadNodeSqlite, MIN_NODE_VERSION } from '../src/index.js';
import { tempDir } from './helpers.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('node:sqlite loading', () => {
  it('gives node:sqlite on this Node.js (>= 22.13)', () => {
    expect(MIN_NODE_VERSION).toBe('22.13.0');
    const sqlite = loadNodeSqlite();
    const db = new sqlite.DatabaseSync(':memory:');
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
    db.close();
  });

  it('on Node.js 20: imports, then opening fails with UnsupportedRuntimeError naming what works', (ctx) => {
    const old = findOldNode();
    if ('missing' in old) return ctx.skip(old.missing);
    expect(existsSync(join(pkgDir, 'dist', 'index.js')), 'build @mem01/store-sqlite first').toBe(true);
    const dir = join(tempDir(), 'not-created');
    const script = `
      import { Mem01Error } from '@mem01/engine';
      import { openSqliteStore, loadNodeSqlite } from '@mem01/store-sqlite';
      const out = { version: process.versions.node };
      for (const [name, fn] of [['open', () => openSqliteStore({ path: ${JSON.stringify(join(dir, 'memory.db'))} })], ['load', loadNodeSqlite]]) {
        try { fn(); out[name] = 'no error'; }
        catch (e) { out[name] = { name: e.name, code: e.code, message: e.message, required: e.required, found: e.found, mem01: e instanceof Mem01Error }; }
      }
      console.log(JSON.stringify(out));`;
    // Run from this package's folder: `@mem01/store-sqlite` resolves to itself (dist), as it does for a user.
    const stdout = execFileSync(old.path, ['--input-type=module', '-e', script], {
      cwd: pkgDir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out.version).toBe(old.version);
    const expected = {
      name: 'UnsupportedRuntimeError',
      code: 'unsupported_runtime',
      mem01: true,
      required: 'Node.js >= 22.13',
      found: `Node.js ${old.version}`,
    };
    expect(out.open).toMatchObject(expected);
    expect(out.load).toMatchObject(expected);
    const message = (out.open as { message: string }).message;
    expect(message).toContain("mem01's SQLite store (@mem01/store-sqlite) needs Node.js >= 22.13");
    expect(message).toContain(`Node.js ${old.version}`);
    expect(message).toContain('@mem01/store-memory or @mem01/store-postgres');
    expect(message).not.toContain('ERR_UNKNOWN_BUILTIN_MODULE');
    // Refused before anything was touched.
    expect(existsSync(dir)).toBe(false);
  });
});
