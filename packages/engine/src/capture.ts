/**
 * Capture authorization: grants a host records per user + namespace (a digest of the stated intent, an optional
 * expiry, the host's policy, principal and decision ids, an optional operation key), kept in the store; the check
 * every capture (`accept`, `appendTranscript` with turns, `remember`) makes when `config.requireCaptureGrant` is on;
 * and the binding of a capture to its grant: what is captured while a grant is the scope's active one carries its id,
 * and once that grant has ended (revoked, or expired by the engine's clock) the engine drops the turns still queued
 * under it, refuses to approve what it captured, and leaves what it captured out of recall, the block and `list`.
 */
import type { EngineCore } from './engine-core.js';
import {
  CapabilityError,
  CaptureNotAuthorizedError,
  InvalidInputError,
  OperationConflictError,
} from './errors.js';
import type { CaptureGrant, CaptureGrantStore } from './ports.js';
import { canonicalTimestamp } from './store-input.js';
import type { Scope } from './types.js';
import { assertId, assertText, newId, normalizeScope, sha256Hex } from './util.js';

/** Longest stated intent, in UTF-8 bytes (only its digest is kept). */
export const MAX_INTENT_BYTES = 65_536;

export interface GrantCaptureOptions {
  /** What the host told the user memory is captured for. Only its SHA-256 digest is stored. */
  readonly intent: string;
  /** When the grant ends (ISO-8601 or a Date); null or absent: never. Must be after now. */
  readonly expiresAt?: string | Date | null | undefined;
  /**
   * An operation key (1..256 characters, unique among the scope's grants): granting again under the same key with the
   * same intent, expiry and ids returns the grant recorded first (also once it was revoked or has expired); with
   * anything different it fails with `OperationConflictError`. Grant keys are apart from the keys of belief
   * operations (`remember`, `correct`, …).
   */
  readonly key?: string | undefined;
  /** The host's id of the policy the grant is given under (an opaque id, 1..256 characters). */
  readonly policyId?: string | undefined;
  /** The host's id of who gives the grant (the user, a guardian, an operator). */
  readonly principalId?: string | undefined;
  /** The host's id of the consent decision the grant records. */
  readonly decisionId?: string | undefined;
}

/** How a grant ended by `now`, or null while it has not (revocation first when both). */
export function grantEnded(grant: CaptureGrant, now: string): 'revoked' | 'expired' | null {
  if (grant.revokedAt !== null && grant.revokedAt <= now) return 'revoked';
  if (grant.expiresAt !== null && grant.expiresAt <= now) return 'expired';
  return null;
}

/** The store's capture grants; `CapabilityError` naming a store without them. */
export function grantsOf(core: EngineCore): CaptureGrantStore {
  const s = grantStoreOf(core);
  if (!s) throw new CapabilityError(core.store.name, 'capture grants');
  return s;
}

/** The store's capture grants, or null for a store without them (whose captures are bound to no grant). */
export function grantStoreOf(core: EngineCore): CaptureGrantStore | null {
  const s = core.store as Partial<CaptureGrantStore>;
  if (
    typeof s.recordGrant !== 'function' ||
    typeof s.listGrants !== 'function' ||
    typeof s.activeGrant !== 'function' ||
    typeof s.revokeGrants !== 'function'
  ) {
    return null;
  }
  return s as CaptureGrantStore;
}

/** The host references of a grant as given, checked; absent ones left out. */
function grantReferences(
  options: GrantCaptureOptions,
): Pick<CaptureGrant, 'policyId' | 'principalId' | 'decisionId'> {
  const out: { policyId?: string; principalId?: string; decisionId?: string } = {};
  for (const name of ['policyId', 'principalId', 'decisionId'] as const) {
    const v = options[name];
    if (v === undefined) continue;
    assertId(v, name);
    out[name] = v;
  }
  return out;
}

/** Whether a recorded grant is the one this request would record (everything but its id and times). */
function sameGrant(
  recorded: CaptureGrant,
  wanted: Omit<CaptureGrant, 'id' | 'grantedAt' | 'revokedAt'>,
): boolean {
  return (
    recorded.intentDigest === wanted.intentDigest &&
    recorded.expiresAt === wanted.expiresAt &&
    recorded.policyId === wanted.policyId &&
    recorded.principalId === wanted.principalId &&
    recorded.decisionId === wanted.decisionId
  );
}

/**
 * Records a grant for `scope` from now, with the digest of `options.intent` and the host's ids; under `options.key`, a
 * repeated request returns the recorded grant and a different one is an `OperationConflictError`.
 */
export async function grantCapture(
  core: EngineCore,
  scope: Scope,
  options: GrantCaptureOptions,
): Promise<CaptureGrant> {
  const store = grantsOf(core);
  if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
  assertText(options.intent, 'intent', MAX_INTENT_BYTES);
  if (options.key !== undefined) assertId(options.key, 'key');
  const references = grantReferences(options);
  let expiresAt: string | null = null;
  if (options.expiresAt !== undefined && options.expiresAt !== null) {
    const raw = options.expiresAt instanceof Date ? options.expiresAt.toISOString() : options.expiresAt;
    expiresAt = canonicalTimestamp(raw, 'expiresAt');
  }
  const s = normalizeScope(scope);
  const wanted = { scope: s, intentDigest: await sha256Hex(options.intent), expiresAt, ...references };
  const key = options.key;
  const recorded = async (): Promise<CaptureGrant | null> => {
    if (key === undefined) return null;
    const found = (await store.listGrants(s)).find((g) => g.key === key) ?? null;
    if (found && !sameGrant(found, wanted)) throw new OperationConflictError(key);
    return found;
  };
  for (let attempt = 0; ; attempt++) {
    const earlier = await recorded();
    if (earlier) return earlier;
    const grantedAt = core.now();
    if (expiresAt !== null && expiresAt <= grantedAt)
      throw new InvalidInputError('expiresAt', 'must be later than now');
    const grant: CaptureGrant = {
      id: newId(),
      ...wanted,
      grantedAt,
      revokedAt: null,
      ...(key === undefined ? {} : { key }),
    };
    try {
      await store.recordGrant(grant);
      return grant;
    } catch (err) {
      // A racing grant with the same key was recorded first: it is returned, or refused as a conflict.
      if (attempt === 0 && (err as { code?: unknown } | null)?.code === 'duplicate_operation') continue;
      throw err;
    }
  }
}

/**
 * The grant each capture of `scopes` is bound to: the scope's active grant (by the engine's clock) when the store
 * keeps grants, else none. With `config.requireCaptureGrant`, `CaptureNotAuthorizedError` unless every scope has one
 * (nothing is written). Returns the grant id of a scope (undefined when none).
 */
export async function authorizeCapture(
  core: EngineCore,
  scopes: readonly Scope[],
): Promise<(scope: Scope) => string | undefined> {
  const required = core.config.requireCaptureGrant;
  const store = required ? grantsOf(core) : grantStoreOf(core);
  const bound = new Map<string, string | undefined>();
  const keyOf = (scope: Scope) => {
    const s = normalizeScope(scope);
    return JSON.stringify([s.userId, s.namespace]);
  };
  if (store) {
    const now = core.now();
    for (const scope of scopes) {
      const s = normalizeScope(scope);
      const key = keyOf(s);
      if (bound.has(key)) continue;
      const grant = await store.activeGrant(s, now);
      if (!grant && required) throw new CaptureNotAuthorizedError(s);
      bound.set(key, grant?.id);
    }
  }
  return (scope) => bound.get(keyOf(scope));
}

/**
 * The grants of `scope` that have ended by now (revoked, or expired by the engine's clock), by id, with how. Empty for
 * a store without grants.
 */
export async function endedGrants(
  core: EngineCore,
  scope: Scope,
): Promise<ReadonlyMap<string, 'revoked' | 'expired'>> {
  const store = grantStoreOf(core);
  const ended = new Map<string, 'revoked' | 'expired'>();
  if (!store) return ended;
  const now = core.now();
  for (const g of await store.listGrants(normalizeScope(scope))) {
    const how = grantEnded(g, now);
    if (how) ended.set(g.id, how);
  }
  return ended;
}
