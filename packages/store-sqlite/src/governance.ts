/**
 * Governance of the SQLite store: operation keys (recorded by `commit` and `forget` in their transaction), capture
 * grants, budget counters (one `BEGIN IMMEDIATE` transaction per charge, so processes sharing the file count one
 * budget), active counts and access counts. The contract checks are the store kit's.
 */
import { DuplicateOperationError, StoreError } from '@mem01/engine';
import type { OperationRecord } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { Connection, Method } from './connection.js';
import { placeholders } from './read-batch.js';

type CanonicalScope = { readonly userId: string; readonly namespace: string };

export const getOperation: Method<'getOperation'> = (c, q) => {
  return c.op('getOperation', () => {
    const row = c.get(
      'SELECT * FROM operations WHERE user_id = ? AND namespace = ? AND key = ?',
      q.scope.userId,
      q.scope.namespace,
      q.key,
    );
    return row ? kit.operationFromRow(row) : null;
  });
};

/** Records an operation inside the caller's transaction; `DuplicateOperationError` when its key is recorded. */
export function recordOperation(c: Connection, scope: CanonicalScope, op: OperationRecord | null): void {
  if (!op) return;
  const changed = c.run(
    `INSERT INTO operations (user_id, namespace, key, fingerprint, action, belief_ids, outcome, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    scope.userId,
    scope.namespace,
    op.key,
    op.fingerprint,
    op.action,
    JSON.stringify(op.beliefIds),
    op.outcome,
    op.at,
  );
  if (changed === 0) throw new DuplicateOperationError(op.key);
}

export const recordGrant: Method<'recordGrant'> = (c, g) => {
  c.tx('recordGrant', () => {
    const changed = c.run(
      `INSERT INTO capture_grants (id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at, key,
         policy_id, principal_id, decision_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      g.id,
      g.scope.userId,
      g.scope.namespace,
      g.intentDigest,
      g.grantedAt,
      g.expiresAt,
      g.revokedAt,
      g.key ?? null,
      g.policyId ?? null,
      g.principalId ?? null,
      g.decisionId ?? null,
    );
    if (changed > 0) return;
    // Refused by the id, or by the scope's unique key (a racing grant with the same key won).
    if (g.key === undefined || c.get('SELECT 1 AS x FROM capture_grants WHERE id = ?', g.id))
      throw new StoreError(`capture grant ${g.id} is recorded already`);
    throw new DuplicateOperationError(g.key);
  });
};

export const listGrants: Method<'listGrants'> = (c, s) => {
  return c.op('listGrants', () =>
    c
      .all(
        'SELECT * FROM capture_grants WHERE user_id = ? AND namespace = ? ORDER BY granted_at, id',
        s.userId,
        s.namespace,
      )
      .map(kit.grantFromRow),
  );
};

export const activeGrant: Method<'activeGrant'> = (c, s, at) => {
  return c.op('activeGrant', () => {
    const row = c.get(
      `SELECT * FROM capture_grants WHERE user_id = ? AND namespace = ? AND granted_at <= ?
         AND (revoked_at IS NULL OR revoked_at > ?) AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY granted_at DESC, id DESC LIMIT 1`,
      s.userId,
      s.namespace,
      at,
      at,
      at,
    );
    return row ? kit.grantFromRow(row) : null;
  });
};

export const revokeGrants: Method<'revokeGrants'> = (c, s, { at, id }) => {
  return c.tx('revokeGrants', () =>
    c.run(
      `UPDATE capture_grants SET revoked_at = ?
       WHERE user_id = ? AND namespace = ? AND revoked_at IS NULL AND (? IS NULL OR id = ?)`,
      at,
      s.userId,
      s.namespace,
      id,
      id,
    ),
  );
};

export const chargeBudget: Method<'chargeBudget'> = (c, r) => {
  return c.tx('chargeBudget', () => {
    c.run('DELETE FROM budget_usage WHERE user_id = ? AND window_start < ?', r.userId, r.windowStart);
    const used = new Map<string, number>();
    for (const row of c.all(
      `SELECT name, used FROM budget_usage WHERE user_id = ? AND window_start = ?
         AND name IN (${placeholders(r.charges.length)})`,
      r.userId,
      r.windowStart,
      ...r.charges.map((x) => x.name),
    )) {
      used.set(String(row.name), Number(row.used));
    }
    const result = kit.applyCharges(r.charges, (name) => used.get(name) ?? 0);
    if (!result.charged) return result;
    for (const ch of r.charges) {
      if (ch.amount === 0) continue;
      c.run(
        `INSERT INTO budget_usage (user_id, window_start, name, used) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id, window_start, name) DO UPDATE SET used = used + excluded.used`,
        r.userId,
        r.windowStart,
        ch.name,
        ch.amount,
      );
    }
    return result;
  });
};

export const readBudget: Method<'readBudget'> = (c, r) => {
  return c.op('readBudget', () => {
    const used: Record<string, number> = {};
    for (const row of c.all(
      'SELECT name, used FROM budget_usage WHERE user_id = ? AND window_start = ?',
      r.userId,
      r.windowStart,
    )) {
      used[String(row.name)] = Number(row.used);
    }
    return used;
  });
};

export const countActiveBeliefs: Method<'countActiveBeliefs'> = (c, o) => {
  return c.op('countActiveBeliefs', () =>
    Number(
      c.get(
        `SELECT ${o.unit === 'bytes' ? 'coalesce(sum(length(CAST(statement AS BLOB))), 0)' : 'count(*)'} AS n
           FROM beliefs WHERE user_id = ? AND status = 'active' AND kind NOT IN (SELECT value FROM json_each(?))`,
        o.userId,
        JSON.stringify(o.excludeKinds),
      )?.n ?? 0,
    ),
  );
};

export const recordAccess: Method<'recordAccess'> = (c, a) => {
  if (a.hits.length === 0) return;
  c.tx('recordAccess', () => {
    for (const { id, count } of a.hits) {
      // Not a change of the belief: neither version nor updated_at moves (and no trigger fires on these columns).
      c.run(
        `UPDATE beliefs SET access_count = access_count + ?,
           last_accessed_at = CASE WHEN last_accessed_at IS NULL OR last_accessed_at < ? THEN ? ELSE last_accessed_at END
         WHERE id = ? AND user_id = ? AND namespace = ?`,
        count,
        a.at,
        a.at,
        id,
        a.scope.userId,
        a.scope.namespace,
      );
    }
  });
};
