/**
 * Outbox session ids and positions for what clients remember. The outbox skips a turn whose session id +
 * position + content hash it holds already, in every store and for every user alike (the key is global), so:
 * - every session id carries a digest of the scope: one user's text never deduplicates another's;
 * - a statement's position is a digest of its text and its session id names a ten-minute window, so the same
 *   statement retried (a lost response, a client retry, a second server) is skipped, and distinct statements
 *   never collide;
 * - within one server, a statement said again after a different one (A, B, A) is not a retry: it is accepted
 *   under the next free position, so the later A supersedes B as it should (across servers, within one window,
 *   the repeat counts as a retry: a server cannot tell it from one);
 * - a turn the client places in its own conversation (`conversationId` + `position`) keeps that position, so a
 *   retried turn is skipped and the same words at another position are not.
 * Positions stay within the engine's bound, `MAX_POSITION` (2^31 - 1).
 */
import { createHash } from 'node:crypto';
import { MAX_POSITION } from '@mem01/engine/store-kit';
import type { ServedScope } from './user-access.js';
/** Length of the retry window of statements. */
export const STATEMENT_WINDOW_MS = 10 * 60 * 1000;
/** Every session id this server writes starts with this, so provenance shows where a belief came from. */
export const SESSION_PREFIX = 'mcp:';

const MAX_TRACKED_SCOPES = 10_000;

export interface TurnKey {
  readonly sessionId: string;
  readonly position: number;
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

/** 96 bits of the scope: distinct users get distinct session ids beyond any search for a collision. */
export function scopeTag(scope: ServedScope): string {
  return digest(JSON.stringify(['mem01-mcp', scope.userId, scope.namespace])).slice(0, 24);
}

/** The session id of a turn of the client's own conversation. */
export function conversationSessionId(scope: ServedScope, conversationId: string): string {
  return `${SESSION_PREFIX}${scopeTag(scope)}:c:${conversationId}`;
}

/** The session id of statements remembered in the window holding `at`, e.g. `mcp:<tag>:20260501T1020Z`. */
export function statementSessionId(scope: ServedScope, at: Date): string {
  const start = new Date(Math.floor(at.getTime() / STATEMENT_WINDOW_MS) * STATEMENT_WINDOW_MS);
  const stamp = start.toISOString().slice(0, 16).replace(/[-:]/g, '');
  return `${SESSION_PREFIX}${scopeTag(scope)}:${stamp}Z`;
}

/** The position of a statement: a 31-bit digest of its text; `attempt` > 0 for a statement said again. */
export function statementPosition(text: string, attempt = 0): number {
  return Number.parseInt(digest(`${attempt}\u0000${text}`).slice(0, 8), 16) & MAX_POSITION;
}

/**
 * Chooses keys for statements and remembers, per scope, the last statement this server accepted in the current
 * window, to tell a retry from a statement said again. Calls for one scope are serialised by {@link run}.
 */
export class StatementKeys {
  /**
   * Per scope, for the current window: digests of the statements this server accepted, and the last one.
   * Oldest scopes are dropped past a cap.
   */
  readonly #seen = new Map<string, { sessionId: string; last: string; accepted: Set<string> }>();
  readonly #chains = new Map<string, Promise<unknown>>();

  /**
   * Accepts `text` for `scope` through `enqueue` (which reports whether the key was new), trying further
   * positions while the statement is one said again rather than retried. Returns the key used and whether the
   * statement was a retry (nothing new accepted).
   */
  run(
    scope: ServedScope,
    text: string,
    at: Date,
    enqueue: (key: TurnKey) => Promise<boolean>,
  ): Promise<{ key: TurnKey; duplicate: boolean }> {
    const id = `${scope.userId}\u0000${scope.namespace}`;
    const previous = this.#chains.get(id) ?? Promise.resolve();
    const next = previous.then(
      () => this.#accept(id, scope, text, at, enqueue),
      () => this.#accept(id, scope, text, at, enqueue),
    );
    this.#chains.set(id, next);
    // The map keeps only the newest link of the chain; drop it once idle so it does not grow with users.
    void next.then(
      () => this.#chains.get(id) === next && this.#chains.delete(id),
      () => this.#chains.get(id) === next && this.#chains.delete(id),
    );
    return next;
  }

  async #accept(
    id: string,
    scope: ServedScope,
    text: string,
    at: Date,
    enqueue: (key: TurnKey) => Promise<boolean>,
  ): Promise<{ key: TurnKey; duplicate: boolean }> {
    const sessionId = statementSessionId(scope, at);
    const textDigest = digest(text);
    let seen = this.#seen.get(id);
    if (seen?.sessionId !== sessionId) seen = { sessionId, last: '', accepted: new Set() };
    // Said again: this server accepted it earlier in the window, and something else since. Anything else that
    // meets a duplicate key is a retry (of this server's last statement, or of one another server accepted).
    const saidAgain = seen.accepted.has(textDigest) && seen.last !== textDigest;
    for (let attempt = 0; attempt < 64; attempt++) {
      const key = { sessionId, position: statementPosition(text, attempt) };
      if (await enqueue(key)) {
        seen.last = textDigest;
        seen.accepted.add(textDigest);
        this.#seen.delete(id);
        this.#seen.set(id, seen);
        if (this.#seen.size > MAX_TRACKED_SCOPES) this.#seen.delete(this.#seen.keys().next().value as string);
        return { key, duplicate: false };
      }
      if (!saidAgain) return { key, duplicate: true };
    }
    // Sixty-four repeats of one statement in ten minutes: treat as a retry rather than loop on.
    return { key: { sessionId, position: statementPosition(text, 0) }, duplicate: true };
  }
}
