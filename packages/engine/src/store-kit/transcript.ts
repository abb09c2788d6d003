/**
 * The {@link TranscriptStore} contract checks, written once: the owner scope, the item encoding (one size cap), the
 * `appendItems` arguments and the turns an append enqueues. A store keeps only its storage: where a session's owner
 * and items live, and how an append is made atomic.
 */
import { InvalidInputError } from '../errors.js';
import type { AppendEnqueue, OutboxInput, TranscriptStore } from '../ports.js';
import {
  assertId,
  assertText,
  contentHash,
  normalizeScope,
  stableJson,
  typeOf,
  utf8Length,
} from '../util.js';
import { snapshotItem } from './transcript-item.js';
import { assertPosition, validateOutboxInput } from './validate.js';

/** A scope with its namespace resolved ('' when absent), as stores key it. */
export interface CanonicalScope {
  readonly userId: string;
  readonly namespace: string;
}

/** The largest transcript item, serialised as JSON: 16 MiB of UTF-8. */
export const MAX_ITEM_BYTES = 16 * 1024 * 1024;
/** The largest operation fingerprint, in UTF-8 bytes. */
export const MAX_FINGERPRINT_BYTES = 4096;

/** The owner scope of a transcript call, canonical; `InvalidInputError` naming `owner` when it is not a scope. */
export function ownerScope(owner: unknown): CanonicalScope {
  if (owner === null || typeof owner !== 'object')
    throw new InvalidInputError('owner', `must be a scope ({ userId, namespace? }), got ${typeOf(owner)}`);
  const { userId, namespace } = owner as { userId?: unknown; namespace?: unknown };
  assertId(userId, 'owner.userId');
  if (namespace !== undefined && namespace !== null && namespace !== '')
    assertId(namespace, 'owner.namespace');
  return normalizeScope(owner);
}

/** Does `owner` (canonical) own a session recorded with this owner? A session with no recorded owner is open. */
export function mayUseSession(
  owner: CanonicalScope,
  recorded: { readonly userId: string | null; readonly namespace: string | null } | null | undefined,
): boolean {
  if (!recorded || recorded.userId === null) return true;
  return recorded.userId === owner.userId && (recorded.namespace ?? '') === owner.namespace;
}

/**
 * Throws the error of a call on another scope's session unless `owner` (canonical) may use a session recorded with
 * this owner (a session with no recorded owner is open).
 */
export function assertSessionOwner(
  owner: CanonicalScope,
  recorded: { readonly userId: string | null; readonly namespace: string | null } | null | undefined,
): void {
  if (!mayUseSession(owner, recorded)) throw foreignSessionError();
}

/** The error a call on another scope's session throws. */
function foreignSessionError(): InvalidInputError {
  return new InvalidInputError(
    'owner',
    'the session id is already used by another user or namespace of this store (a session belongs to the scope of its first append); give each user their own session ids, for example prefixed with the user id',
  );
}

/** The error a repeated operation id with another fingerprint throws. */
export function operationConflictError(): InvalidInputError {
  return new InvalidInputError('operationId', 'was already applied with a different fingerprint');
}

/** The error a `replaceSuffix` that is not the end of the session throws. */
export function suffixMismatchError(): InvalidInputError {
  return new InvalidInputError('replaceSuffix', 'does not match the last items of the session');
}

/**
 * One item as stored: its JSON text, at most {@link MAX_ITEM_BYTES}. Only a plain JSON object is stored (see
 * {@link snapshotItem}), so what a read returns is what was given. NUL and every other character round-trip.
 */
export function encodeItem(item: unknown, field: string): string {
  const json = JSON.stringify(snapshotItem(item, field));
  // UTF-8 is at most 3 bytes per UTF-16 unit: only long texts need counting.
  if (json.length * 3 > MAX_ITEM_BYTES && utf8Length(json) > MAX_ITEM_BYTES)
    throw new InvalidInputError(field, `is over the limit of ${MAX_ITEM_BYTES} bytes`);
  return json;
}

/** A stored item back as a fresh copy. */
export function decodeItem(json: string): unknown {
  return JSON.parse(json) as unknown;
}

/** Are the stored items (encoded, oldest first) the expected suffix (as {@link ValidAppend.replaceSuffix})? */
export function suffixMatches(stored: readonly string[], suffix: readonly string[]): boolean {
  return (
    stored.length === suffix.length && stored.every((json, i) => stableJson(decodeItem(json)) === suffix[i])
  );
}

/** An `appendItems` call, checked and canonical. */
export interface ValidAppend {
  readonly owner: CanonicalScope;
  readonly sessionId: string;
  /** The items, each encoded by {@link encodeItem}. */
  readonly items: readonly string[];
  readonly operationId: string | null;
  /** The caller's fingerprint, or a hash of the whole append (items, suffix, turns, owner) when none was given. */
  readonly fingerprint: string;
  /** {@link stableJson} of each item to replace, oldest first; null without `replaceSuffix`. */
  readonly replaceSuffix: readonly string[] | null;
  /** The turns to enqueue, canonical; their positions are the appended items' ({@link appendTurns}). */
  readonly enqueue: readonly AppendEnqueue[];
}

/**
 * Checks the arguments of {@link TranscriptStore.appendItems}: the owner, the session id, every item (encoded, one
 * size cap), the operation id and fingerprint, `replaceSuffix`, and each turn to enqueue (an index into `items`, and
 * the outbox's own checks with `maxTextBytes`). Throws `InvalidInputError` on the first problem.
 */
export function validateAppend(
  owner: unknown,
  sessionId: unknown,
  items: unknown,
  options: Parameters<TranscriptStore['appendItems']>[3],
  maxTextBytes: number,
): ValidAppend {
  const scope = ownerScope(owner);
  assertId(sessionId, 'sessionId');
  if (!Array.isArray(items)) throw new InvalidInputError('items', `must be an array, got ${typeOf(items)}`);
  const encoded = items.map((item, i) => encodeItem(item, `items[${i}]`));
  const o = options ?? {};
  if (o === null || typeof o !== 'object') throw new InvalidInputError('options', 'must be an object');
  if (o.operationId !== undefined) assertId(o.operationId, 'operationId');
  if (o.operationFingerprint !== undefined)
    assertText(o.operationFingerprint, 'operationFingerprint', MAX_FINGERPRINT_BYTES);
  let suffix: string[] | null = null;
  if (o.replaceSuffix !== undefined) {
    if (!Array.isArray(o.replaceSuffix)) throw new InvalidInputError('replaceSuffix', 'must be an array');
    suffix = o.replaceSuffix.map((item, i) =>
      stableJson(decodeItem(encodeItem(item, `replaceSuffix[${i}]`))),
    );
  }
  const rawEnqueue = o.enqueue ?? [];
  if (!Array.isArray(rawEnqueue)) throw new InvalidInputError('enqueue', 'must be an array');
  const enqueue = rawEnqueue.map((e: unknown, i): AppendEnqueue => {
    const field = `enqueue[${i}]`;
    if (e === null || typeof e !== 'object') throw new InvalidInputError(field, 'must be an object');
    const turn = e as AppendEnqueue;
    if (!Number.isInteger(turn.index) || turn.index < 0 || turn.index >= encoded.length) {
      throw new InvalidInputError(
        `${field}.index`,
        `must index the appended items (0..${encoded.length - 1}), got ${String(turn.index)}`,
      );
    }
    const valid = validateOutboxInput({ ...turn, scope, sessionId, position: 0 }, field, maxTextBytes);
    return {
      index: turn.index,
      role: valid.role,
      text: valid.text,
      at: valid.at,
      ...(valid.ref === undefined ? {} : { ref: valid.ref }),
      ...(valid.grantId === undefined ? {} : { grantId: valid.grantId }),
    };
  });
  // The grant a turn is accepted under is not part of the request: a retry under another grant is the same append.
  const turns = enqueue.map(({ grantId: _grantId, ...turn }) => turn);
  const fingerprint =
    o.operationFingerprint ??
    contentHash(stableJson({ items: encoded, suffix, enqueue: turns, owner: scope }));
  return {
    owner: scope,
    sessionId,
    items: encoded,
    operationId: o.operationId ?? null,
    fingerprint,
    replaceSuffix: suffix,
    enqueue,
  };
}

/** The outbox turns of an append, each at the position its item was given. */
export function appendTurns(append: ValidAppend, positions: readonly number[]): OutboxInput[] {
  return append.enqueue.map((e, i) => {
    const position = positions[e.index];
    assertPosition(position, `enqueue[${i}].position`);
    return {
      scope: append.owner,
      sessionId: append.sessionId,
      position,
      role: e.role,
      text: e.text,
      at: e.at,
      ...(e.ref === undefined ? {} : { ref: e.ref }),
      ...(e.grantId === undefined ? {} : { grantId: e.grantId }),
    };
  });
}

/**
 * Checks the arguments of `getItems`, `popItem` and `clearSession`. `limit` comes back as the number of newest
 * items to return (whole numbers, 0 when none: the caller returns [] without reading), or null for all of them.
 */
export function validateSessionCall(
  owner: unknown,
  sessionId: unknown,
  limit?: unknown,
): { owner: CanonicalScope; sessionId: string; limit: number | null } {
  const scope = ownerScope(owner);
  assertId(sessionId, 'sessionId');
  if (limit === undefined || limit === Number.POSITIVE_INFINITY)
    return { owner: scope, sessionId, limit: null };
  if (typeof limit !== 'number' || Number.isNaN(limit))
    throw new InvalidInputError('limit', `must be a number, got ${typeOf(limit)}`);
  return { owner: scope, sessionId, limit: limit <= 0 ? 0 : Math.floor(limit) };
}
