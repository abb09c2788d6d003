/**
 * The durable outbox of the PostgreSQL store, shared by worker processes on many hosts. A claim locks the user's
 * oldest pending entry with `FOR UPDATE SKIP LOCKED` and refuses users whose previous claim is still leased, so one
 * user's turns are extracted in acceptance order across processes. Each claim records the process holding it; a
 * claim of a process on this host that has exited is expired at the next claim or backlog. A process on another
 * host cannot be probed: its claim runs until its (short, heartbeat-renewed) lease expires.
 */

import { LeaseLostError, type OutboxInput } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql, type Transaction } from 'kysely';
import type { Db, Method, PgConnection } from './connection.js';
import { INSERT_CHUNK } from './options.js';
import { pgText, pgTextOrNull } from './text.js';

/** The outbox columns under the names the store kit reads (`idem_key` is `idempotency_key`). */
const ENTRY = sql.raw('*, idem_key as idempotency_key');

export const enqueue: Method<'enqueue'> = async (c, valid) => {
  if (valid.length === 0) return { accepted: 0, duplicates: 0 };
  // Idempotent by key, so a retry after a lost connection converges instead of duplicating.
  const accepted = await c.inUserOrder(
    valid.map((e) => kit.normalizeScope(e.scope).userId),
    () => c.run('enqueue', () => c.tx((trx) => insertOutbox(c, trx, valid)), { idempotent: true }),
  );
  return { accepted, duplicates: valid.length - accepted };
};

/** Inserts checked turns; returns how many were new (the others' idempotency keys exist). */
export async function insertOutbox(
  c: PgConnection,
  db: Db,
  entries: readonly OutboxInput[],
): Promise<number> {
  let accepted = 0;
  const acceptedAt = kit.isoNow();
  for (let i = 0; i < entries.length; i += INSERT_CHUNK) {
    const rows = entries.slice(i, i + INSERT_CHUNK).map((e) => {
      const s = kit.normalizeScope(e.scope);
      return sql`(${kit.newId()}, ${s.userId}, ${s.namespace}, ${e.sessionId}, ${e.position}, ${e.role}, ${pgText(e.text)}, ${e.at}, ${pgTextOrNull(e.ref)}, ${kit.idempotencyKey(e.sessionId, e.position, e.text)}, ${acceptedAt}, ${e.grantId ?? null})`;
    });
    const r =
      await sql`insert into ${c.t('outbox')} (id, user_id, namespace, session_id, position, role, text, at, ref, idem_key, accepted_at, grant_id)
      values ${sql.join(rows)} on conflict (idem_key) do nothing returning id`.execute(db);
    accepted += r.rows.length;
  }
  return accepted;
}

export const claim: Method<'claim'> = async (c, o) => {
  const now = o.now.iso;
  const outbox = c.t('outbox');
  await expireExitedLeases(c, now, 'claim');
  return c.run(
    'claim',
    () =>
      c.tx(async (trx) => {
        // The user's oldest pending entry ("head") is locked; a user whose previous claim is still leased is
        // skipped, and SKIP LOCKED lets concurrent workers move on to other users instead of waiting.
        const head = await sql<{ user_id: string }>`
          select o.user_id from ${outbox} o
          where o.status in ('queued', 'claimed')
            ${o.userId === null ? sql`` : sql`and o.user_id = ${o.userId}`}
            and ((o.status = 'queued' and (o.retry_at is null or o.retry_at <= ${now}::timestamptz))
              or (o.status = 'claimed' and o.lease_until <= ${now}::timestamptz))
            and o.seq = (select min(h.seq) from ${outbox} h where h.user_id = o.user_id and h.status in ('queued', 'claimed'))
            and not exists (select 1 from ${outbox} l where l.user_id = o.user_id and l.status = 'claimed' and l.lease_until > ${now}::timestamptz)
          order by o.seq limit 1
          for update of o skip locked`.execute(trx);
        const userId = head.rows[0]?.user_id;
        if (userId === undefined) return null;
        const pending = await sql<Row>`
          select ${ENTRY} from ${outbox} where user_id = ${userId} and status in ('queued', 'claimed')
          order by seq limit ${o.maxEntries} for update`.execute(trx);
        const waiting = (r: Row) =>
          r.status === 'queued' && r.retry_at !== null && new Date(r.retry_at as Date).getTime() > o.now.ms;
        const taken = kit
          .claimBatch(
            pending.rows.map((r) => ({
              r,
              namespace: String(r.namespace),
              text: String(r.text),
              grantId: (r.grant_id as string | null | undefined) ?? null,
            })),
            o,
            ({ r }) => !waiting(r),
          )
          .map(({ r }) => r);
        const first = taken[0];
        if (!first) return null;
        const claimId = kit.newId();
        await sql`update ${outbox} set status = 'claimed', claim_id = ${claimId}, worker = ${o.worker},
            lease_until = ${o.leaseUntil.iso}::timestamptz, lease_owner = ${c.options.leaseOwnerKey}
          where id = any(${taken.map((r) => String(r.id))}::text[])`.execute(trx);
        const scope = { userId, namespace: String(first.namespace) };
        return kit.claimFromRows(claimId, o.worker, scope, taken, o.leaseUntil.iso);
      }),
    // Safe to re-run: if the lost attempt did commit, its entries stay claimed under an id nobody holds and are
    // taken over when that lease expires, so the worst case is one lease period of delay for that user.
    { idempotent: true },
  );
};

/**
 * Does the claim still hold every one of the entries (each claimed under it)? Locks them for the rest of `trx`.
 */
async function holdsEvery(
  c: PgConnection,
  trx: Transaction<unknown>,
  claim: { readonly claimId: string; readonly entryIds: readonly string[] },
): Promise<boolean> {
  const ids = [...new Set(claim.entryIds)];
  const owned = await sql<{ id: string }>`
    select id from ${c.t('outbox')}
    where claim_id = ${claim.claimId} and status = 'claimed' and id = any(${ids}::text[])
    for update`.execute(trx);
  return owned.rows.length === ids.length;
}

export const renew: Method<'renew'> = async (c, r) => {
  return c.run(
    'renew',
    () =>
      c.tx(async (trx) => {
        if (!(await holdsEvery(c, trx, r))) throw new LeaseLostError();
        await sql`update ${c.t('outbox')} set lease_until = ${r.leaseUntil.iso}::timestamptz
          where claim_id = ${r.claimId} and status = 'claimed'`.execute(trx);
        return { leaseUntil: r.leaseUntil.iso };
      }),
    // Setting the same lease end again changes nothing.
    { idempotent: true },
  );
};

export const fail: Method<'fail'> = async (c, f) => {
  await c.run(
    'fail',
    async () => {
      await sql`update ${c.t('outbox')}
        set attempts = attempts + 1, last_error = ${pgText(f.lastError)},
            status = case when attempts + 1 >= ${f.maxAttempts} then 'dead' else 'queued' end,
            retry_at = ${f.retryAt?.iso ?? null}::timestamptz, claim_id = null, worker = null, lease_until = null,
            lease_owner = null
        where claim_id = ${f.claimId} and status = 'claimed' and id = any(${f.entryIds}::text[])`.execute(
        c.db,
      );
    },
    { idempotent: true },
  );
};

export const release: Method<'release'> = async (c, r) => {
  await c.run(
    'release',
    async () => {
      await sql`update ${c.t('outbox')}
        set status = 'queued', last_error = ${pgText(r.reason)}, retry_at = ${r.retryAt.iso}::timestamptz,
            claim_id = null, worker = null, lease_until = null, lease_owner = null
        where claim_id = ${r.claimId} and status = 'claimed' and id = any(${r.entryIds}::text[])`.execute(
        c.db,
      );
    },
    { idempotent: true },
  );
};

export const drop: Method<'drop'> = async (c, d) => {
  await c.run(
    'drop',
    () =>
      c.tx(async (trx) => {
        if (!(await holdsEvery(c, trx, d))) return;
        await sql`update ${c.t('outbox')}
          set status = 'dead', text = '', last_error = ${pgText(d.reason)}, claim_id = null, worker = null,
              lease_until = null, lease_owner = null
          where claim_id = ${d.claimId} and status = 'claimed' and id = any(${d.entryIds}::text[])`.execute(
          trx,
        );
      }),
    // Dropping entries dropped already finds them no longer claimed and changes nothing.
    { idempotent: true },
  );
};

export const backlog: Method<'backlog'> = async (c, o) => {
  const now = o.now.iso;
  await expireExitedLeases(c, now, 'backlog');
  return c.run(
    'backlog',
    async () => {
      const r = await sql<{
        queued: string;
        claimed: string;
        dead: string;
        stale: string;
        next: Date | string | null;
      }>`
        select count(*) filter (where status = 'queued') as queued,
               count(*) filter (where status = 'claimed') as claimed,
               count(*) filter (where status = 'dead') as dead,
               count(*) filter (where status = 'claimed' and lease_until <= ${now}::timestamptz) as stale,
               min(case when status = 'claimed' and lease_until > ${now}::timestamptz then lease_until
                        when status = 'queued' and retry_at > ${now}::timestamptz then retry_at end) as next
        from ${c.t('outbox')}
        where status <> 'done' ${o.userId === null ? sql`` : sql`and user_id = ${o.userId}`}`.execute(c.db);
      const row = r.rows[0];
      return {
        queued: Number(row?.queued ?? 0),
        claimed: Number(row?.claimed ?? 0),
        dead: Number(row?.dead ?? 0),
        staleLeases: Number(row?.stale ?? 0),
        nextClaimableAt:
          row?.next === null || row?.next === undefined ? null : new Date(row.next).toISOString(),
      };
    },
    { idempotent: true },
  );
};

/**
 * Ends, at `now`, the live leases of processes on this host that have exited, so that they are taken over at once.
 * One indexed read of the holders of live claims (a handful: one per working process); a write only when one exited.
 */
async function expireExitedLeases(c: PgConnection, now: string, action: string): Promise<void> {
  const outbox = c.t('outbox');
  const owners = await c.run(
    action,
    async () => {
      const r = await sql<{ lease_owner: string }>`
        select distinct lease_owner from ${outbox}
        where status = 'claimed' and lease_owner is not null and lease_owner <> ${c.options.leaseOwnerKey}
          and lease_until > ${now}::timestamptz`.execute(c.db);
      return r.rows.map((row) => row.lease_owner);
    },
    { idempotent: true },
  );
  const exited = owners.filter((key) =>
    kit.processIdentity.hasExited(kit.processIdentity.decode(key), c.options.leaseOwner),
  );
  if (exited.length === 0) return;
  const expired = await c.run(
    action,
    async () => {
      const r = await sql<{ id: string }>`
        update ${outbox} set lease_until = ${now}::timestamptz
        where status = 'claimed' and lease_owner = any(${exited}::text[]) and lease_until > ${now}::timestamptz
        returning id`.execute(c.db);
      return r.rows.length;
    },
    { idempotent: true },
  );
  if (expired > 0) {
    const pids = exited.map((key) => kit.processIdentity.decode(key)?.pid).join(', ');
    c.options.logger.warn(
      `[mem01/store-postgres] ${expired} claimed turn(s) of exited process(es) ${pids} on this host are taken over at once`,
    );
  }
}

/** Every outbox entry of a user in acceptance order (diagnostics and tests). */
export async function outboxEntries(c: PgConnection, userId: string): Promise<kit.OutboxEntry[]> {
  kit.assertId(userId, 'userId');
  return c.run(
    'outboxEntries',
    async () => {
      const r =
        await sql<Row>`select ${ENTRY} from ${c.t('outbox')} where user_id = ${userId} order by seq`.execute(
          c.db,
        );
      return r.rows.map(kit.outboxEntryFromRow);
    },
    { idempotent: true },
  );
}
