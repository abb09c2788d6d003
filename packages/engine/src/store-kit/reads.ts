/**
 * Checks of the read calls of the {@link BeliefStore} port, and the one list cursor every store hands out: what a
 * caller passes is refused the same way on every store, and a cursor is the same opaque string everywhere.
 */
import { isBeliefKind } from '../belief.js';
import { InvalidInputError } from '../errors.js';
import type { ListOptions, ScopeSummary, SearchOptions } from '../ports.js';
import { contentWords } from '../text.js';
import {
  BELIEF_STATUSES,
  type Belief,
  type BeliefKind,
  type BeliefStatus,
  type Page,
  type Scope,
} from '../types.js';
import { assertId, assertText, normalizeScope, typeOf } from '../util.js';
import {
  assertExcludedGrants,
  assertPositiveInteger,
  assertStatuses,
  MAX_KEY_BYTES,
  validateEmbedding,
  validateSearchOptions,
} from './validate.js';

/** Default and largest page size of `list`. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
/** At most this many distinct query terms are searched for, so a pasted essay cannot build a huge query. */
export const MAX_QUERY_TERMS = 64;
/** Default and largest `limit` of `auditLog`. */
export const DEFAULT_AUDIT_LIMIT = 10_000;
export const MAX_AUDIT_LIMIT = 100_000;

/** The `nextCursor` of a page that ends with the belief `lastId` (beliefs are listed by id, descending). */
export function encodeListCursor(lastId: string): string {
  return base64url(JSON.stringify({ before: lastId }));
}

/** The id a cursor continues before; `InvalidInputError` for anything `list` did not hand out. */
export function decodeListCursor(cursor: unknown): string {
  if (typeof cursor !== 'string')
    throw new InvalidInputError('cursor', `must be a string, got ${typeOf(cursor)}`);
  try {
    const parsed = JSON.parse(fromBase64url(cursor)) as { before?: unknown };
    assertId(parsed.before, 'cursor');
    return parsed.before;
  } catch {
    throw new InvalidInputError('cursor', 'is not a cursor returned by list()');
  }
}

/**
 * `list` options, checked: statuses (default active), page size (1..1000, default 100), the cursor's id, the grants
 * whose beliefs to leave out, and the kinds (null: any) and evidence session (null: any) to keep.
 */
export function validateListOptions(options: ListOptions | undefined): {
  statuses: BeliefStatus[];
  limit: number;
  before: string | null;
  excludeGrants: string[];
  kinds: BeliefKind[] | null;
  sessionId: string | null;
} {
  const o = options ?? {};
  if (o === null || typeof o !== 'object') throw new InvalidInputError('options', 'must be an object');
  const limit = o.limit ?? DEFAULT_LIST_LIMIT;
  assertPositiveInteger(limit, 'limit', MAX_LIST_LIMIT);
  const before = o.cursor === undefined || o.cursor === null ? null : decodeListCursor(o.cursor);
  let kinds: BeliefKind[] | null = null;
  if (o.kinds !== undefined) {
    if (!Array.isArray(o.kinds) || o.kinds.length === 0)
      throw new InvalidInputError('kinds', 'must be a non-empty array of belief kinds');
    for (const k of o.kinds)
      if (!isBeliefKind(k))
        throw new InvalidInputError('kinds', `unknown kind ${JSON.stringify(k) ?? 'undefined'}`);
    kinds = [...new Set(o.kinds as BeliefKind[])];
  }
  if (o.sessionId !== undefined) assertId(o.sessionId, 'sessionId');
  return {
    statuses: assertStatuses(o.statuses),
    limit,
    before,
    excludeGrants: assertExcludedGrants(o.excludeGrants),
    kinds,
    sessionId: o.sessionId ?? null,
  };
}

/** A page from the first `limit + 1` matching beliefs, newest first: a cursor only when there is more. */
export function listPage<T extends { readonly id: string }>(fetched: readonly T[], limit: number): Page<T> {
  const items = fetched.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: fetched.length > limit && last ? encodeListCursor(last.id) : null };
}

/**
 * The words a lexical search looks for: the engine's content words of the literal query (NFKC, lower case, runs of
 * letters and digits, possessive 's dropped, stop words removed; no character is ever syntax), each once, at most
 * {@link MAX_QUERY_TERMS}. The engine passes content words already, so this is the identity on its queries. Each
 * store then applies only its index's own stemming. Throws `InvalidInputError` when `query` is not a string.
 */
export function queryTerms(query: unknown): string[] {
  if (typeof query !== 'string')
    throw new InvalidInputError('query', `must be a string, got ${typeOf(query)}`);
  return [...new Set(contentWords(query))].slice(0, MAX_QUERY_TERMS);
}

/**
 * The words a store that tokenises its documents itself indexes, in order, with repeats: the same splitting as
 * {@link queryTerms}, so a document and a query meet on the same words.
 */
export function indexWords(text: string): string[] {
  return contentWords(text);
}

/** A query vector, checked: a non-empty `Float32Array` of finite numbers (its length is the store's to check). */
export function validateQueryVector(vector: unknown): Float32Array {
  const v = validateEmbedding(vector, 'vector');
  if (v === null) throw new InvalidInputError('vector', 'must be a Float32Array');
  return v;
}

/** `getActiveByKeys` keys, checked: an array of `{ subject, attribute }`, each a non-empty key of at most 256 bytes. */
export function validateKeys(keys: unknown): { subject: string; attribute: string }[] {
  if (!Array.isArray(keys)) throw new InvalidInputError('keys', `must be an array, got ${typeOf(keys)}`);
  return keys.map((k: unknown, i) => {
    if (k === null || typeof k !== 'object') throw new InvalidInputError(`keys[${i}]`, 'must be an object');
    const { subject, attribute } = k as { subject?: unknown; attribute?: unknown };
    assertText(subject, `keys[${i}].subject`, MAX_KEY_BYTES);
    assertText(attribute, `keys[${i}].attribute`, MAX_KEY_BYTES);
    return { subject, attribute };
  });
}

/** A list of ids (`getEmbeddings`), checked. */
export function validateIds(ids: unknown, field = 'ids'): string[] {
  if (!Array.isArray(ids)) throw new InvalidInputError(field, `must be an array, got ${typeOf(ids)}`);
  ids.forEach((id, i) => {
    assertId(id, `${field}[${i}]`);
  });
  return [...(ids as string[])];
}

/** `history` options, checked: the id whose chain to follow, or null for the whole scope. */
export function validateHistoryOptions(
  options: { readonly id?: string | undefined } | undefined,
): string | null {
  const id = options?.id;
  if (id === undefined) return null;
  assertId(id, 'id');
  return id;
}

/** `auditLog` options, checked: a belief id or null, and `limit` 1..100 000 (default 10 000). */
export function validateAuditOptions(
  options: { readonly beliefId?: string; readonly limit?: number } | undefined,
): { beliefId: string | null; limit: number } {
  const o = options ?? {};
  if (o.beliefId !== undefined) assertId(o.beliefId, 'beliefId');
  const limit = o.limit ?? DEFAULT_AUDIT_LIMIT;
  assertPositiveInteger(limit, 'limit', MAX_AUDIT_LIMIT);
  return { beliefId: o.beliefId ?? null, limit };
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): string {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** History order (oldest first): `storedAt`, then id. */
export function historyOrder(a: Belief, b: Belief): number {
  return cmp(a.storedAt, b.storedAt) || cmp(a.id, b.id);
}

/** Search order: best score first, ties by id descending (newest first). */
export function hitOrder(a: { belief: Belief; score: number }, b: { belief: Belief; score: number }): number {
  return b.score - a.score || cmp(b.belief.id, a.belief.id);
}

/** `listScopes` from counts by scope and status: every status present (0 when none), sorted by user, namespace. */
export function scopeSummaries(
  counts: Iterable<{
    readonly userId: string;
    readonly namespace: string;
    readonly status: string;
    readonly n: number;
  }>,
): ScopeSummary[] {
  const byScope = new Map<string, { scope: Scope; counts: Record<BeliefStatus, number> }>();
  for (const c of counts) {
    const key = JSON.stringify([c.userId, c.namespace]);
    let entry = byScope.get(key);
    if (!entry) {
      const zero = Object.fromEntries(BELIEF_STATUSES.map((s) => [s, 0])) as Record<BeliefStatus, number>;
      entry = { scope: { userId: c.userId, namespace: c.namespace }, counts: zero };
      byScope.set(key, entry);
    }
    entry.counts[c.status as BeliefStatus] = c.n;
  }
  return [...byScope.values()].sort(
    (a, b) => cmp(a.scope.userId, b.scope.userId) || cmp(a.scope.namespace ?? '', b.scope.namespace ?? ''),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `searchLexical` arguments, checked: the scope, the query's terms ({@link queryTerms}), limit and statuses. */
export function validateLexicalSearch(scope: unknown, query: unknown, options: SearchOptions) {
  return { scope: normalizeScope(scope), terms: queryTerms(query), ...validateSearchOptions(options) };
}

/** `searchVector` arguments, checked: the scope, the query vector ({@link validateQueryVector}), limit, statuses. */
export function validateVectorSearch(scope: unknown, vector: unknown, options: SearchOptions) {
  return {
    scope: normalizeScope(scope),
    vector: validateQueryVector(vector),
    ...validateSearchOptions(options),
  };
}
