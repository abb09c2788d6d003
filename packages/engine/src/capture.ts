/**
 * Capture authorization: grants a host records per user + namespace (a digest of the stated intent, an optional
 * expiry), kept in the store, and the check every capture (`accept`, `appendTranscript` with turns, `remember`) makes
 * when `config.requireCaptureGrant` is on. Expiry is judged by the engine's clock.
 */
import type { EngineCore } from './engine-core.js';
import { CapabilityError, CaptureNotAuthorizedError, InvalidInputError } from './errors.js';
import type { CaptureGrant, CaptureGrantStore } from './ports.js';
import { canonicalTimestamp } from './store-kit/governance.js';
import type { Scope } from './types.js';
import { assertText, newId, normalizeScope, sha256Hex } from './util.js';

/** Longest stated intent, in UTF-8 bytes (only its digest is kept). */
export const MAX_INTENT_BYTES = 65_536;

export interface GrantCaptureOptions {
  /** What the host told the user memory is captured for. Only its SHA-256 digest is stored. */
  readonly intent: string;
  /** When the grant ends (ISO-8601 or a Date); null or absent: never. Must be after now. */
  readonly expiresAt?: string | Date | null | undefined;
}

/** The store's capture grants; `CapabilityError` naming a store without them. */
export function grantsOf(core: EngineCore): CaptureGrantStore {
  const s = core.store as Partial<CaptureGrantStore>;
  if (
    typeof s.recordGrant !== 'function' ||
    typeof s.listGrants !== 'function' ||
    typeof s.activeGrant !== 'function' ||
    typeof s.revokeGrants !== 'function'
  ) {
    throw new CapabilityError(core.store.name, 'capture grants');
  }
  return s as CaptureGrantStore;
}

/** Records a grant for `scope` from now, with the digest of `options.intent`. */
export async function grantCapture(
  core: EngineCore,
  scope: Scope,
  options: GrantCaptureOptions,
): Promise<CaptureGrant> {
  const store = grantsOf(core);
  if (!options || typeof options !== 'object') throw new InvalidInputError('options', 'must be an object');
  assertText(options.intent, 'intent', MAX_INTENT_BYTES);
  const grantedAt = core.now();
  let expiresAt: string | null = null;
  if (options.expiresAt !== undefined && options.expiresAt !== null) {
    const raw = options.expiresAt instanceof Date ? options.expiresAt.toISOString() : options.expiresAt;
    expiresAt = canonicalTimestamp(raw, 'expiresAt');
    if (expiresAt <= grantedAt) throw new InvalidInputError('expiresAt', 'must be later than now');
  }
  const grant: CaptureGrant = {
    id: newId(),
    scope: normalizeScope(scope),
    intentDigest: await sha256Hex(options.intent),
    grantedAt,
    expiresAt,
    revokedAt: null,
  };
  await store.recordGrant(grant);
  return grant;
}

/** Throws `CaptureNotAuthorizedError` unless every scope holds a grant valid now (when grants are required). */
export async function assertCaptureAllowed(core: EngineCore, scopes: readonly Scope[]): Promise<void> {
  if (!core.config.requireCaptureGrant) return;
  const store = grantsOf(core);
  const now = core.now();
  const seen = new Set<string>();
  for (const scope of scopes) {
    const s = normalizeScope(scope);
    const key = JSON.stringify([s.userId, s.namespace]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!(await store.activeGrant(s, now))) throw new CaptureNotAuthorizedError(s);
  }
}
