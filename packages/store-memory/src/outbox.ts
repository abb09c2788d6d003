/**
 * The outbox of the in-memory store: accepted turns per user in acceptance order, claims with leases, retries and
 * dead entries. Not durable: it is lost with the process.
 */

import { LeaseLostError, type OutboxInput } from '@mem01/engine';
import type { StoreInfo } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { cloneScope, type Entry, type MemoryState, type Method, push } from './state.js';

export const enqueue: Method<'enqueue'> = (state, inputs) => {
  return acceptEntries(state, inputs);
};

/** Adds checked turns; a turn whose idempotency key exists is a duplicate. */
export function acceptEntries(
  state: MemoryState,
  inputs: readonly OutboxInput[],
): { accepted: number; duplicates: number } {
  let accepted = 0;
  const acceptedAt = kit.isoNow();
  for (const input of inputs) {
    const key = kit.idempotencyKey(input.sessionId, input.position, input.text);
    if (state.entriesByKey.has(key)) continue;
    const entry: Entry = {
      id: kit.newId(),
      scope: kit.normalizeScope(input.scope),
      sessionId: input.sessionId,
      position: input.position,
      role: input.role,
      text: input.text,
      at: input.at,
      ref: input.ref,
      grantId: input.grantId,
      idempotencyKey: key,
      acceptedAt,
      seq: ++state.seq,
      attempts: 0,
      status: 'queued',
      lastError: null,
      claimId: null,
      worker: null,
      leaseUntil: 0,
      retryAt: 0,
    };
    state.entries.set(entry.id, entry);
    state.entriesByKey.set(key, entry);
    push(state.entriesByUser, entry.scope.userId, entry);
    push(state.liveByUser, entry.scope.userId, entry);
    accepted++;
  }
  return { accepted, duplicates: inputs.length - accepted };
}

export const claim: Method<'claim'> = (state, o) => {
  const now = o.now.ms;
  let chosen: Entry[] | null = null;
  if (o.userId !== null) {
    chosen = claimableHead(state, o.userId, now);
  } else {
    for (const userId of state.liveByUser.keys()) {
      const live = claimableHead(state, userId, now);
      if (live && (chosen === null || live[0]!.seq < chosen[0]!.seq)) chosen = live;
    }
  }
  if (!chosen) return null;
  // Expired leases of this user are taken over as a whole: their old claims are lost.
  for (const e of chosen) if (e.status === 'claimed') requeue(e, e.retryAt);
  const batch = kit
    .claimBatch(
      chosen.map((e) => ({ e, namespace: e.scope.namespace, text: e.text, grantId: e.grantId })),
      o,
      ({ e }) => e.retryAt <= now,
    )
    .map(({ e }) => e);
  const claimId = kit.newId();
  for (const e of batch) {
    e.status = 'claimed';
    e.claimId = claimId;
    e.worker = o.worker;
    e.leaseUntil = o.leaseUntil.ms;
  }
  return {
    claimId,
    worker: o.worker,
    scope: cloneScope(batch[0]!.scope),
    entries: batch.map(entryView),
    leaseUntil: o.leaseUntil.iso,
  };
};

export const renew: Method<'renew'> = (state, r) => {
  const entries = claimed(state, r.claimId, r.entryIds);
  if (!entries) throw new LeaseLostError();
  for (const e of entries) e.leaseUntil = r.leaseUntil.ms;
  return { leaseUntil: r.leaseUntil.iso };
};

export const fail: Method<'fail'> = (state, f) => {
  const entries = claimed(state, f.claimId, f.entryIds);
  if (!entries) return;
  for (const e of entries) {
    e.attempts += 1;
    e.lastError = f.lastError;
    if (e.attempts >= f.maxAttempts) finishEntry(state, e, 'dead');
    else requeue(e, f.retryAt?.ms ?? 0);
  }
};

export const release: Method<'release'> = (state, r) => {
  for (const e of claimed(state, r.claimId, r.entryIds) ?? []) requeue(e, r.retryAt.ms);
};

export const drop: Method<'drop'> = (state, d) => {
  const entries = claimed(state, d.claimId, d.entryIds);
  if (!entries) return;
  for (const e of entries) {
    e.lastError = d.reason;
    e.text = '';
    finishEntry(state, e, 'dead');
  }
};

export const backlog: Method<'backlog'> = (state, o) => {
  return countBacklog(state, o.now.ms, o.userId);
};

export function countBacklog(state: MemoryState, now: number, userId: string | null): StoreInfo['outbox'] {
  let queued = 0;
  let claimedCount = 0;
  let dead = 0;
  let staleLeases = 0;
  let next = Number.POSITIVE_INFINITY;
  const lists = userId === null ? [...state.entriesByUser.values()] : [state.entriesByUser.get(userId) ?? []];
  for (const list of lists) {
    for (const e of list) {
      if (e.status === 'queued') {
        queued++;
        if (e.retryAt > now) next = Math.min(next, e.retryAt);
      } else if (e.status === 'dead') dead++;
      else if (e.status === 'claimed') {
        claimedCount++;
        if (e.leaseUntil <= now) staleLeases++;
        else next = Math.min(next, e.leaseUntil);
      }
    }
  }
  const nextClaimableAt = next === Number.POSITIVE_INFINITY ? null : new Date(next).toISOString();
  return { queued, claimed: claimedCount, dead, staleLeases, nextClaimableAt };
}

/** The entries a commit completes; `LeaseLostError` unless `claimId` still holds every one. */
export function heldEntries(state: MemoryState, complete: kit.Checked<'commit'>[0]['complete']): Entry[] {
  if (complete === null) return [];
  return complete.entryIds.map((id) => {
    const e = state.entries.get(id);
    if (e?.status !== 'claimed' || e.claimId !== complete.claimId) throw new LeaseLostError();
    return e;
  });
}

export function finishEntry(state: MemoryState, e: Entry, status: 'done' | 'dead'): void {
  e.status = status;
  e.claimId = null;
  e.worker = null;
  if (status === 'done') e.text = '';
  const live = state.liveByUser.get(e.scope.userId);
  if (!live) return;
  const i = live.indexOf(e);
  if (i >= 0) live.splice(i, 1);
  if (live.length === 0) state.liveByUser.delete(e.scope.userId);
}

/** Erases the text of the user's turns named by forget's plan, wherever they are in the queue. */
export function eraseTurnText(state: MemoryState, userId: string, plan: kit.ForgetPlan['turns']): void {
  const turns = new Set(plan.map((e) => `${e.sessionId}\u0000${e.position}`));
  for (const e of state.entriesByUser.get(userId) ?? []) {
    if (turns.has(`${e.sessionId}\u0000${e.position}`)) e.text = '';
  }
}

/** The user's live entries when the user has nothing in flight and its oldest entry is due; else null. */
function claimableHead(state: MemoryState, userId: string, now: number): Entry[] | null {
  const live = state.liveByUser.get(userId);
  if (!live || live.length === 0) return null;
  for (const e of live) if (e.status === 'claimed' && e.leaseUntil > now) return null;
  if (live[0]!.retryAt > now) return null;
  return live;
}

/** The entries `claimId` still holds, or null when the claim was lost. */
function claimed(state: MemoryState, claimId: string, entryIds: readonly string[]): Entry[] | null {
  const held: Entry[] = [];
  for (const id of entryIds) {
    const e = state.entries.get(id);
    if (e?.status !== 'claimed' || e.claimId !== claimId) return null;
    held.push(e);
  }
  return held;
}

function requeue(e: Entry, retryAt: number): void {
  e.status = 'queued';
  e.claimId = null;
  e.worker = null;
  e.retryAt = retryAt;
}

function entryView(e: Entry): kit.OutboxEntry {
  return {
    id: e.id,
    scope: cloneScope(e.scope),
    sessionId: e.sessionId,
    position: e.position,
    role: e.role,
    text: e.text,
    at: e.at,
    ...(e.ref === undefined ? {} : { ref: e.ref }),
    ...(e.grantId === undefined ? {} : { grantId: e.grantId }),
    idempotencyKey: e.idempotencyKey,
    acceptedAt: e.acceptedAt,
    seq: e.seq,
    attempts: e.attempts,
    status: e.status,
    lastError: e.lastError,
  };
}
