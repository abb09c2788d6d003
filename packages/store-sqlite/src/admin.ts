/** Admin of the SQLite store: erasing a user, the scopes with their counts, the audit log, info and checkpoints. */

import type { AuditEvent } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Connection, Method } from './connection.js';
import { eraseSessions } from './transcript.js';
import { dropUserVectors } from './vector-search.js';

/** Deletes everything of a user, in every namespace, in one transaction. */
export const eraseUser: Method<'eraseUser'> = (c, userId) => {
  kit.assertId(userId, 'userId');
  return c.tx('eraseUser', () => {
    dropUserVectors(c, userId);
    c.run(
      'DELETE FROM belief_embeddings WHERE belief_seq IN (SELECT seq FROM beliefs WHERE user_id = ?)',
      userId,
    );
    const beliefs = c.run('DELETE FROM beliefs WHERE user_id = ?', userId);
    c.run('DELETE FROM vec_scopes WHERE scope_id IN (SELECT id FROM scopes WHERE user_id = ?)', userId);
    c.run('DELETE FROM scopes WHERE user_id = ?', userId);
    const auditEvents = c.run('DELETE FROM audit WHERE user_id = ?', userId);
    const outboxEntries = c.run('DELETE FROM outbox WHERE user_id = ?', userId);
    const transcriptItems = eraseSessions(c, userId);
    return { beliefs, outboxEntries, transcriptItems, auditEvents };
  });
};

export const listScopes: Method<'listScopes'> = (c) => {
  return c.op('listScopes', () =>
    kit.scopeSummaries(
      c
        .all(
          'SELECT user_id, namespace, status, count(*) AS n FROM beliefs GROUP BY user_id, namespace, status',
        )
        .map((r) => ({
          userId: String(r.user_id),
          namespace: String(r.namespace),
          status: String(r.status),
          n: Number(r.n),
        })),
    ),
  );
};

export const auditLog: Method<'auditLog'> = (c, scope, options) => {
  const s = kit.normalizeScope(scope);
  const { beliefId, limit } = kit.validateAuditOptions(options);
  return c.op('auditLog', () =>
    c
      .all(
        `SELECT * FROM audit WHERE user_id = ? AND namespace = ? AND (? IS NULL OR belief_id = ?) ORDER BY seq LIMIT ?`,
        s.userId,
        s.namespace,
        beliefId,
        beliefId,
        limit,
      )
      .map((r) => ({
        at: String(r.at),
        scope: { userId: String(r.user_id), namespace: String(r.namespace) },
        beliefId: r.belief_id === null ? null : String(r.belief_id),
        action: String(r.action) as AuditEvent['action'],
        actor: String(r.actor),
      })),
  );
};

export function schemaVersion(c: Connection): number {
  return c.op('info', () => {
    const row = c.get("SELECT value FROM meta WHERE key = 'schema_version'");
    return row ? Number(row.value) : 0;
  });
}

/** Writes the WAL back into the database file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`). */
export function checkpoint(c: Connection): void {
  if (!tryCheckpoint(c)) {
    throw new kit.StoreError(
      `${c.path}: checkpoint could not complete because another connection is reading the file`,
    );
  }
}

/**
 * Tries a TRUNCATE checkpoint without waiting: a read transaction on another connection keeps the WAL frames it may
 * still need, and TRUNCATE would otherwise block this thread for the whole busy timeout. True when the WAL was
 * written back and emptied.
 */
export function tryCheckpoint(c: Connection): boolean {
  return c.op('checkpoint', () => {
    const timeout = (c.db.prepare('PRAGMA busy_timeout').get() as { timeout?: unknown } | undefined)?.timeout;
    c.db.exec('PRAGMA busy_timeout = 0');
    try {
      const row = c.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy?: unknown } | undefined;
      return !row || Number(row.busy) === 0;
    } catch (err) {
      if (/SQLITE_BUSY|database is locked/i.test(String((err as Error)?.message))) return false;
      throw err;
    } finally {
      c.db.exec(`PRAGMA busy_timeout = ${Number(timeout ?? 5000)}`);
    }
  });
}
