/**
 * Outbox session ids and positions for what clients remember. The outbox skips a turn whose session id +
 * position + content hash it holds already, in every store and for every user alike (the key is global), so:
 * - every session id carries a digest of the scope: one user's text never deduplicates another's;
 * - a statement's session id names a ten-minute window and its position is a digest of its text and its time
 *   (`at`), so the same statement sent again with the same `at` (a lost response, a client retry, a second server)
 *   is skipped, and distinct statements never collide;
 * - a retry without `at` gets a new position: the engine's repeat rule (`accept`'s `skipRepeats`) skips it when it
 *   repeats the window's previous statement, while the same words said again after another statement (A, B, A)
 *   are accepted, so the later A supersedes B as it should;
 * - a turn the client places in its own conversation (`sessionId` + `position`) keeps that position, so a
 *   retried turn is skipped and the same words at another position are not.
 * Positions stay within the engine's bound, `MAX_POSITION` (2^31 - 1).
 */
import { createHash } from 'node:crypto';
import { MAX_POSITION } from '@mem01/engine/binding-kit';
import type { ServedScope } from './user-access.js';
/** Length of the retry window of statements. */
export const STATEMENT_WINDOW_MS = 10 * 60 * 1000;
/** Every session id this server writes starts with this, so provenance shows where a belief came from. */
export const SESSION_PREFIX = 'mcp:';

export interface TurnKey {
  readonly sessionId: string;
  readonly position: number;
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** 96 bits of the scope: distinct users get distinct session ids beyond any search for a collision. */
export function scopeTag(scope: ServedScope): string {
  return digest(JSON.stringify(['mem01-mcp', scope.userId, scope.namespace])).slice(0, 24);
}

/** The stored session id of a turn of the client's own conversation (the client's `sessionId`). */
export function clientSessionId(scope: ServedScope, sessionId: string): string {
  return `${SESSION_PREFIX}${scopeTag(scope)}:c:${sessionId}`;
}

/**
 * The stored session id a client names a conversation by, in `summarize_conversation` and `list_memories`: one of
 * this user's stored ids (`mcp:<tag>:…`, as `add_memory` returns it and evidence names it) as it is, any other id as
 * the client's own (`add_memory`'s `sessionId`). Another user's stored id is the client's own id like any other, so it
 * never names that user's conversation (and the scope would keep it out anyway).
 */
export function storedSessionId(scope: ServedScope, sessionId: string): string {
  return sessionId.startsWith(`${SESSION_PREFIX}${scopeTag(scope)}:`)
    ? sessionId
    : clientSessionId(scope, sessionId);
}

/** The session id of statements remembered in the window holding `at`, e.g. `mcp:<tag>:20260501T1020Z`. */
export function statementSessionId(scope: ServedScope, at: Date): string {
  const start = new Date(Math.floor(at.getTime() / STATEMENT_WINDOW_MS) * STATEMENT_WINDOW_MS);
  const stamp = start.toISOString().slice(0, 16).replace(/[-:]/g, '');
  return `${SESSION_PREFIX}${scopeTag(scope)}:${stamp}Z`;
}

/** The position of a statement: a 31-bit digest of its text and when it was said. */
export function statementPosition(text: string, at: Date): number {
  return Number.parseInt(digest(`${at.toISOString()}\u0000${text}`).slice(0, 8), 16) & MAX_POSITION;
}
