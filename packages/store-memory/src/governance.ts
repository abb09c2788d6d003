/**
 * Governance of the in-memory store: operation keys (recorded by `commit` and `forget`, see `beliefs.ts`), capture
 * grants, budget counters, active counts and access counts. The contract checks are the store kit's.
 */
import { type CaptureGrant, DuplicateOperationError, StoreError } from '@mem01/engine';
import type { OperationRecord } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { type CanonicalScope, type MemoryState, type Method, scopeKey } from './state.js';

const utf8 = new TextEncoder();

export const getOperation: Method<'getOperation'> = (state, q) => {
  const record = state.operations.get(scopeKey(q.scope))?.get(q.key);
  return record ? { ...record, beliefIds: [...record.beliefIds] } : null;
};

/** `DuplicateOperationError` when the operation's key is recorded in the scope already. Writes nothing. */
export function checkOperation(state: MemoryState, scope: CanonicalScope, op: OperationRecord | null): void {
  if (op && state.operations.get(scopeKey(scope))?.has(op.key)) throw new DuplicateOperationError(op.key);
}

/** Records a checked operation (after {@link checkOperation}). */
export function recordOperation(state: MemoryState, scope: CanonicalScope, op: OperationRecord | null): void {
  if (!op) return;
  const sk = scopeKey(scope);
  let ops = state.operations.get(sk);
  if (!ops) {
    ops = new Map();
    state.operations.set(sk, ops);
  }
  ops.set(op.key, { ...op, beliefIds: [...op.beliefIds] });
}

const copyGrant = (g: CaptureGrant): CaptureGrant => ({ ...g, scope: { ...g.scope } });

export const recordGrant: Method<'recordGrant'> = (state, g) => {
  if (state.grants.has(g.id)) throw new StoreError(`capture grant ${g.id} is recorded already`);
  const key = g.key;
  if (key !== undefined && grantsOfScope(state, g.scope).some((x) => x.key === key))
    throw new DuplicateOperationError(key);
  state.grants.set(g.id, g);
};

function grantsOfScope(state: MemoryState, scope: CanonicalScope): CaptureGrant[] {
  return [...state.grants.values()]
    .filter((g) => scopeKey(kit.normalizeScope(g.scope)) === scopeKey(scope))
    .sort(kit.grantOrder);
}

export const listGrants: Method<'listGrants'> = (state, scope) => {
  return grantsOfScope(state, scope).map(copyGrant);
};

export const activeGrant: Method<'activeGrant'> = (state, s, at) => {
  const valid = grantsOfScope(state, s).filter((g) => kit.grantValidAt(g, at));
  const latest = valid[valid.length - 1];
  return latest ? copyGrant(latest) : null;
};

export const revokeGrants: Method<'revokeGrants'> = (state, s, { at, id }) => {
  let n = 0;
  for (const g of grantsOfScope(state, s)) {
    if (g.revokedAt !== null || (id !== null && g.id !== id)) continue;
    state.grants.set(g.id, { ...g, scope: s, revokedAt: at });
    n++;
  }
  return n;
};

export const chargeBudget: Method<'chargeBudget'> = (state, r) => {
  let current = state.budgets.get(r.userId);
  if (current && current.windowStart < r.windowStart) current = undefined;
  const used = current?.windowStart === r.windowStart ? current.used : new Map<string, number>();
  const result = kit.applyCharges(r.charges, (name) => used.get(name) ?? 0);
  if (!result.charged) return result;
  // A charge for an earlier window than the kept one (a slow clock) only checks; counters move forward only.
  if (current === undefined || current.windowStart === r.windowStart) {
    for (const [name, value] of Object.entries(result.used)) used.set(name, value);
    state.budgets.set(r.userId, { windowStart: r.windowStart, used });
  }
  return result;
};

export const readBudget: Method<'readBudget'> = (state, r) => {
  const current = state.budgets.get(r.userId);
  if (current?.windowStart !== r.windowStart) return {};
  // A zero charge (a check) keeps an entry here; the contract leaves counters at zero out.
  return Object.fromEntries([...current.used].filter(([, n]) => n > 0));
};

export const countActiveBeliefs: Method<'countActiveBeliefs'> = (state, o) => {
  const excluded = new Set(o.excludeKinds);
  let n = 0;
  for (const s of state.scopes.values()) {
    if (s.scope.userId !== o.userId) continue;
    for (const id of s.active.values()) {
      const { belief } = state.rows.get(id)!;
      if (excluded.has(belief.kind)) continue;
      n += o.unit === 'bytes' ? utf8.encode(belief.statement).byteLength : 1;
    }
  }
  return n;
};

export const recordAccess: Method<'recordAccess'> = (state, a) => {
  const sk = scopeKey(a.scope);
  for (const { id, count } of a.hits) {
    const row = state.rows.get(id);
    if (!row || row.scope.key !== sk) continue;
    const b = row.belief;
    const last = b.lastAccessedAt !== undefined && b.lastAccessedAt > a.at ? b.lastAccessedAt : a.at;
    row.belief = { ...b, accessCount: (b.accessCount ?? 0) + count, lastAccessedAt: last };
  }
};
