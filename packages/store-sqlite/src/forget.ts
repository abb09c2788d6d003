/**
 * Forgetting in the SQLite store: the belief becomes a content-free tombstone, and its text leaves every other place
 * it may be in the file: the FTS index (trigger, with FTS5 secure-delete), the embedding and vec0 rows, the outbox
 * turns and the transcript. `secure_delete=ON` zeroes the freed bytes; a checkpoint then clears the WAL.
 */

import { NotFoundError, StoreError, VersionConflictError } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { tryCheckpoint } from './admin.js';
import { beliefRow } from './beliefs.js';
import type { Connection, Method } from './connection.js';
import { recordOperation } from './governance.js';
import { eraseTurnText } from './outbox.js';
import { redactTranscripts } from './transcript.js';
import { deleteEmbedding } from './vector-search.js';

export const forget: Method<'forget'> = (c, s, id, { at, expectedVersion, operation }) => {
  let scrubbed = false;
  const tombstone = c.tx('forget', () => {
    const row = beliefRow(c, s, id);
    if (!row) throw new NotFoundError(`belief ${id}`);
    if (row.status === 'forgotten') {
      recordOperation(c, s, operation);
      return kit.beliefRow.read(row);
    }
    const version = Number(row.version);
    if (expectedVersion !== null && expectedVersion !== version) {
      throw new VersionConflictError(id, expectedVersion, version);
    }
    recordOperation(c, s, operation);
    scrub(c, row, at);
    scrubbed = true;
    return kit.beliefRow.read(beliefRow(c, s, id)!);
  });
  // The WAL still holds the old pages until a checkpoint; forgetting is rare, so checkpoint now. A read transaction
  // on another connection that began before the forget keeps those frames until it ends: then the checkpoint is
  // retried in the background until it succeeds (see `scrubPending`).
  if (scrubbed) scrubWal(c);
  return tombstone;
};

/** First retry of a checkpoint a reader blocked, and the longest wait between retries. */
const SCRUB_RETRY_MS = 50;
const SCRUB_RETRY_MAX_MS = 1000;

interface Scrub {
  timer: ReturnType<typeof setTimeout> | null;
  delay: number;
  waiters: Array<() => void>;
}

/** Connections whose forgotten text may still be in the WAL. */
const pending = new WeakMap<Connection, Scrub>();

/** Checkpoints now, or keeps retrying in the background until no reader holds the old frames. */
export function scrubWal(c: Connection): void {
  if (tryScrub(c)) return;
  let scrub = pending.get(c);
  if (!scrub) {
    scrub = { timer: null, delay: SCRUB_RETRY_MS, waiters: [] };
    pending.set(c, scrub);
    c.logger.warn(
      `mem01 sqlite: ${c.path}: another connection is reading; forgotten text leaves the WAL once it is done (retrying)`,
    );
  }
  schedule(c, scrub);
}

function schedule(c: Connection, scrub: Scrub): void {
  if (scrub.timer || c.closed) return;
  scrub.timer = setTimeout(() => {
    scrub.timer = null;
    if (c.closed) return;
    if (tryScrub(c)) return;
    scrub.delay = Math.min(SCRUB_RETRY_MAX_MS, scrub.delay * 2);
    schedule(c, scrub);
  }, scrub.delay);
  // A retry must not keep the process alive; `close()` makes a last attempt.
  scrub.timer.unref?.();
}

function tryScrub(c: Connection): boolean {
  let done = false;
  try {
    done = tryCheckpoint(c);
  } catch (err) {
    c.logger.warn(`mem01 sqlite: checkpoint after forget failed: ${kit.describeError(err)}`);
  }
  if (done) {
    const scrub = pending.get(c);
    if (scrub) {
      if (scrub.timer) clearTimeout(scrub.timer);
      pending.delete(c);
      for (const w of scrub.waiters) w();
    }
  }
  return done;
}

/** Whether forgotten text may still be in the WAL (a reader blocked the checkpoint after a forget). */
export function scrubPending(c: Connection): boolean {
  return pending.has(c);
}

/**
 * Resolves once no forgotten text is left in the WAL; rejects with `StoreError` when a reader still blocks the
 * checkpoint after `timeoutMs`.
 */
export function flushForgotten(c: Connection, timeoutMs: number): Promise<void> {
  const scrub = pending.get(c);
  if (!scrub || tryScrub(c)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      scrub.waiters = scrub.waiters.filter((w) => w !== done);
      reject(
        new StoreError(
          `${c.path}: forgotten text is still in the WAL after ${timeoutMs} ms: another connection keeps reading`,
        ),
      );
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    scrub.waiters.push(done);
    // Look again soon rather than at the back-off's pace.
    if (scrub.timer) clearTimeout(scrub.timer);
    scrub.timer = null;
    scrub.delay = SCRUB_RETRY_MS;
    schedule(c, scrub);
  });
}

/** At close: one last attempt, and no timer left behind. */
export function finishScrub(c: Connection): void {
  const scrub = pending.get(c);
  if (!scrub) return;
  if (scrub.timer) clearTimeout(scrub.timer);
  scrub.timer = null;
  if (!tryScrub(c)) {
    c.logger.warn(`mem01 sqlite: ${c.path}: closed while a reader kept forgotten text in the WAL`);
    pending.delete(c);
  }
}

/**
 * Makes the belief of `row` a tombstone, and so the episodes the engine's `planForget` names, and removes their text
 * from the embedding tables, the outbox turns of the plan or that contain the belief's statement or value, and the
 * transcript. Queued turns keep their place in the queue (with empty text), so the user's order is unchanged.
 */
function scrub(c: Connection, row: Row, at: string): void {
  const belief = kit.beliefRow.read(row);
  const episodes = new Map<string, Row>();
  const plan = kit.planForget(belief, (candidates) => {
    const rows = episodeRows(c, row, candidates);
    for (const r of rows) episodes.set(String(r.id), r);
    return rows.map(kit.beliefRow.read);
  });
  tombstone(c, Number(row.seq), at);
  for (const id of plan.episodeIds) tombstone(c, Number(episodes.get(id)!.seq), at);
  const userId = belief.scope.userId;
  eraseTurnText(c, userId, plan.turns, [belief.statement, belief.value]);
  redactTranscripts(c, userId, plan);
}

function tombstone(c: Connection, seq: number, at: string): void {
  c.run(
    `UPDATE beliefs SET status = 'forgotten', subject = '', attribute = '', value = '', statement = '',
       evidence = '[]', metadata = NULL, origin = NULL, invalidated_at = ?, updated_at = ?,
       version = version + CASE WHEN status = 'forgotten' THEN 0 ELSE 1 END
     WHERE seq = ?`,
    at,
    at,
    seq,
  );
  deleteEmbedding(c, seq);
}

/** The episodes of the belief's scope that `planForget` asks for (its prefilter, in SQL). */
function episodeRows(c: Connection, row: Row, candidates: kit.ForgetCandidates): Row[] {
  const where: string[] = [];
  const params: string[] = [];
  for (const session of candidates.sessions) {
    where.push('instr(evidence, ?) > 0');
    params.push(session);
  }
  if (candidates.loweredNeedles === null) where.push('1');
  else {
    for (const needle of candidates.loweredNeedles) {
      where.push('instr(lower(value), ?) > 0 OR instr(lower(statement), ?) > 0');
      params.push(needle, needle);
    }
  }
  if (where.length === 0) return [];
  return c.all(
    `SELECT * FROM beliefs
      WHERE user_id = ? AND namespace = ? AND kind IN (${candidates.kinds.map(() => '?').join(', ')})
        AND status <> 'forgotten' AND seq <> ?
        AND (${where.join(' OR ')})`,
    String(row.user_id),
    String(row.namespace),
    ...candidates.kinds,
    Number(row.seq),
    ...params,
  );
}
