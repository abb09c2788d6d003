/**
 * The durable outbox of the SQLite store. Per user, entries are claimed strictly in acceptance order (`seq`), at
 * most one claim in flight, across processes: each claim runs in one `BEGIN IMMEDIATE` transaction. Each claim
 * records the process holding it; a claim of a process on this host that has exited is expired at the next claim or
 * backlog, so a restarted process does not wait out its crashed predecessor's lease.
 */
import { randomUUID } from 'node:crypto';
import { LeaseLostError, type OutboxInput } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Connection, Method } from './connection.js';

/** Shorter needles would erase turns that merely share a syllable with the forgotten text. */
const MIN_ERASE_NEEDLE = 3;

export const enqueue: Method<'enqueue'> = (c, valid) => {
  if (valid.length === 0) return { accepted: 0, duplicates: 0 };
  return c.tx('enqueue', () => {
    const acceptedAt = kit.isoNow();
    let accepted = 0;
    for (const e of valid) if (enqueueOne(c, e, acceptedAt)) accepted++;
    return { accepted, duplicates: valid.length - accepted };
  });
};

/** Inserts one checked turn (inside a write transaction); false when its idempotency key exists already. */
export function enqueueOne(c: Connection, e: OutboxInput, acceptedAt: string): boolean {
  const s = kit.normalizeScope(e.scope);
  const changes = c.run(
    `INSERT INTO outbox (id, user_id, namespace, session_id, position, role, text, at, ref, idempotency_key,
       accepted_at, grant_id, available_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '') ON CONFLICT (idempotency_key) DO NOTHING`,
    kit.newId(),
    s.userId,
    s.namespace,
    e.sessionId,
    e.position,
    e.role,
    e.text,
    e.at,
    e.ref ?? null,
    kit.idempotencyKey(e.sessionId, e.position, e.text),
    acceptedAt,
    e.grantId ?? null,
  );
  return changes > 0;
}

export const claim: Method<'claim'> = (c, o) => {
  const now = o.now.iso;
  return c.tx('claim', () => {
    expireLeases(c, exitedOwners(c, now), now);
    const heads =
      o.userId === null
        ? c.all(
            `SELECT user_id, min(seq) AS head FROM outbox WHERE status IN ('queued', 'claimed')
              GROUP BY user_id ORDER BY head`,
          )
        : c.all(
            `SELECT user_id, min(seq) AS head FROM outbox WHERE status IN ('queued', 'claimed') AND user_id = ?
              GROUP BY user_id`,
            o.userId,
          );
    const waiting = (r: Row) => r.status === 'queued' && String(r.available_at) > now;
    for (const h of heads) {
      const userId = String(h.user_id);
      if (
        c.get(
          "SELECT 1 AS x FROM outbox WHERE user_id = ? AND status = 'claimed' AND lease_until > ? LIMIT 1",
          userId,
          now,
        )
      ) {
        continue;
      }
      const rows = c.all(
        `SELECT * FROM outbox WHERE user_id = ? AND status IN ('queued', 'claimed') ORDER BY seq LIMIT ?`,
        userId,
        o.maxEntries,
      );
      const head = rows[0];
      if (!head || waiting(head)) continue;
      const taken = kit
        .claimBatch(
          rows.map((r) => ({
            r,
            namespace: String(r.namespace),
            text: String(r.text),
            grantId: (r.grant_id as string | null | undefined) ?? null,
          })),
          o,
          ({ r }) => !waiting(r),
        )
        .map(({ r }) => r);
      const claimId = randomUUID();
      for (const r of taken) {
        c.run(
          "UPDATE outbox SET status = 'claimed', claim_id = ?, worker = ?, lease_until = ?, lease_owner = ? WHERE seq = ?",
          claimId,
          o.worker,
          o.leaseUntil.iso,
          c.ownerKey,
          Number(r.seq),
        );
      }
      const scope = { userId, namespace: String(head.namespace) };
      return kit.claimFromRows(claimId, o.worker, scope, taken, o.leaseUntil.iso);
    }
    return null;
  });
};

/** Does the claim still hold every one of the entries (each claimed under it)? Run it inside the write transaction. */
function holdsEvery(
  c: Connection,
  claim: { readonly claimId: string; readonly entryIds: readonly string[] },
): boolean {
  const ids = [...new Set(claim.entryIds)];
  const owned = c.get(
    `SELECT count(*) AS n FROM outbox WHERE claim_id = ? AND status = 'claimed'
       AND id IN (SELECT value FROM json_each(?))`,
    claim.claimId,
    JSON.stringify(ids),
  );
  return Number(owned?.n) === ids.length;
}

export const renew: Method<'renew'> = (c, r) => {
  return c.tx('renew', () => {
    if (!holdsEvery(c, r)) throw new LeaseLostError();
    c.run(
      "UPDATE outbox SET lease_until = ? WHERE claim_id = ? AND status = 'claimed'",
      r.leaseUntil.iso,
      r.claimId,
    );
    return { leaseUntil: r.leaseUntil.iso };
  });
};

export const fail: Method<'fail'> = (c, f) => {
  c.tx('fail', () => {
    c.run(
      `UPDATE outbox SET attempts = attempts + 1, last_error = ?, claim_id = NULL, worker = NULL, lease_until = NULL,
         lease_owner = NULL, status = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'queued' END, available_at = ?
       WHERE claim_id = ? AND status = 'claimed'`,
      f.lastError,
      f.maxAttempts,
      f.retryAt?.iso ?? '',
      f.claimId,
    );
  });
};

export const release: Method<'release'> = (c, r) => {
  c.tx('release', () => {
    c.run(
      `UPDATE outbox SET status = 'queued', claim_id = NULL, worker = NULL, lease_until = NULL, lease_owner = NULL,
         available_at = ?, last_error = ? WHERE claim_id = ? AND status = 'claimed'`,
      r.retryAt.iso,
      r.reason,
      r.claimId,
    );
  });
};

export const drop: Method<'drop'> = (c, d) => {
  c.tx('drop', () => {
    if (!holdsEvery(c, d)) return;
    c.run(
      `UPDATE outbox SET status = 'dead', text = '', last_error = ?, claim_id = NULL, worker = NULL,
         lease_until = NULL, lease_owner = NULL WHERE claim_id = ? AND status = 'claimed'`,
      d.reason,
      d.claimId,
    );
  });
};

export const backlog: Method<'backlog'> = (c, o) => {
  const now = o.now.iso;
  return c.op('backlog', () => {
    // Reading needs no write lock; only an exited holder's claims (rare) are expired in a write transaction.
    const exited = exitedOwners(c, now);
    if (exited.length > 0) c.tx('backlog', () => expireLeases(c, exited, now));
    const row = c.get(
      `SELECT
         coalesce(sum(status = 'queued'), 0) AS queued,
         coalesce(sum(status = 'claimed'), 0) AS claimed,
         coalesce(sum(status = 'dead'), 0) AS dead,
         coalesce(sum(status = 'claimed' AND lease_until <= ?), 0) AS stale,
         min(CASE WHEN status = 'claimed' AND lease_until > ? THEN lease_until
                  WHEN status = 'queued' AND available_at > ? THEN available_at END) AS next
       FROM outbox WHERE status <> 'done' AND (? IS NULL OR user_id = ?)`,
      now,
      now,
      now,
      o.userId,
      o.userId,
    )!;
    return {
      queued: Number(row.queued),
      claimed: Number(row.claimed),
      dead: Number(row.dead),
      staleLeases: Number(row.stale),
      nextClaimableAt: row.next === null || row.next === undefined ? null : String(row.next),
    };
  });
};

/** The recorded holders of live leases that are processes on this host that have exited. */
function exitedOwners(c: Connection, now: string): string[] {
  const rows = c.all(
    `SELECT DISTINCT lease_owner FROM outbox
      WHERE status = 'claimed' AND lease_until > ? AND lease_owner IS NOT NULL AND lease_owner <> ?`,
    now,
    c.ownerKey,
  );
  return rows
    .map((r) => String(r.lease_owner))
    .filter((key) => kit.processIdentity.hasExited(kit.processIdentity.decode(key), c.owner));
}

/** Ends the leases of exited holders at `now` (inside a write transaction), so they are taken over at once. */
function expireLeases(c: Connection, owners: readonly string[], now: string): void {
  for (const owner of owners) {
    const n = c.run(
      "UPDATE outbox SET lease_until = ? WHERE status = 'claimed' AND lease_owner = ? AND lease_until > ?",
      now,
      owner,
      now,
    );
    if (n > 0) {
      const pid = kit.processIdentity.decode(owner)?.pid;
      c.logger.warn(
        `[mem01/store-sqlite] ${n} claimed turn(s) of exited process ${pid} on this host are taken over at once`,
      );
    }
  }
}

/**
 * Erases (inside the forget transaction) the text of the user's turns named by forget's plan, and of those containing
 * one of `needles` (the forgotten statement and value).
 */
export function eraseTurnText(
  c: Connection,
  userId: string,
  turns: kit.ForgetPlan['turns'],
  needles: readonly string[],
): void {
  const erase = `UPDATE outbox SET text = ''`;
  for (const turn of turns) {
    c.run(
      `${erase} WHERE user_id = ? AND session_id = ? AND position = ? AND text <> ''`,
      userId,
      turn.sessionId,
      turn.position,
    );
  }
  for (const needle of needles) {
    if (needle.trim().length < MIN_ERASE_NEEDLE) continue;
    c.run(`${erase} WHERE user_id = ? AND text <> '' AND instr(text, ?) > 0`, userId, needle);
  }
}
