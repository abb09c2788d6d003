/**
 * Beliefs of the in-memory store: the atomic commit (everything is checked before anything is applied), reads,
 * history, import and forget.
 */

import {
  type Belief,
  DuplicateActiveBeliefError,
  InvalidInputError,
  NotFoundError,
  StoreError,
  VersionConflictError,
} from '@mem01/engine';
import * as kit from '@mem01/engine/store-kit';
import { checkOperation, recordOperation } from './governance.js';
import { eraseTurnText, finishEntry, heldEntries } from './outbox.js';
import { cloneBelief, keyOf, lowerBound, type MemoryState, type Method, scopeKey } from './state.js';
import { redactTranscripts } from './transcript.js';

export const commit: Method<'commit'> = (state, valid) => {
  const sk = scopeKey(valid.scope);
  // Updates apply first (as a database applies them before inserting), each against the running state.
  const next = new Map<string, Belief>();
  valid.updates.forEach((u, i) => {
    const row = state.rows.get(u.id);
    if (!row || row.scope.key !== sk) throw new NotFoundError(`belief ${u.id}`);
    const current = next.get(u.id) ?? row.belief;
    if (current.version !== u.expectedVersion) {
      throw new VersionConflictError(u.id, u.expectedVersion, current.version);
    }
    if (current.status === 'forgotten') {
      throw new InvalidInputError(`updates[${i}]`, `belief ${u.id} is forgotten and can no longer change`);
    }
    next.set(u.id, { ...current, ...u.set, version: current.version + 1 });
  });
  for (const ins of valid.inserts) {
    if (state.rows.has(ins.belief.id)) {
      throw new StoreError(`commit refused: belief id ${ins.belief.id} already exists`);
    }
  }
  state.checkDimensions(valid.inserts);
  checkActiveUnique(
    state,
    sk,
    [...next.values()].map((b) => ({ before: state.rows.get(b.id)!.belief, after: b })),
    valid.inserts.map((i) => i.belief),
  );
  const completed = heldEntries(state, valid.complete);
  checkOperation(state, valid.scope, valid.operation);

  // Everything is valid: apply. Nothing below can throw.
  const scopeState = state.scopeState(valid.scope);
  for (const b of next.values()) state.replaceBelief(state.rows.get(b.id)!, b);
  for (const ins of valid.inserts) state.insertRow(scopeState, ins.belief, ins.embedding);
  scopeState.audit.push(...valid.audit);
  for (const e of completed) finishEntry(state, e, 'done');
  recordOperation(state, valid.scope, valid.operation);
};

export const get: Method<'get'> = (state, scope, id) => {
  const sk = scopeKey(scope);
  const row = state.rows.get(id);
  return row && row.scope.key === sk ? cloneBelief(row.belief) : null;
};

export const getEmbeddings: Method<'getEmbeddings'> = (state, scope, ids) => {
  const sk = scopeKey(scope);
  const out = new Map<string, Float32Array>();
  for (const id of ids) {
    const row = state.rows.get(id);
    if (!row || row.scope.key !== sk) continue;
    const v = row.scope.vectors?.get(row) ?? null;
    if (v) out.set(id, v);
  }
  return out;
};

export const getActiveByKeys: Method<'getActiveByKeys'> = (state, scope, keys) => {
  const s = state.scope(scope);
  if (!s) return [];
  const ids = new Set<string>();
  for (const k of keys) {
    const id = s.active.get(keyOf(k.subject, k.attribute));
    if (id !== undefined) ids.add(id);
  }
  return [...ids]
    .sort()
    .reverse()
    .map((id) => cloneBelief(state.rows.get(id)!.belief));
};

export const list: Method<'list'> = (
  state,
  scope,
  { statuses, limit, before, excludeGrants, kinds, sessionId },
) => {
  const s = state.scope(scope);
  if (!s) return { items: [], nextCursor: null };
  const wanted = new Set(statuses);
  const excluded = new Set(excludeGrants);
  const kindSet = kinds && new Set<string>(kinds);
  const ids = s.ids;
  const fetched: Belief[] = [];
  for (let i = before === null ? ids.length - 1 : lowerBound(ids, before) - 1; i >= 0; i--) {
    const b = state.rows.get(ids[i]!)!.belief;
    if (!wanted.has(b.status) || (b.grantId !== undefined && excluded.has(b.grantId))) continue;
    if (kindSet && !kindSet.has(b.kind)) continue;
    if (sessionId !== null && !b.evidence.some((e) => e.sessionId === sessionId)) continue;
    fetched.push(b);
    if (fetched.length > limit) break;
  }
  return kit.listPage(fetched.map(cloneBelief), limit);
};

export const history: Method<'history'> = (state, scope, start) => {
  const s = state.scope(scope);
  if (!s) return [];
  let found: Belief[];
  if (start === null) {
    found = s.ids.map((id) => state.rows.get(id)!.belief);
  } else {
    if (state.rows.get(start)?.scope !== s) return [];
    // Reverse links too, so a chain is found even if only one side of a link was recorded.
    const bySupersedes = new Map<string, string[]>();
    for (const id of s.ids) {
      const from = state.rows.get(id)!.belief.supersedes;
      if (from !== null) bySupersedes.set(from, [...(bySupersedes.get(from) ?? []), id]);
    }
    const chain = new Map<string, Belief>();
    const todo = [start];
    while (todo.length > 0) {
      const id = todo.pop()!;
      if (chain.has(id)) continue;
      const row = state.rows.get(id);
      if (!row || row.scope !== s) continue;
      chain.set(id, row.belief);
      if (row.belief.supersedes !== null) todo.push(row.belief.supersedes);
      if (row.belief.supersededBy !== null) todo.push(row.belief.supersededBy);
      todo.push(...(bySupersedes.get(id) ?? []));
    }
    found = [...chain.values()];
  }
  return found.sort(kit.historyOrder).map(cloneBelief);
};

export const importBeliefs: Method<'importBeliefs'> = (state, valid, given) => {
  const fresh = valid.filter((r) => !state.rows.has(r.belief.id));
  state.checkDimensions(fresh);
  const byScope = new Map<string, Belief[]>();
  for (const r of fresh) {
    const sk = scopeKey(kit.normalizeScope(r.belief.scope));
    byScope.set(sk, [...(byScope.get(sk) ?? []), r.belief]);
  }
  for (const [sk, beliefs] of byScope) checkActiveUnique(state, sk, [], beliefs);
  for (const r of fresh)
    state.insertRow(state.scopeState(kit.normalizeScope(r.belief.scope)), r.belief, r.embedding);
  return { inserted: fresh.length, skipped: given - fresh.length };
};

/**
 * Forgets a belief: the tombstone replaces it in every index, and so do the tombstones of the episodes the engine's
 * `planForget` names; the turns of the plan lose their text in the outbox and the transcript (with the belief's value
 * and statement in the user's other transcript items). Everything is checked before anything changes.
 */
export const forget: Method<'forget'> = (state, scope, id, { at, expectedVersion, operation }) => {
  const sk = scopeKey(scope);
  const row = state.rows.get(id);
  if (!row || row.scope.key !== sk) throw new NotFoundError(`belief ${id}`);
  const b = row.belief;
  checkOperation(state, row.scope.scope, operation);
  if (b.status === 'forgotten') {
    recordOperation(state, row.scope.scope, operation);
    return cloneBelief(b);
  }
  if (expectedVersion !== null && expectedVersion !== b.version) {
    throw new VersionConflictError(id, expectedVersion, b.version);
  }
  // Every record of the kinds asked for is a candidate: the scan is in memory, so no prefilter is worth its code.
  const plan = kit.planForget(b, ({ kinds }) =>
    row.scope.ids
      .map((eid) => state.rows.get(eid)?.belief)
      .filter((r): r is Belief => r !== undefined && kinds.includes(r.kind)),
  );
  recordOperation(state, row.scope.scope, operation);
  const userId = row.scope.scope.userId;
  eraseTurnText(state, userId, plan.turns);
  redactTranscripts(state, userId, plan);
  state.replaceBelief(row, kit.tombstoneOf(b, at));
  for (const eid of plan.episodeIds) {
    const r = state.rows.get(eid)!;
    state.replaceBelief(r, kit.tombstoneOf(r.belief, at));
  }
  return cloneBelief(row.belief);
};

/**
 * Refuses a change that would leave two active beliefs on one subject + attribute of scope `sk`.
 * `updated` are the before/after states of changed beliefs, `inserted` the new ones.
 */
function checkActiveUnique(
  state: MemoryState,
  sk: string,
  updated: readonly { before: Belief; after: Belief }[],
  inserted: readonly Belief[],
): void {
  const current = state.scopes.get(sk);
  const delta = new Map<string, Set<string>>();
  const holder = (key: string): Set<string> => {
    let set = delta.get(key);
    if (!set) {
      const id = current?.active.get(key);
      set = new Set(id === undefined ? [] : [id]);
      delta.set(key, set);
    }
    return set;
  };
  for (const { before } of updated) {
    if (before.status === 'active') holder(keyOf(before.subject, before.attribute)).delete(before.id);
  }
  for (const b of [...updated.map((u) => u.after), ...inserted]) {
    if (b.status !== 'active') continue;
    const set = holder(keyOf(b.subject, b.attribute));
    set.add(b.id);
    if (set.size > 1) throw new DuplicateActiveBeliefError(b.subject, b.attribute);
  }
}
