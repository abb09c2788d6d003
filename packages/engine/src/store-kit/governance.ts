/**
 * Checks of the governance ports (`OperationJournal`, `CaptureGrantStore`, `BudgetStore`, `AccessStore`), written
 * once so that every store refuses the same input the same way, and the row mappings of SQL stores for them.
 */

import { isBeliefKind } from '../belief.js';
import { InvalidInputError, StoreError } from '../errors.js';
import type { BudgetCharge, CaptureGrant, OperationAction, OperationRecord } from '../ports.js';
import { canonicalTimestamp } from '../store-input.js';
import type { BeliefKind } from '../types.js';
import { assertId, normalizeScope, typeOf } from '../util.js';
import type { Row } from './rows.js';
import type { CanonicalScope } from './transcript.js';
import { assertNonNegativeInteger, assertPositiveInteger } from './validate.js';

/** The actions an operation key may record. */
export const OPERATION_ACTIONS: ReadonlySet<OperationAction> = new Set<OperationAction>([
  'remember',
  'correct',
  'forget',
  'approve',
  'reject',
  'retract',
]);

/** Most belief ids one operation record may hold. */
export const MAX_OPERATION_BELIEFS = 1000;
const OUTCOME = /^[a-z_]{1,32}$/;
const FINGERPRINT = /^[0-9a-f]{16,128}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const BUDGET_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Checks an operation record and returns a canonical copy (timestamp as UTC, ids copied). */
export function validateOperationRecord(value: unknown, field: string): OperationRecord {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const o = value as Record<string, unknown>;
  assertId(o.key, `${field}.key`);
  if (typeof o.fingerprint !== 'string' || !FINGERPRINT.test(o.fingerprint))
    throw new InvalidInputError(`${field}.fingerprint`, 'must be 16..128 lower-case hex digits');
  if (typeof o.action !== 'string' || !OPERATION_ACTIONS.has(o.action as OperationAction))
    throw new InvalidInputError(
      `${field}.action`,
      `unknown action ${JSON.stringify(o.action) ?? 'undefined'}`,
    );
  if (!Array.isArray(o.beliefIds) || o.beliefIds.length > MAX_OPERATION_BELIEFS)
    throw new InvalidInputError(
      `${field}.beliefIds`,
      `must be an array of at most ${MAX_OPERATION_BELIEFS} ids`,
    );
  o.beliefIds.forEach((id, i) => {
    assertId(id, `${field}.beliefIds[${i}]`);
  });
  if (typeof o.outcome !== 'string' || !OUTCOME.test(o.outcome))
    throw new InvalidInputError(`${field}.outcome`, 'must be 1..32 lower-case letters or _');
  return {
    key: o.key,
    fingerprint: o.fingerprint,
    action: o.action as OperationAction,
    beliefIds: [...(o.beliefIds as string[])],
    outcome: o.outcome,
    at: canonicalTimestamp(o.at, `${field}.at`),
  };
}

/** `getOperation` arguments, checked. */
export function validateOperationQuery(scope: unknown, key: unknown): { scope: CanonicalScope; key: string } {
  const s = normalizeScope(scope);
  assertId(key, 'key');
  return { scope: s, key };
}

/** The operation record of a row with the columns `key, fingerprint, action, belief_ids, outcome, at`. */
export function operationFromRow(row: Row): OperationRecord {
  let ids: unknown;
  try {
    ids = JSON.parse(String(row.belief_ids));
  } catch (cause) {
    throw new StoreError('corrupt row: belief_ids is not JSON', { cause });
  }
  if (!Array.isArray(ids)) throw new StoreError('corrupt row: belief_ids is not an array');
  return {
    key: String(row.key),
    fingerprint: String(row.fingerprint),
    action: String(row.action) as OperationAction,
    beliefIds: ids.map(String),
    outcome: String(row.outcome),
    at: String(row.at),
  };
}

/** The optional host ids of a grant, in the order SQL stores keep them (`key, policy_id, principal_id, decision_id`). */
export const GRANT_REFERENCES = ['key', 'policyId', 'principalId', 'decisionId'] as const;

/**
 * Checks a capture grant and returns a canonical copy (scope canonical, timestamps as UTC; `key`, `policyId`,
 * `principalId` and `decisionId` ids, absent when not given).
 */
export function validateGrant(value: unknown, field = 'grant'): CaptureGrant & { scope: CanonicalScope } {
  if (value === null || typeof value !== 'object') throw new InvalidInputError(field, 'must be an object');
  const g = value as Record<string, unknown>;
  assertId(g.id, `${field}.id`);
  const scope = normalizeScope(g.scope);
  if (typeof g.intentDigest !== 'string' || !DIGEST.test(g.intentDigest))
    throw new InvalidInputError(
      `${field}.intentDigest`,
      'must be a SHA-256 digest: 64 lower-case hex digits',
    );
  const grantedAt = canonicalTimestamp(g.grantedAt, `${field}.grantedAt`);
  const expiresAt =
    g.expiresAt === null || g.expiresAt === undefined
      ? null
      : canonicalTimestamp(g.expiresAt, `${field}.expiresAt`);
  const revokedAt =
    g.revokedAt === null || g.revokedAt === undefined
      ? null
      : canonicalTimestamp(g.revokedAt, `${field}.revokedAt`);
  if (expiresAt !== null && expiresAt <= grantedAt)
    throw new InvalidInputError(`${field}.expiresAt`, 'must be later than grantedAt');
  const refs: { -readonly [K in (typeof GRANT_REFERENCES)[number]]?: string } = {};
  for (const name of GRANT_REFERENCES) {
    const v = g[name];
    if (v === undefined || v === null) continue;
    assertId(v, `${field}.${name}`);
    refs[name] = v;
  }
  return { id: g.id, scope, intentDigest: g.intentDigest, grantedAt, expiresAt, revokedAt, ...refs };
}

/** `revokeGrants` options, checked: when, and one grant id or null for all. */
export function validateRevokeOptions(options: unknown): { at: string; id: string | null } {
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const o = options as { at?: unknown; id?: unknown };
  if (o.id !== undefined) assertId(o.id, 'id');
  return { at: canonicalTimestamp(o.at, 'at'), id: (o.id as string | undefined) ?? null };
}

/**
 * The grant of a row with the columns `id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at` and
 * (null when absent) `key, policy_id, principal_id, decision_id`.
 */
export function grantFromRow(row: Row): CaptureGrant {
  const opt = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const key = opt(row.key);
  const policyId = opt(row.policy_id);
  const principalId = opt(row.principal_id);
  const decisionId = opt(row.decision_id);
  return {
    id: String(row.id),
    scope: { userId: String(row.user_id), namespace: String(row.namespace) },
    intentDigest: String(row.intent_digest),
    grantedAt: String(row.granted_at),
    expiresAt: opt(row.expires_at),
    revokedAt: opt(row.revoked_at),
    ...(key === null ? {} : { key }),
    ...(policyId === null ? {} : { policyId }),
    ...(principalId === null ? {} : { principalId }),
    ...(decisionId === null ? {} : { decisionId }),
  };
}

/** Whether a grant is valid at `now` (canonical timestamps compare as text). */
export function grantValidAt(grant: CaptureGrant, now: string): boolean {
  return (
    grant.grantedAt <= now &&
    (grant.revokedAt === null || grant.revokedAt > now) &&
    (grant.expiresAt === null || grant.expiresAt > now)
  );
}

/** Grants oldest first: `grantedAt`, then id. */
export function grantOrder(a: CaptureGrant, b: CaptureGrant): number {
  if (a.grantedAt !== b.grantedAt) return a.grantedAt < b.grantedAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A `chargeBudget` request, checked: user, canonical window start, charges with distinct names. */
export function validateBudgetRequest(request: unknown): {
  userId: string;
  windowStart: string;
  charges: BudgetCharge[];
} {
  if (request === null || typeof request !== 'object')
    throw new InvalidInputError('request', 'must be an object');
  const r = request as { userId?: unknown; windowStart?: unknown; charges?: unknown };
  assertId(r.userId, 'userId');
  const windowStart = canonicalTimestamp(r.windowStart, 'windowStart');
  if (!Array.isArray(r.charges) || r.charges.length === 0 || r.charges.length > 32)
    throw new InvalidInputError('charges', 'must be an array of 1..32 charges');
  const seen = new Set<string>();
  const charges = r.charges.map((c: unknown, i): BudgetCharge => {
    const f = `charges[${i}]`;
    if (c === null || typeof c !== 'object') throw new InvalidInputError(f, 'must be an object');
    const { name, amount, limit } = c as { name?: unknown; amount?: unknown; limit?: unknown };
    if (typeof name !== 'string' || !BUDGET_NAME.test(name))
      throw new InvalidInputError(`${f}.name`, 'must be a lower-case word (a-z, 0-9, _), at most 64');
    if (seen.has(name)) throw new InvalidInputError(`${f}.name`, `${name} is charged twice`);
    seen.add(name);
    assertNonNegativeInteger(amount, `${f}.amount`);
    if (!Number.isSafeInteger(amount)) throw new InvalidInputError(`${f}.amount`, 'must be a safe integer');
    if (limit !== null) assertPositiveInteger(limit, `${f}.limit`);
    return { name, amount, limit: limit as number | null };
  });
  return { userId: r.userId, windowStart, charges };
}

/** A `readBudget` request, checked: user and canonical window start. */
export function validateBudgetRead(request: unknown): { userId: string; windowStart: string } {
  if (request === null || typeof request !== 'object')
    throw new InvalidInputError('request', 'must be an object');
  const r = request as { userId?: unknown; windowStart?: unknown };
  assertId(r.userId, 'userId');
  return { userId: r.userId, windowStart: canonicalTimestamp(r.windowStart, 'windowStart') };
}

/**
 * Applies charges to the counters `used` (current values, 0 when absent), all or nothing: the refusal, or the values
 * after the charge. The rule every store applies inside its transaction.
 */
export function applyCharges(
  charges: readonly BudgetCharge[],
  used: (name: string) => number,
):
  | { readonly charged: true; readonly used: Record<string, number> }
  | { readonly charged: false; readonly name: string; readonly used: number; readonly limit: number } {
  const after: Record<string, number> = {};
  for (const c of charges) {
    const now = used(c.name);
    if (c.limit !== null && (now + c.amount > c.limit || (c.amount === 0 && now >= c.limit))) {
      return { charged: false, name: c.name, used: now, limit: c.limit };
    }
    after[c.name] = now + c.amount;
  }
  return { charged: true, used: after };
}

/** `countActiveBeliefs` arguments, checked. */
export function validateCountOptions(
  userId: unknown,
  options: unknown,
): { userId: string; excludeKinds: BeliefKind[]; unit: 'beliefs' | 'bytes' } {
  assertId(userId, 'userId');
  const o = (options ?? {}) as { excludeKinds?: unknown; unit?: unknown };
  if (typeof o !== 'object') throw new InvalidInputError('options', 'must be an object');
  const unit = o.unit ?? 'beliefs';
  if (unit !== 'beliefs' && unit !== 'bytes')
    throw new InvalidInputError('unit', `must be 'beliefs' or 'bytes', got ${JSON.stringify(unit)}`);
  const kinds = o.excludeKinds ?? [];
  if (!Array.isArray(kinds))
    throw new InvalidInputError('excludeKinds', `must be an array, got ${typeOf(kinds)}`);
  for (const k of kinds)
    if (!isBeliefKind(k)) throw new InvalidInputError('excludeKinds', `unknown kind ${JSON.stringify(k)}`);
  return { userId, excludeKinds: [...new Set(kinds as BeliefKind[])], unit };
}

/** `recordAccess` arguments, checked: counts summed per id, each a positive integer. */
export function validateAccess(
  scope: unknown,
  hits: unknown,
  at: unknown,
): { scope: CanonicalScope; hits: { id: string; count: number }[]; at: string } {
  const s = normalizeScope(scope);
  if (!Array.isArray(hits)) throw new InvalidInputError('hits', `must be an array, got ${typeOf(hits)}`);
  const sums = new Map<string, number>();
  hits.forEach((h: unknown, i) => {
    if (h === null || typeof h !== 'object') throw new InvalidInputError(`hits[${i}]`, 'must be an object');
    const { id, count } = h as { id?: unknown; count?: unknown };
    assertId(id, `hits[${i}].id`);
    assertPositiveInteger(count, `hits[${i}].count`, 1_000_000_000);
    sums.set(id, (sums.get(id) ?? 0) + count);
  });
  return {
    scope: s,
    hits: [...sums].map(([id, count]) => ({ id, count })),
    at: canonicalTimestamp(at, 'at'),
  };
}
