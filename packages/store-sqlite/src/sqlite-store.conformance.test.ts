import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ProcessIdentity } from '@mem01/engine/store-kit';
import { runStoreConformance } from '@mem01/store-conformance';
import { quiet, type TempDir, tempDir } from '@mem01/test-kit';
import { describe } from 'vitest';
import { openSqliteStore, type SqliteStoreOptions } from './index.js';

/** A harness on a fresh temporary file per test; `openSecond` is another connection on the same file. */
function harness(vector: SqliteStoreOptions['vector'], extra: Partial<SqliteStoreOptions> = {}) {
  let dir: TempDir | null = null;
  let path = '';
  return {
    async open({ dimensions }: { dimensions: number }) {
      dir ??= tempDir('mem01-sqlite-conf-');
      path = join(dir.path, `memory-${Math.random().toString(36).slice(2)}.db`);
      return openSqliteStore({ path, dimensions, vector, logger: quiet, ...extra });
    },
    async openSecond() {
      return openSqliteStore({ path, vector, logger: quiet, ...extra });
    },
    /** Another connection on the same file whose claims are recorded for `leaseOwner`. */
    async openAs(leaseOwner: ProcessIdentity) {
      return openSqliteStore({ path, vector, logger: quiet, ...extra, leaseOwner });
    },
    /** Items with no owner, as a file of schema version 3 left them (migration 4 gives them a NULL owner). */
    async writeUnownedSession(sessionId: string, items: readonly unknown[]) {
      const raw = new DatabaseSync(path);
      try {
        raw.exec('PRAGMA busy_timeout = 5000');
        raw.exec('BEGIN IMMEDIATE');
        raw.prepare('INSERT INTO transcript_sessions (session_id) VALUES (?)').run(sessionId);
        const insert = raw.prepare(
          'INSERT INTO transcript_items (session_id, position, item) VALUES (?, ?, ?)',
        );
        items.forEach((item, position) => {
          insert.run(sessionId, position, JSON.stringify(item));
        });
        raw.exec('COMMIT');
      } finally {
        raw.close();
      }
    },
    async cleanup() {
      dir?.remove();
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
