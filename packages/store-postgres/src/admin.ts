/** Admin of the PostgreSQL store: erasing a user, the scopes with their counts, the audit log, ANALYZE. */

import type { ClearAllReceipt, EraseReceipt } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { type RawBuilder, sql } from 'kysely';
import type { Method, PgConnection } from './connection.js';
import { eraseSessions } from './transcript.js';

/** Deletes everything of a user, in every namespace, in one transaction. */
export const eraseUser: Method<'eraseUser'> = async (c, userId) => {
  return c.run(
    'eraseUser',
    () =>
      c.tx(async (trx) => {
        const count = async (q: RawBuilder<unknown>) => Number((await q.execute(trx)).numAffectedRows ?? 0n);
        const beliefs = await count(sql`delete from ${c.t('beliefs')} where user_id = ${userId}`);
        const auditEvents = await count(sql`delete from ${c.t('audit')} where user_id = ${userId}`);
        const outboxEntries = await count(sql`delete from ${c.t('outbox')} where user_id = ${userId}`);
        const transcriptItems = await eraseSessions(c, trx, userId);
        const operations = await count(sql`delete from ${c.t('operations')} where user_id = ${userId}`);
        const grants = await count(sql`delete from ${c.t('capture_grants')} where user_id = ${userId}`);
        await count(sql`delete from ${c.t('budget_usage')} where user_id = ${userId}`);
        return { beliefs, outboxEntries, transcriptItems, auditEvents, operations, grants };
      }),
    { idempotent: true },
  );
};

/**
 * Deletes one scope in one transaction: its beliefs (embeddings and index entries are their columns), audit, outbox
 * entries, operation keys and grants. Transcripts stay, and so do the user's budget counters (they span the user's
 * namespaces).
 */
export const eraseScope: Method<'eraseScope'> = async (c, s) => {
  const receipt = await c.run(
    'eraseScope',
    () =>
      c.tx(async (trx): Promise<EraseReceipt> => {
        const count = async (table: string) =>
          Number(
            (
              await sql`delete from ${c.t(table)} where user_id = ${s.userId} and namespace = ${s.namespace}`.execute(
                trx,
              )
            ).numAffectedRows ?? 0n,
          );
        return {
          ...kit.NOTHING_ERASED,
          beliefs: await count('beliefs'),
          auditEvents: await count('audit'),
          outboxEntries: await count('outbox'),
          operations: await count('operations'),
          grants: await count('capture_grants'),
        };
      }),
    // Running it again deletes what is there then: it converges.
    { idempotent: true },
  );
  // The scope's cached lexeme counts describe beliefs that are gone.
  const prefix = `${s.userId}\u0000${s.namespace}\u0000`;
  for (const key of c.frequencyCache.keys()) if (key.startsWith(prefix)) c.frequencyCache.delete(key);
  return receipt;
};

/** Deletes everything of every user in one transaction; the schema and its settings stay. */
export const clearAll: Method<'clearAll'> = async (c) => {
  return c.run(
    'clearAll',
    () =>
      c.tx(async (trx): Promise<ClearAllReceipt> => {
        const u = await sql<{ n: string }>`select count(*) as n from (
            select user_id from ${c.t('beliefs')} union select user_id from ${c.t('outbox')}
            union select user_id from ${c.t('audit')}
            union select user_id from ${c.t('transcript_sessions')} where user_id is not null
            union select user_id from ${c.t('operations')} union select user_id from ${c.t('capture_grants')}
            union select user_id from ${c.t('budget_usage')}) as x`.execute(trx);
        const count = async (table: string) =>
          Number((await sql`delete from ${c.t(table)}`.execute(trx)).numAffectedRows ?? 0n);
        const receipt = {
          users: Number(u.rows[0]?.n ?? 0),
          beliefs: await count('beliefs'),
          outboxEntries: await count('outbox'),
          transcriptItems: await count('transcript_items'),
          auditEvents: await count('audit'),
          operations: await count('operations'),
          grants: await count('capture_grants'),
        };
        await count('transcript_operations');
        await count('transcript_sessions');
        await count('budget_usage');
        return receipt;
      }),
    // Running it again deletes what is there then: it converges.
    { idempotent: true },
  );
};

export const listScopes: Method<'listScopes'> = async (c) => {
  return c.run(
    'listScopes',
    async () => {
      const r = await sql<{ user_id: string; namespace: string; status: string; n: string }>`
        select user_id, namespace, status, count(*) as n from ${c.t('beliefs')}
        group by user_id, namespace, status`.execute(c.db);
      return kit.scopeSummaries(
        r.rows.map((row) => ({
          userId: row.user_id,
          namespace: row.namespace,
          status: row.status,
          n: Number(row.n),
        })),
      );
    },
    { idempotent: true },
  );
};

export const auditLog: Method<'auditLog'> = async (c, s, { beliefId, limit }) => {
  return c.run(
    'auditLog',
    async () => {
      const r = await sql<Row>`
        select ${sql.raw(kit.auditRow.columns.join(', '))} from ${c.t('audit')}
        where user_id = ${s.userId} and namespace = ${s.namespace}
          ${beliefId === null ? sql`` : sql`and belief_id = ${beliefId}`}
        order by seq limit ${limit}`.execute(c.db);
      return r.rows.map(kit.auditRow.read);
    },
    { idempotent: true },
  );
};

/**
 * Runs ANALYZE on the beliefs table and re-reads the statistics the searches use (lexeme rarity, common words,
 * each user's share of the rows) on the next search.
 */
export async function analyze(c: PgConnection): Promise<void> {
  await c.run(
    'analyze',
    async () => {
      await sql`analyze ${c.t('beliefs')}`.execute(c.db);
    },
    { idempotent: true },
  );
  c.stats = null;
}
