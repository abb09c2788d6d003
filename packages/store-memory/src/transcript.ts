/**
 * Transcripts of the in-memory store: each session keeps its owner (the scope of its first append) and its items
 * as JSON text, so reads return fresh copies. The contract checks are the store kit's.
 */

import * as kit from '@mem01/engine/store-kit';
import { acceptEntries } from './outbox.js';
import { type MemoryState, type Method, push, type Session } from './state.js';

export const appendItems: Method<'appendItems'> = (state, append) => {
  const session = state.sessions.get(append.sessionId);
  if (session) kit.assertSessionOwner(append.owner, session.owner);
  if (append.operationId !== null) {
    const done = session?.operations.get(append.operationId);
    if (done) {
      if (done.fingerprint !== append.fingerprint) throw kit.operationConflictError();
      return { positions: [...done.positions], duplicate: true };
    }
  }
  const current = session?.items ?? [];
  let keep = current.length;
  if (append.replaceSuffix !== null) {
    const suffix = append.replaceSuffix;
    keep = current.length - suffix.length;
    if (keep < 0 || !kit.suffixMatches(current.slice(keep), suffix)) throw kit.suffixMismatchError();
  }
  const positions = append.items.map((_, i) => keep + i);
  const turns = kit.appendTurns(append, positions);

  // Valid: apply.
  const target: Session = session ?? { owner: append.owner, items: [], operations: new Map() };
  if (!session) state.sessions.set(append.sessionId, target);
  target.items.length = keep;
  target.items.push(...append.items);
  if (append.operationId !== null)
    target.operations.set(append.operationId, { fingerprint: append.fingerprint, positions });
  acceptEntries(state, turns);
  return { positions: [...positions], duplicate: false };
};

export const getItems: Method<'getItems'> = (state, call) => {
  const items = ownedSession(state, call)?.items ?? [];
  const from = call.limit === null ? 0 : Math.max(0, items.length - call.limit);
  return call.limit === 0 ? [] : items.slice(from).map(kit.decodeItem);
};

export const popItem: Method<'popItem'> = (state, call) => {
  const last = changeableSession(state, call)?.items.pop();
  return last === undefined ? undefined : kit.decodeItem(last);
};

export const clearSession: Method<'clearSession'> = (state, call) => {
  const session = changeableSession(state, call);
  if (!session) return;
  session.items = [];
  session.operations.clear();
};

/**
 * The engine's forget policy for transcripts ({@link kit.redactTranscriptItem}): the plan's turns (evidence turns and
 * the turns of forgotten episodes) lose their text, the user's other items each occurrence of the plan's needles.
 * Sessions of other users are never touched.
 */
export function redactTranscripts(state: MemoryState, userId: string, plan: kit.ForgetPlan): void {
  const { needles } = plan;
  const whole = new Map<string, number[]>();
  for (const t of plan.turns) push(whole, t.sessionId, t.position);
  for (const [id, session] of state.sessions) {
    if (session.owner.userId !== userId) continue;
    const turns = new Set(whole.get(id) ?? []);
    session.items = session.items.map((text, position) => {
      const isWhole = turns.has(position);
      if (!isWhole && !kit.mayContainNeedle(text, needles)) return text;
      const next = kit.redactTranscriptItem(kit.decodeItem(text), { whole: isWhole, needles });
      return next === null ? text : JSON.stringify(next);
    });
  }
}

/** The session when the caller's scope owns it; undefined when it does not exist or is another scope's. */
function ownedSession(
  state: MemoryState,
  call: { readonly owner: Parameters<typeof kit.mayUseSession>[0]; readonly sessionId: string },
): Session | undefined {
  const session = state.sessions.get(call.sessionId);
  return session && kit.mayUseSession(call.owner, session.owner) ? session : undefined;
}

/** The session to change: undefined when it does not exist; another scope's session is refused, as appends are. */
function changeableSession(
  state: MemoryState,
  call: { readonly owner: Parameters<typeof kit.mayUseSession>[0]; readonly sessionId: string },
): Session | undefined {
  const session = state.sessions.get(call.sessionId);
  if (session) kit.assertSessionOwner(call.owner, session.owner);
  return session;
}
