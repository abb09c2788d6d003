/**
 * Forgetting in the PostgreSQL store, in one transaction: the belief becomes a content-free tombstone (its
 * embedding too), and so do the episodes the engine's `planForget` names; the turns of the plan lose their text in
 * the outbox, and in the transcript (`transcript.ts`).
 */

import { type Belief, NotFoundError, StoreError, VersionConflictError } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql, type Transaction } from 'kysely';
import { COLUMNS, insertAudit } from './beliefs.js';
import type { Method, PgConnection } from './connection.js';
import { recordOperation } from './governance.js';
import { redactTranscripts } from './transcript.js';

export const forget: Method<'forget'> = async (c, s, id, { at, expectedVersion: expected, operation }) => {
  return c.run('forget', () =>
    c.tx(async (trx) => {
      const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
        where id = ${id} and user_id = ${s.userId} and namespace = ${s.namespace} for update`.execute(trx);
      const row = r.rows[0];
      if (!row) throw new NotFoundError(`belief ${id}`);
      const current = kit.beliefRow.read(row);
      if (current.status === 'forgotten') {
        await recordOperation(c, trx, s, operation);
        return current;
      }
      if (expected !== null && expected !== current.version) {
        throw new VersionConflictError(id, expected, current.version);
      }
      await recordOperation(c, trx, s, operation);
      const plan = await kit.planForgetAsync(current, (candidates) => episodeRows(c, trx, s, id, candidates));
      const forgotten = [id, ...plan.episodeIds];
      const updated = await sql<Row>`update ${c.t('beliefs')}
        set subject = '', attribute = '', value = '', statement = '', evidence = '[]', embedding = null,
            metadata = null, origin = null,
            status = 'forgotten', invalidated_at = ${at}, updated_at = ${at}, version = version + 1
        where id = any(${forgotten}::text[]) and user_id = ${s.userId} and namespace = ${s.namespace}
        returning ${COLUMNS}`.execute(trx);
      // The turns of the plan may still sit in the outbox (queued or dead): erase their text too.
      const sessions = plan.turns.map((e) => e.sessionId);
      const positions = plan.turns.map((e) => e.position);
      if (sessions.length > 0) {
        await sql`update ${c.t('outbox')} set text = ''
          where user_id = ${s.userId}
            and (session_id, position) in (select * from unnest(${sessions}::text[], ${positions}::int[]))`.execute(
          trx,
        );
      }
      await redactTranscripts(c, trx, s.userId, plan);
      await insertAudit(
        c,
        trx,
        forgotten.map((beliefId) => ({ at, scope: s, beliefId, action: 'forget' as const, actor: 'user' })),
      );
      const out = updated.rows.find((u) => u.id === id);
      if (!out) throw new StoreError('postgres: forget updated no row');
      return kit.beliefRow.read(out);
    }),
  );
};

/**
 * The episodes of the scope that `planForget` asks for (its prefilter, in SQL), locked: a racing commit
 * that retires one of them waits for the forget.
 */
async function episodeRows(
  c: PgConnection,
  trx: Transaction<unknown>,
  s: { readonly userId: string; readonly namespace: string },
  id: string,
  candidates: kit.ForgetCandidates,
): Promise<Belief[]> {
  const where = candidates.sessions.map((session) => sql`strpos(evidence, ${session}) > 0`);
  if (candidates.loweredNeedles === null) where.push(sql`true`);
  else {
    for (const needle of candidates.loweredNeedles) {
      where.push(sql`strpos(lower(value), ${needle}) > 0 or strpos(lower(statement), ${needle}) > 0`);
    }
  }
  if (where.length === 0) return [];
  const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
    where user_id = ${s.userId} and namespace = ${s.namespace} and kind in (${sql.join([...candidates.kinds])}) and status <> 'forgotten'
      and id <> ${id} and (${sql.join(where, sql` or `)})
    order by id for update`.execute(trx);
  return r.rows.map(kit.beliefRow.read);
}
