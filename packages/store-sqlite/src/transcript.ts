/**
 * Transcripts of the SQLite store: `transcript_items` (one JSON row per item and position) and `transcript_sessions`
 * (each session's owner, the scope of its first owned append; none for a session written before schema 4). An
 * append, its operation id and the turns it enqueues are one transaction. The contract checks are the store kit's.
 */

import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Connection, Method } from './connection.js';
import { enqueueOne } from './outbox.js';

/** The SQL condition (parameters: session id, user id, namespace) that a scope may use the session. */
const VISIBLE = `NOT EXISTS (SELECT 1 FROM transcript_sessions s WHERE s.session_id = ? AND s.owner_user_id IS NOT NULL
  AND (s.owner_user_id <> ? OR s.owner_namespace <> ?))`;

export const appendItems: Method<'appendItems'> = (c, append) => {
  const id = append.sessionId;
  return c.tx('appendItems', () => {
    const recorded = recordedOwner(c, id);
    kit.assertSessionOwner(append.owner, recorded);
    if (append.operationId !== null) {
      const op = c.get(
        'SELECT fingerprint, positions FROM transcript_operations WHERE session_id = ? AND operation_id = ?',
        id,
        append.operationId,
      );
      if (op) {
        if (op.fingerprint !== append.fingerprint) throw kit.operationConflictError();
        return { positions: JSON.parse(String(op.positions)) as number[], duplicate: true };
      }
    }
    if (append.replaceSuffix !== null && append.replaceSuffix.length > 0) {
      const tail = c
        .all(
          'SELECT rid, item FROM transcript_items WHERE session_id = ? ORDER BY position DESC LIMIT ?',
          id,
          append.replaceSuffix.length,
        )
        .reverse();
      if (
        !kit.suffixMatches(
          tail.map((r) => String(r.item)),
          append.replaceSuffix,
        )
      )
        throw kit.suffixMismatchError();
      for (const r of tail) c.run('DELETE FROM transcript_items WHERE rid = ?', Number(r.rid));
    }
    // The first owned append records the owner (also of a session written before owners were recorded).
    if ((recorded?.userId ?? null) === null) {
      c.run(
        `INSERT INTO transcript_sessions (session_id, owner_user_id, owner_namespace) VALUES (?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET owner_user_id = excluded.owner_user_id,
             owner_namespace = excluded.owner_namespace`,
        id,
        append.owner.userId,
        append.owner.namespace,
      );
    }
    const last = c.get('SELECT max(position) AS p FROM transcript_items WHERE session_id = ?', id);
    const start = last && last.p !== null ? Number(last.p) + 1 : 0;
    const positions = append.items.map((_, i) => start + i);
    append.items.forEach((item, i) => {
      c.run(
        'INSERT INTO transcript_items (session_id, position, item) VALUES (?, ?, ?)',
        id,
        start + i,
        item,
      );
    });
    const acceptedAt = kit.isoNow();
    for (const turn of kit.appendTurns(append, positions)) enqueueOne(c, turn, acceptedAt);
    if (append.operationId !== null) {
      c.run(
        'INSERT INTO transcript_operations (session_id, operation_id, fingerprint, positions) VALUES (?, ?, ?, ?)',
        id,
        append.operationId,
        append.fingerprint,
        JSON.stringify(positions),
      );
    }
    return { positions, duplicate: false };
  });
};

export const getItems: Method<'getItems'> = (c, call) => {
  if (call.limit === 0) return [];
  const visible = [call.sessionId, call.sessionId, call.owner.userId, call.owner.namespace];
  return c.op('getItems', () => {
    // One statement, so the owner check and the read see the same snapshot.
    const rows =
      call.limit === null
        ? c.all(
            `SELECT item FROM transcript_items WHERE session_id = ? AND ${VISIBLE} ORDER BY position`,
            ...visible,
          )
        : c.all(
            `SELECT item FROM (SELECT item, position FROM transcript_items WHERE session_id = ? AND ${VISIBLE}
               ORDER BY position DESC LIMIT ?) ORDER BY position`,
            ...visible,
            call.limit,
          );
    return rows.map((r) => kit.decodeItem(String(r.item)));
  });
};

export const popItem: Method<'popItem'> = (c, call) => {
  return c.tx('popItem', () => {
    kit.assertSessionOwner(call.owner, recordedOwner(c, call.sessionId));
    const row = c.get(
      'SELECT rid, item FROM transcript_items WHERE session_id = ? ORDER BY position DESC LIMIT 1',
      call.sessionId,
    );
    if (!row) return undefined;
    c.run('DELETE FROM transcript_items WHERE rid = ?', Number(row.rid));
    return kit.decodeItem(String(row.item));
  });
};

export const clearSession: Method<'clearSession'> = (c, call) => {
  c.tx('clearSession', () => {
    kit.assertSessionOwner(call.owner, recordedOwner(c, call.sessionId));
    c.run('DELETE FROM transcript_items WHERE session_id = ?', call.sessionId);
    c.run('DELETE FROM transcript_operations WHERE session_id = ?', call.sessionId);
  });
};

/** Deletes (inside the erase transaction) the user's sessions; returns how many items they held. */
export function eraseSessions(c: Connection, userId: string): number {
  let items = 0;
  for (const r of c.all('SELECT session_id FROM transcript_sessions WHERE owner_user_id = ?', userId)) {
    const id = String(r.session_id);
    items += c.run('DELETE FROM transcript_items WHERE session_id = ?', id);
    c.run('DELETE FROM transcript_operations WHERE session_id = ?', id);
    c.run('DELETE FROM transcript_sessions WHERE session_id = ?', id);
  }
  return items;
}

/**
 * The engine's forget policy for transcripts ({@link kit.redactTranscriptItem}), inside the forget transaction: the
 * plan's turns (evidence turns and the turns of forgotten episodes) lose their text, the user's other items each
 * occurrence of the plan's needles. Sessions of other users are never touched.
 */
export function redactTranscripts(c: Connection, userId: string, plan: kit.ForgetPlan): void {
  const { needles } = plan;
  const update = (rid: number, item: string, whole: boolean) => {
    const next = kit.redactTranscriptItem(kit.decodeItem(item), { whole, needles });
    if (next !== null) c.run('UPDATE transcript_items SET item = ? WHERE rid = ?', JSON.stringify(next), rid);
  };
  const done = new Set<number>();
  for (const turn of plan.turns) {
    const row = c.get(
      `SELECT i.rid AS rid, i.item AS item FROM transcript_items i
         LEFT JOIN transcript_sessions s ON s.session_id = i.session_id
        WHERE i.session_id = ? AND i.position = ? AND (s.owner_user_id = ? OR s.owner_user_id IS NULL)`,
      turn.sessionId,
      turn.position,
      userId,
    );
    if (!row || done.has(Number(row.rid))) continue;
    done.add(Number(row.rid));
    update(Number(row.rid), String(row.item), true);
  }
  if (needles.length === 0) return;
  // A cheap SQL prefilter (ASCII case folding), then the exact whole-word match in JS.
  const like = needles.map(() => 'instr(lower(i.item), lower(?)) > 0').join(' OR ');
  for (const row of c.all(
    `SELECT i.rid AS rid, i.item AS item FROM transcript_items i
       JOIN transcript_sessions s ON s.session_id = i.session_id
      WHERE s.owner_user_id = ? AND (${like})`,
    userId,
    ...needles.map((n) => JSON.stringify(n).slice(1, -1)),
  )) {
    if (done.has(Number(row.rid))) continue;
    update(Number(row.rid), String(row.item), false);
  }
}

/** The recorded owner of a session; undefined when it has no row (an empty or pre-schema-4 session). */
function recordedOwner(
  c: Connection,
  sessionId: string,
): { userId: string | null; namespace: string | null } | undefined {
  const row: Row | undefined = c.get(
    'SELECT owner_user_id, owner_namespace FROM transcript_sessions WHERE session_id = ?',
    sessionId,
  );
  if (!row) return undefined;
  return {
    userId: row.owner_user_id === null ? null : String(row.owner_user_id),
    namespace: row.owner_namespace === null ? null : String(row.owner_namespace),
  };
}
