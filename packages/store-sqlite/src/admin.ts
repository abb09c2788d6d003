/** Admin of the SQLite store: erasing a user, the scopes with their counts, the audit log, info and checkpoints. */

import { type ClearAllReceipt, type EraseReceipt, StoreError } from '@mem01/engine';
import * as kit from '@mem01/engine/store-kit';
import type { Connection, Method } from './connection.js';
import { scrubWal } from './forget.js';
import { eraseSessions } from './transcript.js';
import { dropScopeVectors, dropUserVectors } from './vector-search.js';

/** Deletes everything of a user, in every namespace, in one transaction. */
export const eraseUser: Method<'eraseUser'> = (c, userId) => {
  const receipt = c.tx('eraseUser', () => eraseIn(c, userId));
  // As after a forget: the erased text leaves the WAL at a checkpoint (retried while a reader holds it).
  if (receipt.beliefs + receipt.transcriptItems + receipt.outboxEntries > 0) scrubWal(c);
  return receipt;
};

/** Everything of one user, deleted inside the caller's transaction. */
function eraseIn(c: Connection, userId: string): EraseReceipt {
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
  const operations = c.run('DELETE FROM operations WHERE user_id = ?', userId);
  const grants = c.run('DELETE FROM capture_grants WHERE user_id = ?', userId);
  c.run('DELETE FROM budget_usage WHERE user_id = ?', userId);
  return { beliefs, outboxEntries, transcriptItems, auditEvents, operations, grants };
}

/**
 * Deletes one scope in one transaction: its beliefs (with embeddings and index entries), audit, outbox entries,
 * operation keys and grants. Transcripts stay, and so do the user's budget counters (they span the user's namespaces).
 */
export const eraseScope: Method<'eraseScope'> = (c, s) => {
  const receipt = c.tx('eraseScope', (): EraseReceipt => {
    const scopeId = c.scopeId(s);
    let beliefs = 0;
    if (scopeId !== null) {
      dropScopeVectors(c, scopeId);
      c.run('DELETE FROM belief_embeddings WHERE scope_id = ?', scopeId);
      beliefs = c.run('DELETE FROM beliefs WHERE user_id = ? AND namespace = ?', s.userId, s.namespace);
      c.run('DELETE FROM vec_scopes WHERE scope_id = ?', scopeId);
      c.run('DELETE FROM scopes WHERE id = ?', scopeId);
    }
    const where = 'WHERE user_id = ? AND namespace = ?';
    const auditEvents = c.run(`DELETE FROM audit ${where}`, s.userId, s.namespace);
    const outboxEntries = c.run(`DELETE FROM outbox ${where}`, s.userId, s.namespace);
    const operations = c.run(`DELETE FROM operations ${where}`, s.userId, s.namespace);
    const grants = c.run(`DELETE FROM capture_grants ${where}`, s.userId, s.namespace);
    return { ...kit.NOTHING_ERASED, beliefs, outboxEntries, auditEvents, operations, grants };
  });
  // As after a forget: the erased text leaves the WAL at a checkpoint (retried while a reader holds it).
  if (receipt.beliefs + receipt.outboxEntries > 0) scrubWal(c);
  return receipt;
};

/** Deletes everything of every user in one transaction (user by user, so the vector index follows). */
export const clearAll: Method<'clearAll'> = (c) => {
  const receipt = c.tx('clearAll', (): ClearAllReceipt => {
    const users = c
      .all(
        `SELECT user_id AS u FROM beliefs UNION SELECT user_id FROM outbox UNION SELECT user_id FROM audit
         UNION SELECT owner_user_id FROM transcript_sessions WHERE owner_user_id IS NOT NULL
         UNION SELECT user_id FROM operations UNION SELECT user_id FROM capture_grants
         UNION SELECT user_id FROM budget_usage`,
      )
      .map((r) => String(r.u));
    const receipt = kit.eraseEach(users, (userId) => eraseIn(c, userId));
    // Sessions written before owners were recorded belong to no user: they go too.
    const ownerless = c.run('DELETE FROM transcript_items');
    c.run('DELETE FROM transcript_operations');
    c.run('DELETE FROM transcript_sessions');
    return { ...receipt, transcriptItems: receipt.transcriptItems + ownerless };
  });
  scrubWal(c);
  return receipt;
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

export const auditLog: Method<'auditLog'> = (c, s, { beliefId, limit }) => {
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
      .map(kit.auditRow.read),
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
    throw new StoreError(
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
