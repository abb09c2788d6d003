/**
 * The in-memory store's data: beliefs by scope with their indexes, outbox entries by user, transcript sessions.
 * Records are private copies, copied in and out; every role module (beliefs, searches, outbox, transcript, admin)
 * works on one {@link MemoryState}.
 */

import {
  type AuditEvent,
  type Belief,
  type BeliefStatus,
  type CaptureGrant,
  ClosedError,
  DimensionMismatchError,
  type Scope,
  type TurnRole,
} from '@mem01/engine';
import type { OperationRecord, OutboxEntry } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import { LexicalIndex } from './lexical-index.js';
import { VectorIndex } from './vector-index.js';

/** A scope with its namespace resolved ('' when absent), as the store kit hands it over. */
export type CanonicalScope = Readonly<Required<Scope>>;

/** Upper bound on any stored text field (a store limit, not policy: the engine enforces its own smaller limit). */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** A port method of this store: a function of its state (see the store kit's `StoreMethod`). */
export type Method<K extends kit.RoleMethod> = kit.StoreMethod<MemoryState, K, true>;

/** One stored belief. `belief` is a private copy that is replaced, never mutated, on change. */
export interface Row {
  belief: Belief;
  readonly scope: ScopeState;
}

export interface ScopeState {
  readonly scope: CanonicalScope;
  readonly key: string;
  /** Ids in ascending order (ids are time-ordered, so appends are the common case). */
  readonly ids: string[];
  readonly counts: Record<BeliefStatus, number>;
  /** subject + attribute → id of the one active belief. */
  readonly active: Map<string, string>;
  readonly lexical: LexicalIndex<Row>;
  vectors: VectorIndex<Row> | null;
  readonly audit: AuditEvent[];
}

export interface Entry {
  readonly id: string;
  readonly scope: CanonicalScope;
  readonly sessionId: string;
  readonly position: number;
  readonly role: TurnRole;
  text: string;
  readonly at: string;
  readonly ref: string | undefined;
  /** The capture grant the turn was accepted under, if any. */
  readonly grantId: string | undefined;
  readonly idempotencyKey: string;
  readonly acceptedAt: string;
  readonly seq: number;
  attempts: number;
  status: OutboxEntry['status'];
  lastError: string | null;
  claimId: string | null;
  worker: string | null;
  leaseUntil: number;
  retryAt: number;
}

export interface Session {
  /** The scope of the first append; it keeps the session when it is emptied or cleared. */
  readonly owner: CanonicalScope;
  items: string[];
  readonly operations: Map<string, { readonly fingerprint: string; readonly positions: readonly number[] }>;
}

export function scopeKey(scope: CanonicalScope): string {
  return JSON.stringify([scope.userId, scope.namespace]);
}

export const keyOf = (subject: string, attribute: string): string => `${subject}\u0000${attribute}`;

export function cloneScope(scope: Scope): CanonicalScope {
  return { userId: scope.userId, namespace: scope.namespace ?? '' };
}

export function cloneBelief(b: Belief): Belief {
  return { ...b, scope: cloneScope(b.scope), evidence: b.evidence.map((e) => ({ ...e })) };
}

export function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** First index whose id is >= `id` in an ascending array. */
export function lowerBound(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function indexedText(b: Belief): string {
  return `${b.statement}\n${b.value}\n${b.subject.replace(/_/g, ' ')}\n${b.attribute.replace(/[_:]/g, ' ')}`;
}

export class MemoryState {
  /** Fixed embedding dimension, or null until the first embedding fixes it. */
  dimensions: number | null;
  readonly rows = new Map<string, Row>();
  readonly scopes = new Map<string, ScopeState>();
  readonly entries = new Map<string, Entry>();
  readonly entriesByKey = new Map<string, Entry>();
  /** userId → every entry of the user, in acceptance order. */
  readonly entriesByUser = new Map<string, Entry[]>();
  /** userId → queued and claimed entries of the user, in acceptance order. */
  readonly liveByUser = new Map<string, Entry[]>();
  seq = 0;
  readonly sessions = new Map<string, Session>();
  /** Scope key → operation key → its record. */
  readonly operations = new Map<string, Map<string, OperationRecord>>();
  /** Grant id → grant (scope canonical). */
  readonly grants = new Map<string, CaptureGrant & { readonly scope: CanonicalScope }>();
  /** userId → the user's budget window and its counters (earlier windows are dropped). */
  readonly budgets = new Map<string, { windowStart: string; used: Map<string, number> }>();
  closed = false;

  constructor(dimensions: number | null) {
    this.dimensions = dimensions;
  }

  /** Throws `ClosedError` once the store is closed. */
  assertOpen(): void {
    if (this.closed) throw new ClosedError('memory store');
  }

  /** The scope's state, or undefined when nothing was ever stored in it. */
  scope(scope: CanonicalScope): ScopeState | undefined {
    return this.scopes.get(scopeKey(scope));
  }

  /** The scope's state, created when missing. */
  scopeState(scope: CanonicalScope): ScopeState {
    const key = scopeKey(scope);
    let state = this.scopes.get(key);
    if (!state) {
      state = {
        scope: cloneScope(scope),
        key,
        ids: [],
        counts: { active: 0, pending: 0, superseded: 0, retracted: 0, forgotten: 0 },
        active: new Map(),
        lexical: new LexicalIndex<Row>(),
        vectors: null,
        audit: [],
      };
      this.scopes.set(key, state);
    }
    return state;
  }

  /** Throws `DimensionMismatchError` unless every embedding has the store's (or the first one's) length. */
  checkDimensions(records: readonly { embedding: Float32Array | null }[]): void {
    let dims = this.dimensions;
    for (const r of records) {
      if (r.embedding === null) continue;
      if (dims === null) dims = r.embedding.length;
      else if (r.embedding.length !== dims) throw new DimensionMismatchError(dims, r.embedding.length);
    }
  }

  insertRow(state: ScopeState, belief: Belief, embedding: Float32Array | null): void {
    const row: Row = { belief, scope: state };
    this.rows.set(belief.id, row);
    const ids = state.ids;
    if (ids.length === 0 || ids[ids.length - 1]! < belief.id) ids.push(belief.id);
    else ids.splice(lowerBound(ids, belief.id), 0, belief.id);
    state.counts[belief.status] += 1;
    if (belief.status === 'active') state.active.set(keyOf(belief.subject, belief.attribute), belief.id);
    if (belief.status === 'forgotten') return;
    state.lexical.add(row, indexedText(belief));
    if (embedding !== null) {
      if (this.dimensions === null) this.dimensions = embedding.length;
      state.vectors ??= new VectorIndex<Row>(this.dimensions);
      state.vectors.set(row, kit.normalizeVector(embedding));
    }
  }

  replaceBelief(row: Row, next: Belief): void {
    const state = row.scope;
    const prev = row.belief;
    state.counts[prev.status] -= 1;
    state.counts[next.status] += 1;
    const key = keyOf(prev.subject, prev.attribute);
    if (prev.status === 'active' && state.active.get(key) === prev.id) state.active.delete(key);
    if (next.status === 'active') state.active.set(keyOf(next.subject, next.attribute), next.id);
    if (next.status === 'forgotten') {
      state.lexical.remove(row);
      state.vectors?.remove(row);
    }
    row.belief = next;
  }
}
