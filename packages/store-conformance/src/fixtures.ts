import {
  type AuditEvent,
  type Belief,
  type BeliefKind,
  type CaptureGrant,
  createBelief,
  type EngineStore,
  type Evidence,
  type FullStore,
  type Mem01Error,
  MemoryEngine,
  type MemoryEngineOptions,
  type OutboxInput,
  type Scope,
} from '@mem01/engine';
import type { BeliefInsert } from '@mem01/engine/store-kit';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { expect } from 'vitest';
import type { SuiteContext } from './context.js';

/** The records of the port calls the suite makes (the store kit publishes only their checked forms). */
export type CommitRequest = Parameters<FullStore['commit']>[0];
export type BeliefUpdate = NonNullable<CommitRequest['updates']>[number];
export type OutboxClaim = NonNullable<Awaited<ReturnType<FullStore['claim']>>>;

/** The fixed start of test time; `t(n)` is n seconds later. */
export const T0 = Date.parse('2025-03-01T12:00:00.000Z');
export const t = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
/** Far in the future: every lease taken before it has expired. */
export const FAR_FUTURE = '2100-01-01T00:00:00.000Z';

export const ALL_STATUSES = ['active', 'pending', 'superseded', 'retracted', 'forgotten'] as const;

let counter = 0;
/** A unique suffix for keys and ids inside one test run. */
export function unique(prefix = 'k'): string {
  counter += 1;
  return `${prefix}${counter}`;
}

/** A store of the suite under test (`dimensions`: fixed, see `ctx.open`) and the scope of a user new to it. */
export async function storeAndUser(
  ctx: Pick<SuiteContext, 'open'>,
  userPrefix = 'user-',
  dimensions?: number,
): Promise<[FullStore, Scope]> {
  const store = await ctx.open(dimensions);
  return [store, { userId: unique(userPrefix) }];
}

export interface BeliefSpec {
  readonly kind?: BeliefKind;
  readonly subject?: string;
  readonly attribute?: string;
  readonly value?: string;
  readonly statement?: string;
  readonly confidence?: number;
  readonly status?: Belief['status'];
  readonly supersedes?: string | null;
  readonly evidence?: readonly Evidence[];
  /** storedAt/updatedAt; default t(0). */
  readonly at?: string;
  readonly id?: string;
}

/** A valid new belief built by the engine's `createBelief`. Attribute defaults to a unique key. */
export function belief(scope: Scope, spec: BeliefSpec = {}): Belief {
  const value = spec.value ?? 'blue';
  return createBelief({
    scope,
    kind: spec.kind ?? 'preference',
    subject: spec.subject ?? 'user',
    attribute: spec.attribute ?? unique('attr_'),
    value,
    statement: spec.statement ?? `The user likes ${value}.`,
    confidence: spec.confidence ?? 0.8,
    source: 'extracted',
    status: spec.status ?? 'active',
    supersedes: spec.supersedes ?? null,
    evidence: spec.evidence ?? [],
    at: spec.at ?? t(0),
    ...(spec.id === undefined ? {} : { id: spec.id }),
  });
}

export function vec(...values: number[]): Float32Array {
  return Float32Array.from(values);
}

export function audit(
  scope: Scope,
  beliefId: string | null,
  action: AuditEvent['action'] = 'add',
  at = t(0),
): AuditEvent {
  return { at, scope, beliefId, action, actor: 'conformance' };
}

/** The `complete` of a commit that completes every entry of `claim`. */
export function completing(claim: OutboxClaim): NonNullable<CommitRequest['complete']> {
  return { claimId: claim.claimId, entryIds: claim.entries.map((e) => e.id) };
}

/** A commit that only completes `claim`: its turns gave nothing to write. */
export function completeOnly(scope: Scope, claim: OutboxClaim): CommitRequest {
  return { scope, inserts: [], updates: [], audit: [], complete: completing(claim) };
}

/** A commit of plain inserts (with optional embeddings) and one `add` audit event each. */
export function inserts(scope: Scope, items: readonly (Belief | BeliefInsert)[]): CommitRequest {
  const records = items.map((i) => ('belief' in i ? i : { belief: i }));
  return {
    scope,
    inserts: records,
    updates: [],
    audit: records.map((r) => audit(scope, r.belief.id, 'add', r.belief.storedAt)),
  };
}

export async function insertAll(store: FullStore, scope: Scope, items: readonly (Belief | BeliefInsert)[]) {
  await store.commit(inserts(scope, items));
}

/** Supersede `old` by `next` in one commit (the engine's reconciliation shape). */
export function supersede(scope: Scope, old: Belief, next: Belief, at = next.storedAt): CommitRequest {
  return {
    scope,
    inserts: [{ belief: next }],
    updates: [
      {
        id: old.id,
        expectedVersion: old.version,
        set: { status: 'superseded', supersededBy: next.id, invalidatedAt: at, updatedAt: at },
      },
    ],
    audit: [audit(scope, next.id, 'supersede', at)],
  };
}

export function turn(
  scope: Scope,
  sessionId: string,
  position: number,
  text: string,
  at = t(position),
): OutboxInput {
  return { scope, sessionId, position, role: 'user', text, at };
}

/** A capture grant of `scope` (a fixed intent digest, granted at `t(10)`, open-ended), changed by `patch`. */
export function grant(scope: Scope, patch: Partial<CaptureGrant> = {}): CaptureGrant {
  return {
    id: unique('grant-'),
    scope,
    intentDigest: 'cd'.repeat(32),
    grantedAt: t(10),
    expiresAt: null,
    revokedAt: null,
    ...patch,
  };
}

// ---------------------------------------------------------------- engines on the store under test

/** When the turns of the engine tests happen ({@link userTurn}). */
export const AT = '2026-01-01T00:00:00.000Z';

/** A user turn at {@link AT}, as the engine accepts it. */
export const userTurn = (scope: Scope, sessionId: string, position: number, text: string) => ({
  scope,
  sessionId,
  position,
  role: 'user' as const,
  text,
  at: AT,
});

/** An engine on `store`: the key=value extractor, no embedder and no episodes, unless `options` say otherwise. */
export function engine(store: EngineStore, options: Partial<MemoryEngineOptions> = {}): MemoryEngine {
  return new MemoryEngine({
    store,
    extractor: options.extractor ?? new KeyValueExtractor(),
    embedder: null,
    ...options,
    config: { episodic: false, ...options.config },
  });
}

/** A clock tests move by hand. */
export function manualClock(start: string) {
  let now = Date.parse(start);
  return {
    clock: () => new Date(now),
    set: (iso: string) => {
      now = Date.parse(iso);
    },
  };
}

/**
 * Awaits a rejection and checks it is the engine's typed error (by `name` and stable `code`, so it holds even when
 * the store and the suite load different copies of the engine).
 */
export async function rejects(
  promise: Promise<unknown>,
  errorClass: abstract new (...args: never[]) => Mem01Error,
): Promise<Mem01Error> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${errorClass.name}`).toBeInstanceOf(Error);
  const err = caught as Mem01Error;
  expect(err.name, `expected ${errorClass.name}, got ${err.name}: ${err.message}`).toBe(errorClass.name);
  expect(typeof err.code).toBe('string');
  return err;
}

/** Everything of a scope that the read paths can show, for before/after comparisons. */
export async function snapshot(store: FullStore, scope: Scope) {
  const all = await listAll(store, scope);
  return { beliefs: all, audit: await store.auditLog(scope), history: await store.history(scope) };
}

export async function listAll(store: FullStore, scope: Scope): Promise<Belief[]> {
  const out: Belief[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.list(scope, { statuses: ALL_STATUSES, limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

export const ids = (items: readonly { id: string }[]): string[] => items.map((i) => i.id);
export const hitIds = (hits: readonly { belief: { id: string } }[]): string[] => hits.map((h) => h.belief.id);

/** Allsettled, split. */
export async function settle<T>(promises: readonly Promise<T>[]) {
  const results = await Promise.allSettled(promises);
  return {
    fulfilled: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    rejected: results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : [])),
  };
}

export const sortDesc = (values: readonly string[]): string[] =>
  [...values].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
