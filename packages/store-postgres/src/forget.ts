/**
 * Forgetting in the PostgreSQL store, in one transaction: the belief becomes a content-free tombstone (its
 * embedding too), the outbox turns it came from lose their text, and so does the transcript (`transcript.ts`).
 */

import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql } from 'kysely';
import { COLUMNS, insertAudit } from './beliefs.js';
import type { Method } from './connection.js';
import { recordOperation } from './governance.js';
import { redactTranscripts } from './transcript.js';

export const forget: Method<'forget'> = async (c, scope, id, options) => {
  const s = kit.normalizeScope(scope);
  kit.assertId(id, 'id');
  const { at, expectedVersion: expected, operation } = kit.validateForgetOptions(options);
  return c.run('forget', () =>
    c.tx(async (trx) => {
      const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
        where id = ${id} and user_id = ${s.userId} and namespace = ${s.namespace} for update`.execute(trx);
      const row = r.rows[0];
      if (!row) throw new kit.NotFoundError(`belief ${id}`);
      const current = kit.beliefFromRow(row);
      if (current.status === 'forgotten') {
        await recordOperation(c, trx, s, operation);
        return current;
      }
      if (expected !== null && expected !== current.version) {
        throw new kit.VersionConflictError(id, expected, current.version);
      }
      await recordOperation(c, trx, s, operation);
      const updated = await sql<Row>`update ${c.t('beliefs')}
        set subject = '', attribute = '', value = '', statement = '', evidence = '[]', embedding = null,
            metadata = null, origin = null,
            status = 'forgotten', invalidated_at = ${at}, updated_at = ${at}, version = version + 1
        where id = ${id} returning ${COLUMNS}`.execute(trx);
      // The turns the belief came from may still sit in the outbox (queued or dead): erase their text too.
      const sessions = current.evidence.map((e) => e.sessionId);
      const positions = current.evidence.map((e) => e.position);
      if (sessions.length > 0) {
        await sql`update ${c.t('outbox')} set text = ''
          where user_id = ${s.userId}
            and (session_id, position) in (select * from unnest(${sessions}::text[], ${positions}::int[]))`.execute(
          trx,
        );
      }
      await redactTranscripts(c, trx, s.userId, current);
      await insertAudit(c, trx, [{ at, scope: s, beliefId: id, action: 'forget', actor: 'user' }]);
      const out = updated.rows[0];
      if (!out) throw new kit.StoreError('postgres: forget updated no row');
      return kit.beliefFromRow(out);
    }),
  );
};
