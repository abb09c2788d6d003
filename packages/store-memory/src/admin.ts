/** Admin of the in-memory store: erasing a user, the scopes with their counts, the audit log. */

import type { AuditEvent } from '@mem01/engine';
import * as kit from '@mem01/engine/store-kit';
import { cloneScope, type Entry, type Method, scopeKey } from './state.js';

/** Deletes everything of a user, in every namespace: beliefs, audit, outbox entries and the user's sessions. */
export const eraseUser: Method<'eraseUser'> = (state, userId) => {
  let beliefs = 0;
  let auditEvents = 0;
  for (const [key, s] of state.scopes) {
    if (s.scope.userId !== userId) continue;
    for (const id of s.ids) state.rows.delete(id);
    beliefs += s.ids.length;
    auditEvents += s.audit.length;
    state.scopes.delete(key);
  }
  const entries = state.entriesByUser.get(userId) ?? [];
  for (const e of entries) {
    state.entries.delete(e.id);
    state.entriesByKey.delete(e.idempotencyKey);
  }
  state.entriesByUser.delete(userId);
  state.liveByUser.delete(userId);
  let transcriptItems = 0;
  for (const [id, session] of state.sessions) {
    if (session.owner.userId !== userId) continue;
    transcriptItems += session.items.length;
    state.sessions.delete(id);
  }
  let operations = 0;
  for (const [key, ops] of state.operations) {
    if (JSON.parse(key)[0] !== userId) continue;
    operations += ops.size;
    state.operations.delete(key);
  }
  let grants = 0;
  for (const [id, g] of state.grants) {
    if (g.scope.userId !== userId) continue;
    grants++;
    state.grants.delete(id);
  }
  state.budgets.delete(userId);
  return { beliefs, outboxEntries: entries.length, transcriptItems, auditEvents, operations, grants };
};

/**
 * Deletes one scope: its beliefs (with their indexes), audit, outbox entries, operation keys and grants. Transcripts
 * stay, and so do the user's budget counters (they span the user's namespaces).
 */
export const eraseScope: Method<'eraseScope'> = (state, s) => {
  const key = scopeKey(s);
  const held = state.scopes.get(key);
  let beliefs = 0;
  let auditEvents = 0;
  if (held) {
    for (const id of held.ids) state.rows.delete(id);
    beliefs = held.ids.length;
    auditEvents = held.audit.length;
    state.scopes.delete(key);
  }
  const inScope = (e: Entry) => e.scope.namespace === s.namespace;
  let outboxEntries = 0;
  for (const e of (state.entriesByUser.get(s.userId) ?? []).filter(inScope)) {
    state.entries.delete(e.id);
    state.entriesByKey.delete(e.idempotencyKey);
    outboxEntries++;
  }
  for (const byUser of [state.entriesByUser, state.liveByUser]) {
    const rest = (byUser.get(s.userId) ?? []).filter((e) => !inScope(e));
    if (rest.length > 0) byUser.set(s.userId, rest);
    else byUser.delete(s.userId);
  }
  const operations = state.operations.get(key)?.size ?? 0;
  state.operations.delete(key);
  let grants = 0;
  for (const [id, g] of state.grants) {
    if (g.scope.userId !== s.userId || g.scope.namespace !== s.namespace) continue;
    grants++;
    state.grants.delete(id);
  }
  return { ...kit.NOTHING_ERASED, beliefs, outboxEntries, auditEvents, operations, grants };
};

/** Deletes everything of every user. */
export const clearAll: Method<'clearAll'> = (state) => {
  const users = new Set<string>();
  for (const s of state.scopes.values()) users.add(s.scope.userId);
  for (const userId of state.entriesByUser.keys()) users.add(userId);
  for (const session of state.sessions.values()) users.add(session.owner.userId);
  for (const key of state.operations.keys()) users.add(String(JSON.parse(key)[0]));
  for (const g of state.grants.values()) users.add(g.scope.userId);
  for (const userId of state.budgets.keys()) users.add(userId);
  const receipt = kit.eraseEach(users, (userId) => eraseUser(state, userId));
  // Sessions with no recorded owner belong to no user; they go too.
  let ownerless = 0;
  for (const session of state.sessions.values()) ownerless += session.items.length;
  state.sessions.clear();
  return { ...receipt, transcriptItems: receipt.transcriptItems + ownerless };
};

export const listScopes: Method<'listScopes'> = (state) => {
  return kit.scopeSummaries(
    [...state.scopes.values()]
      .filter((s) => s.ids.length > 0)
      .flatMap((s) => Object.entries(s.counts).map(([status, n]) => ({ ...s.scope, status, n }))),
  );
};

export const auditLog: Method<'auditLog'> = (state, scope, { beliefId, limit }) => {
  const s = state.scope(scope);
  const out: AuditEvent[] = [];
  for (const a of s?.audit ?? []) {
    if (out.length >= limit) break;
    if (beliefId !== null && a.beliefId !== beliefId) continue;
    out.push({ ...a, scope: cloneScope(a.scope) });
  }
  return out;
};
