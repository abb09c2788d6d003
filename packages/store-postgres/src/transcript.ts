/**
 * Transcripts of the PostgreSQL store: `transcript_sessions` (each session's owner, the scope of its first owned
 * append; a NULL owner for a session appended without one before owners were required), `transcript_items` (one
 * JSON row per position) and `transcript_operations`. An append, its operation id and the turns it enqueues are one
 * transaction. The contract checks are the store kit's.
 */

import * as kit from '@mem01/engine/store-kit';
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Method, PgConnection } from './connection.js';
import { INSERT_CHUNK } from './options.js';
import { insertOutbox } from './outbox.js';

type Owner = { readonly userId: string; readonly namespace: string };

export const appendItems: Method<'appendItems'> = async (c, append) => {
  const { owner: scope, sessionId: id, operationId } = append;
  const run = () =>
    c.run(
      'appendItems',
      () =>
        c.tx(async (trx) => {
          await sql`insert into ${c.t('transcript_sessions')} (session_id, user_id, namespace)
            values (${id}, ${scope.userId}, ${scope.namespace}) on conflict (session_id) do nothing`.execute(
            trx,
          );
          const session = await sql<{ user_id: string | null; namespace: string | null }>`
            select user_id, namespace from ${c.t('transcript_sessions')} where session_id = ${id} for update`.execute(
            trx,
          );
          const recorded = session.rows[0];
          kit.assertSessionOwner(
            scope,
            recorded && { userId: recorded.user_id, namespace: recorded.namespace },
          );
          if (recorded?.user_id === null) {
            // A session written before owners were recorded: this first owned append records its owner.
            await sql`update ${c.t('transcript_sessions')} set user_id = ${scope.userId}, namespace = ${scope.namespace}
              where session_id = ${id}`.execute(trx);
          }
          if (operationId !== null) {
            const op = await sql<{ fingerprint: string | null; positions: string }>`
              select fingerprint, positions from ${c.t('transcript_operations')}
              where session_id = ${id} and operation_id = ${operationId}`.execute(trx);
            const done = op.rows[0];
            if (done) {
              if (done.fingerprint !== append.fingerprint) throw kit.operationConflictError();
              return { positions: JSON.parse(done.positions) as number[], duplicate: true };
            }
          }
          const suffix = append.replaceSuffix ?? [];
          if (suffix.length > 0) {
            const last = await sql<{ position: number; item: string }>`
              select position, item from ${c.t('transcript_items')} where session_id = ${id}
              order by position desc limit ${suffix.length}`.execute(trx);
            const stored = last.rows.reverse();
            if (
              !kit.suffixMatches(
                stored.map((row) => row.item),
                suffix,
              )
            )
              throw kit.suffixMismatchError();
            await sql`delete from ${c.t('transcript_items')}
              where session_id = ${id} and position >= ${stored[0]?.position ?? 0}`.execute(trx);
          }
          const max = await sql<{ next: number }>`
            select coalesce(max(position) + 1, 0) as next from ${c.t('transcript_items')} where session_id = ${id}`.execute(
            trx,
          );
          const start = Number(max.rows[0]?.next ?? 0);
          const positions = append.items.map((_, i) => start + i);
          for (let i = 0; i < append.items.length; i += INSERT_CHUNK) {
            const rows = append.items
              .slice(i, i + INSERT_CHUNK)
              .map((json, j) => sql`(${id}, ${start + i + j}, ${json})`);
            await sql`insert into ${c.t('transcript_items')} (session_id, position, item) values ${sql.join(rows)}`.execute(
              trx,
            );
          }
          if (append.enqueue.length > 0) await insertOutbox(c, trx, kit.appendTurns(append, positions));
          if (operationId !== null) {
            await sql`insert into ${c.t('transcript_operations')} (session_id, operation_id, fingerprint, positions)
              values (${id}, ${operationId}, ${append.fingerprint}, ${JSON.stringify(positions)})`.execute(
              trx,
            );
          }
          return { positions, duplicate: false };
        }),
      // With an operation id a retry after a lost connection is recognised as a duplicate.
      { idempotent: operationId !== null },
    );
  // Turns enqueued with the append keep call order per user, like `enqueue`.
  return append.enqueue.length > 0 ? c.inUserOrder([scope.userId], run) : run();
};

export const getItems: Method<'getItems'> = async (c, call) => {
  if (call.limit === 0) return [];
  const visible = visibleTo(c, call.owner, call.sessionId);
  return c.run(
    'getItems',
    async () => {
      const r =
        call.limit === null
          ? await sql<{ item: string }>`select item from ${c.t('transcript_items')}
              where session_id = ${call.sessionId} and ${visible} order by position`.execute(c.db)
          : await sql<{
              item: string;
            }>`select item from (select position, item from ${c.t('transcript_items')}
              where session_id = ${call.sessionId} and ${visible} order by position desc limit ${call.limit}) t
              order by position`.execute(c.db);
      return r.rows.map((row) => kit.decodeItem(row.item));
    },
    { idempotent: true },
  );
};

export const popItem: Method<'popItem'> = async (c, call) => {
  return c.run('popItem', () =>
    c.tx(async (trx) => {
      await refuseForeign(c, trx, call.owner, call.sessionId);
      const r = await sql<{ item: string }>`delete from ${c.t('transcript_items')}
        where session_id = ${call.sessionId} and ${visibleTo(c, call.owner, call.sessionId)}
          and position = (select max(position) from ${c.t('transcript_items')} where session_id = ${call.sessionId})
        returning item`.execute(trx);
      const row = r.rows[0];
      return row ? kit.decodeItem(row.item) : undefined;
    }),
  );
};

export const clearSession: Method<'clearSession'> = async (c, call) => {
  const visible = visibleTo(c, call.owner, call.sessionId);
  await c.run(
    'clearSession',
    () =>
      c.tx(async (trx) => {
        await refuseForeign(c, trx, call.owner, call.sessionId);
        for (const table of ['transcript_items', 'transcript_operations']) {
          await sql`delete from ${c.t(table)} where session_id = ${call.sessionId} and ${visible}`.execute(
            trx,
          );
        }
      }),
    { idempotent: true },
  );
};

/** Deletes (inside the erase transaction) the user's sessions; returns how many items they held. */
export async function eraseSessions(
  c: PgConnection,
  trx: Transaction<unknown>,
  userId: string,
): Promise<number> {
  const owned = sql`(select session_id from ${c.t('transcript_sessions')} where user_id = ${userId})`;
  const items = await sql`delete from ${c.t('transcript_items')} where session_id in ${owned}`.execute(trx);
  await sql`delete from ${c.t('transcript_operations')} where session_id in ${owned}`.execute(trx);
  await sql`delete from ${c.t('transcript_sessions')} where user_id = ${userId}`.execute(trx);
  return Number(items.numAffectedRows ?? 0n);
}

/** The condition that `owner` may use the session: it owns it, or the session has no owner (yet). */
/** Throws the foreign-session error when another scope owns the session (its owner row locked until commit). */
async function refuseForeign(
  c: PgConnection,
  trx: Transaction<unknown>,
  owner: Owner,
  sessionId: string,
): Promise<void> {
  const r = await sql<{ user_id: string | null; namespace: string | null }>`
    select user_id, namespace from ${c.t('transcript_sessions')} where session_id = ${sessionId} for share`.execute(
    trx,
  );
  const recorded = r.rows[0];
  kit.assertSessionOwner(owner, recorded && { userId: recorded.user_id, namespace: recorded.namespace });
}

function visibleTo(c: PgConnection, owner: Owner, sessionId: string): RawBuilder<unknown> {
  return sql`not exists (select 1 from ${c.t('transcript_sessions')} ts where ts.session_id = ${sessionId}
    and ts.user_id is not null and (ts.user_id <> ${owner.userId} or coalesce(ts.namespace, '') <> ${owner.namespace}))`;
}

/** The engine's forget policy for transcripts ({@link kit.redactTranscriptItem}): the plan's turns (evidence turns and
 * the turns of forgotten episodes) lose their text, the user's other items each occurrence of the plan's needles.
 * Sessions of other users are never touched. Runs inside the forget transaction. */
export async function redactTranscripts(
  c: PgConnection,
  trx: Transaction<unknown>,
  userId: string,
  plan: kit.ForgetPlan,
): Promise<void> {
  const { needles } = plan;
  const sessions = plan.turns.map((e) => e.sessionId);
  const positions = plan.turns.map((e) => e.position);
  const notOthers = sql`not exists (select 1 from ${c.t('transcript_sessions')} ts
    where ts.session_id = i.session_id and ts.user_id is not null and ts.user_id <> ${userId})`;
  const whole =
    sessions.length === 0
      ? []
      : (
          await sql<{ session_id: string; position: number; item: string }>`
            select i.session_id, i.position, i.item from ${c.t('transcript_items')} i
            where (i.session_id, i.position) in (select * from unnest(${sessions}::text[], ${positions}::int[]))
              and ${notOthers}`.execute(trx)
        ).rows;
  const partial =
    needles.length === 0
      ? []
      : (
          await sql<{ session_id: string; position: number; item: string }>`
            select i.session_id, i.position, i.item from ${c.t('transcript_items')} i
            where i.session_id in (select session_id from ${c.t('transcript_sessions')} where user_id = ${userId})
              and (${sql.join(
                needles.map((n) => sql`strpos(lower(i.item), lower(${JSON.stringify(n).slice(1, -1)})) > 0`),
                sql` or `,
              )})`.execute(trx)
        ).rows;
  const done = new Set<string>();
  for (const [rows, isWhole] of [
    [whole, true],
    [partial, false],
  ] as const) {
    for (const row of rows) {
      const key = `${row.session_id}\u0000${row.position}`;
      if (done.has(key)) continue;
      done.add(key);
      const next = kit.redactTranscriptItem(JSON.parse(row.item) as unknown, { whole: isWhole, needles });
      if (next === null) continue;
      await sql`update ${c.t('transcript_items')} set item = ${JSON.stringify(next)}
        where session_id = ${row.session_id} and position = ${row.position}`.execute(trx);
    }
  }
}
