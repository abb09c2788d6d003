/**
 * Forgetting in the SQLite store: the belief becomes a content-free tombstone, and its text leaves every other place
 * it may be in the file: the FTS index (trigger, with FTS5 secure-delete), the embedding and vec0 rows, the outbox
 * turns and the transcript. `secure_delete=ON` zeroes the freed bytes; a checkpoint then clears the WAL.
 */

import type { Evidence, Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { checkpoint } from './admin.js';
import { beliefRow } from './beliefs.js';
import type { Connection, Method } from './connection.js';
import { eraseTurnText } from './outbox.js';
import { redactTranscripts } from './transcript.js';
import { deleteEmbedding } from './vector-search.js';

export const forget: Method<'forget'> = (c, scope, id, options) => {
  const s = kit.normalizeScope(scope);
  kit.assertId(id, 'id');
  const { at, expectedVersion } = kit.validateForgetOptions(options);
  let scrubbed = false;
  const tombstone = c.tx('forget', () => {
    const row = beliefRow(c, s, id);
    if (!row) throw new kit.NotFoundError(`belief ${id}`);
    if (row.status === 'forgotten') return kit.beliefFromRow(row);
    const version = Number(row.version);
    if (expectedVersion !== null && expectedVersion !== version) {
      throw new kit.VersionConflictError(id, expectedVersion, version);
    }
    scrub(c, row, at);
    scrubbed = true;
    return kit.beliefFromRow(beliefRow(c, s, id)!);
  });
  // The WAL still holds the old pages until a checkpoint; forgetting is rare, so checkpoint now (best effort:
  // a reader on another connection can keep frames alive until its next checkpoint).
  if (scrubbed) {
    try {
      checkpoint(c);
    } catch (err) {
      c.logger.warn(`mem01 sqlite: checkpoint after forget deferred: ${kit.describeError(err)}`);
    }
  }
  return tombstone;
};

/**
 * Makes the belief of `row` a tombstone and removes its text from the embedding tables, the outbox turns it came
 * from or that contain its statement or value, and the transcript. Queued turns keep their place in the queue (with
 * empty text), so the user's order is unchanged.
 */
function scrub(c: Connection, row: Row, at: string): void {
  const belief = kit.beliefFromRow(row);
  const seq = Number(row.seq);
  const userId = belief.scope.userId;
  c.run(
    `UPDATE beliefs SET status = 'forgotten', subject = '', attribute = '', value = '', statement = '',
       evidence = '[]', invalidated_at = ?, updated_at = ?,
       version = version + CASE WHEN status = 'forgotten' THEN 0 ELSE 1 END
     WHERE seq = ?`,
    at,
    at,
    seq,
  );
  deleteEmbedding(c, seq);
  const evidence: readonly Evidence[] = belief.evidence.filter(
    (ev) => typeof ev?.sessionId === 'string' && typeof ev.position === 'number',
  );
  eraseTurnText(c, userId, evidence, [belief.statement, belief.value]);
  redactTranscripts(c, userId, belief, evidence);
}
