/**
 * Scope keys and record copies of the in-memory store. Input checks are the engine's shared store-input helpers
 * (`validateBelief`, `validateAuditEvent`, ... from `@mem01/engine`).
 */
import { assertId, type Belief, InvalidInputError, normalizeScope, type Scope } from '@mem01/engine';

/** Upper bound on any stored text field (a store limit, not policy: the engine enforces its own smaller limit). */
export const MAX_TEXT_BYTES = 1024 * 1024;

export type CanonicalScope = { readonly userId: string; readonly namespace: string };

export function scopeKey(scope: CanonicalScope): string {
  return JSON.stringify([scope.userId, scope.namespace]);
}

export function canonicalScope(scope: unknown): CanonicalScope {
  return normalizeScope(scope);
}

export function cloneScope(scope: Scope): CanonicalScope {
  return { userId: scope.userId, namespace: scope.namespace ?? '' };
}

export function cloneBelief(b: Belief): Belief {
  return {
    ...b,
    scope: cloneScope(b.scope),
    evidence: b.evidence.map((e) => ({ ...e })),
  };
}

/** The owner scope of a transcript call, canonical; `InvalidInputError` on field `owner` when it is not a scope. */
export function canonicalOwner(owner: unknown): CanonicalScope {
  if (owner === null || typeof owner !== 'object')
    throw new InvalidInputError('owner', 'must be a scope ({ userId, namespace? })');
  const { userId, namespace } = owner as { userId?: unknown; namespace?: unknown };
  assertId(userId, 'owner.userId');
  if (namespace !== undefined && namespace !== null && namespace !== '')
    assertId(namespace, 'owner.namespace');
  return normalizeScope(owner);
}
