/**
 * Governance of the PostgreSQL store: operation keys (recorded by `commit` and `forget` in their transaction), capture
 * grants, budget counters (one transaction per charge under a per-user advisory lock, so every process sharing the
 * database counts one budget), active counts and access counts. The contract checks are the store kit's.
 */
import { DuplicateOperationError, StoreError } from '@mem01/engine';
import type { OperationRecord, Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { sql, type Transaction } from 'kysely';
import type { Method, PgConnection } from './connection.js';

type CanonicalScope = { readonly userId: string; readonly namespace: string };

export const getOperation: Method<'getOperation'> = async (c, q) => {
  return c.run(
    'getOperation',
    async () => {
      const r =
        await sql<Row>`select key, fingerprint, action, belief_ids, outcome, at from ${c.t('operations')}
        where user_id = ${q.scope.userId} and namespace = ${q.scope.namespace} and key = ${q.key}`.execute(
          c.db,
        );
      const row = r.rows[0];
      return row ? kit.operationFromRow(row) : null;
    },
    { idempotent: true },
  );
};

/** Records an operation inside the caller's transaction; `DuplicateOperationError` when its key is recorded. */
export async function recordOperation(
  c: PgConnection,
  trx: Transaction<unknown>,
  scope: CanonicalScope,
  op: OperationRecord | null,
): Promise<void> {
  if (!op) return;
  const r = await sql`insert into ${c.t('operations')}
      (user_id, namespace, key, fingerprint, action, belief_ids, outcome, at)
    values (${scope.userId}, ${scope.namespace}, ${op.key}, ${op.fingerprint}, ${op.action},
      ${JSON.stringify(op.beliefIds)}, ${op.outcome}, ${op.at})
    on conflict do nothing returning key`.execute(trx);
  if (r.rows.length === 0) throw new DuplicateOperationError(op.key);
}

export const recordGrant: Method<'recordGrant'> = async (c, g) => {
  await c.run(
    'recordGrant',
    async () => {
      const r = await sql`insert into ${c.t('capture_grants')}
          (id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at, key, policy_id, principal_id,
           decision_id)
        values (${g.id}, ${g.scope.userId}, ${g.scope.namespace}, ${g.intentDigest}, ${g.grantedAt},
          ${g.expiresAt}, ${g.revokedAt}, ${g.key ?? null}, ${g.policyId ?? null}, ${g.principalId ?? null},
          ${g.decisionId ?? null})
        on conflict do nothing returning id`.execute(c.db);
      if (r.rows.length > 0) return;
      // Refused by the id or by the scope's unique key (a racing grant with the same key won).
      const same = await sql`select 1 from ${c.t('capture_grants')} where id = ${g.id}`.execute(c.db);
      if (same.rows.length > 0 || g.key === undefined)
        throw new StoreError(`capture grant ${g.id} is recorded already`);
      throw new DuplicateOperationError(g.key);
    },
    { idempotent: false },
  );
};

const GRANT_COLUMNS = sql.raw(
  'id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at, key, policy_id, principal_id, decision_id',
);

export const listGrants: Method<'listGrants'> = async (c, s) => {
  return c.run(
    'listGrants',
    async () => {
      const r = await sql<Row>`select ${GRANT_COLUMNS} from ${c.t('capture_grants')}
        where user_id = ${s.userId} and namespace = ${s.namespace} order by granted_at, id`.execute(c.db);
      return r.rows.map(kit.grantFromRow);
    },
    { idempotent: true },
  );
};

export const activeGrant: Method<'activeGrant'> = async (c, s, at) => {
  return c.run(
    'activeGrant',
    async () => {
      const r = await sql<Row>`select ${GRANT_COLUMNS} from ${c.t('capture_grants')}
        where user_id = ${s.userId} and namespace = ${s.namespace} and granted_at <= ${at}
          and (revoked_at is null or revoked_at > ${at}) and (expires_at is null or expires_at > ${at})
        order by granted_at desc, id desc limit 1`.execute(c.db);
      const row = r.rows[0];
      return row ? kit.grantFromRow(row) : null;
    },
    { idempotent: true },
  );
};

export const revokeGrants: Method<'revokeGrants'> = async (c, s, { at, id }) => {
  return c.run(
    'revokeGrants',
    async () => {
      const r = await sql`update ${c.t('capture_grants')} set revoked_at = ${at}
        where user_id = ${s.userId} and namespace = ${s.namespace} and revoked_at is null
          ${id === null ? sql`` : sql`and id = ${id}`}`.execute(c.db);
      return Number(r.numAffectedRows ?? 0n);
    },
    // Repeating it revokes nothing more.
    { idempotent: true },
  );
};

export const chargeBudget: Method<'chargeBudget'> = async (c, r) => {
  const names = r.charges.map((x) => x.name);
  return c.run(
    'chargeBudget',
    () =>
      c.tx(async (trx) => {
        // One charge of a user at a time, across processes: read, check and add under the lock.
        await sql`select pg_advisory_xact_lock(hashtext(${`mem01:budget:${c.options.schema}:${r.userId}`}))`.execute(
          trx,
        );
        await sql`delete from ${c.t('budget_usage')}
          where user_id = ${r.userId} and window_start < ${r.windowStart}`.execute(trx);
        const rows = await sql<{
          name: string;
          used: string | number;
        }>`select name, used from ${c.t('budget_usage')}
          where user_id = ${r.userId} and window_start = ${r.windowStart} and name = any(${names}::text[])`.execute(
          trx,
        );
        const used = new Map(rows.rows.map((row) => [row.name, Number(row.used)]));
        const result = kit.applyCharges(r.charges, (name) => used.get(name) ?? 0);
        if (!result.charged) return result;
        for (const ch of r.charges) {
          if (ch.amount === 0) continue;
          await sql`insert into ${c.t('budget_usage')} (user_id, window_start, name, used)
            values (${r.userId}, ${r.windowStart}, ${ch.name}, ${ch.amount})
            on conflict (user_id, window_start, name)
            do update set used = ${c.t('budget_usage')}.used + excluded.used`.execute(trx);
        }
        return result;
      }),
    // A charge is not repeated after a lost connection: it may have been applied.
    { idempotent: false },
  );
};

export const readBudget: Method<'readBudget'> = async (c, r) => {
  return c.run(
    'readBudget',
    async () => {
      const rows = await sql<{ name: string; used: string | number }>`select name, used
        from ${c.t('budget_usage')} where user_id = ${r.userId} and window_start = ${r.windowStart}`.execute(
        c.db,
      );
      const used: Record<string, number> = {};
      for (const row of rows.rows) used[row.name] = Number(row.used);
      return used;
    },
    { idempotent: true },
  );
};

export const countActiveBeliefs: Method<'countActiveBeliefs'> = async (c, o) => {
  return c.run(
    'countActiveBeliefs',
    async () => {
      const measure = o.unit === 'bytes' ? sql`coalesce(sum(octet_length(statement)), 0)` : sql`count(*)`;
      const r = await sql<{ n: string }>`select ${measure} as n from ${c.t('beliefs')}
        where user_id = ${o.userId} and status = 'active' and not (kind = any(${o.excludeKinds}::text[]))`.execute(
        c.db,
      );
      return Number(r.rows[0]?.n ?? 0);
    },
    { idempotent: true },
  );
};

export const recordAccess: Method<'recordAccess'> = async (c, a) => {
  if (a.hits.length === 0) return;
  const ids = a.hits.map((h) => h.id);
  const counts = a.hits.map((h) => h.count);
  await c.run(
    'recordAccess',
    async () => {
      // Not a change of the belief: neither version nor updated_at moves.
      await sql`update ${c.t('beliefs')} b set access_count = b.access_count + h.n,
          last_accessed_at = case when b.last_accessed_at is null or b.last_accessed_at < ${a.at}
            then ${a.at} else b.last_accessed_at end
        from unnest(${ids}::text[], ${counts}::int[]) as h(id, n)
        where b.id = h.id and b.user_id = ${a.scope.userId} and b.namespace = ${a.scope.namespace}`.execute(
        c.db,
      );
    },
    { idempotent: false },
  );
};
