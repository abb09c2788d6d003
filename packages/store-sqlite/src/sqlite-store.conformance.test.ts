import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@mem01/engine';
import { runStoreConformance } from '@mem01/store-conformance';
import { describe } from 'vitest';
import { openSqliteStore, type SqliteStoreOptions } from './index.js';

const quiet: Logger = { info: () => {}, warn: () => {} };

/** A harness on a fresh temporary file per test; `openSecond` is another connection on the same file. */
function harness(vector: SqliteStoreOptions['vector'], extra: Partial<SqliteStoreOptions> = {}) {
  let dir: string | null = null;
  let path = '';
  return {
    async open({ dimensions }: { dimensions: number }) {
      dir ??= mkdtempSync(join(tmpdir(), 'mem01-sqlite-conf-'));
      path = join(dir, `memory-${Math.random().toString(36).slice(2)}.db`);
      return openSqliteStore({ path, dimensions, vector, logger: quiet, ...extra });
    },
    async openSecond() {
      return openSqliteStore({ path, vector, logger: quiet, ...extra });
    },
    async cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = null;
    },
  };
}

// Every scope in the sqlite-vec index, so each vector test runs through vec0.
describe('with sqlite-vec', () =>
  runStoreConformance('sqlite', harness('sqlite-vec', { vectorIndexMinBeliefs: 1 })));
// The default: scopes this small are searched exactly even with sqlite-vec loaded.
describe('with sqlite-vec, small scopes exact (default)', () =>
  runStoreConformance('sqlite', harness('sqlite-vec')));
describe('with exact cosine', () => runStoreConformance('sqlite', harness('exact')));
