/**
 * The store ports beyond the pipeline's: operation keys journaled with the change they made, capture grants, budget
 * counters and access counts, kept in the store so that every process sharing it sees one record. A `FullStore`
 * implements them (see `ports.ts`).
 */
import type { BeliefKind, Scope } from './types.js';

/**
 * A mutation recorded under the caller's operation key: content-free (ids, a digest of the request, a short outcome
 * word), so forgetting a belief leaves nothing of it here.
 */
export interface OperationRecord {
  /** The caller's key: unique within a scope (`userId` + `namespace`); one user's key never meets another's. */
  readonly key: string;
  /** A digest of the request (the engine's: SHA-256 hex). Compared, never interpreted, by the store. */
  readonly fingerprint: string;
  readonly action: OperationAction;
  /** The beliefs the operation returned, in order. */
  readonly beliefIds: readonly string[];
  /** A short word the engine gives the result (`belief`, `note`, `forgotten`, …): lower case letters and `_`. */
  readonly outcome: string;
  /** When it was recorded, ISO-8601 UTC. */
  readonly at: string;
}

/** The mutations that take an operation key. */
export type OperationAction = 'remember' | 'correct' | 'forget' | 'approve' | 'reject' | 'retract';

/**
 * Operation keys, recorded durably with the change they made: `commit` and `forget` take an `operation` and write it
 * in their transaction (refusing a key already recorded with `DuplicateOperationError`, writing nothing).
 */
export interface OperationJournal {
  /**
   * The operation recorded under `key` in `scope`, or null. A key of another scope (another user, or another
   * namespace of the same user) is not found. `eraseUser`, `clearAll` and (for its scope) `eraseScope` delete the
   * records.
   */
  getOperation(scope: Scope, key: string): Promise<OperationRecord | null>;
}

/**
 * A host's permission to capture memory for one scope: the digest of the intent it stated, when it was given, and when
 * it expires or was revoked, with the host's own references (policy, principal, decision) and an optional operation
 * key. The intent text itself is not stored. A grant is bound to what it captured: turns accepted while it is the
 * scope's active grant record its id (`OutboxInput.grantId`), and the beliefs and episodes made from them carry it
 * (`Belief.grantId`).
 */
export interface CaptureGrant {
  /** Unique in the store. */
  readonly id: string;
  readonly scope: Scope;
  /** SHA-256 of the stated intent, lower-case hex (64 characters). */
  readonly intentDigest: string;
  readonly grantedAt: string;
  /** Null: never expires. */
  readonly expiresAt: string | null;
  /** Null while not revoked. */
  readonly revokedAt: string | null;
  /**
   * The operation key it was granted under: unique among the scope's grants. Absent when none was given (and for grants
   * recorded before grants had keys).
   */
  readonly key?: string | undefined;
  /** The host's id of the policy the grant was given under (an opaque id, 1..256 characters). Absent when none. */
  readonly policyId?: string | undefined;
  /** The host's id of who gave the grant (the user, a guardian, an operator). Absent when none. */
  readonly principalId?: string | undefined;
  /** The host's id of the consent decision the grant records. Absent when none. */
  readonly decisionId?: string | undefined;
}

/** Capture grants, kept in the store so that every process sharing it sees one record. */
export interface CaptureGrantStore {
  /**
   * Records a grant. Timestamps are stored as ISO-8601 UTC. `StoreError` when its id is recorded already, and
   * `DuplicateOperationError` when another grant of its scope has its `key` (a racing grant with the same key won):
   * nothing changes. `InvalidInputError` for a malformed grant.
   */
  recordGrant(grant: CaptureGrant): Promise<void>;
  /** Every grant of `scope` (revoked and expired ones too), oldest first (`grantedAt`, then id). */
  listGrants(scope: Scope): Promise<CaptureGrant[]>;
  /**
   * A grant of `scope` valid at `now` (the engine's clock): `grantedAt <= now`, not revoked at or before `now`, and
   * not expired (`expiresAt` null or later than `now`). The latest granted one when several are; null when none.
   */
  activeGrant(scope: Scope, now: string): Promise<CaptureGrant | null>;
  /**
   * Revokes, at `at`, the grants of `scope` that are not revoked yet (only grant `id`, when given; an id of another
   * scope is not found and changes nothing). Returns how many were revoked.
   */
  revokeGrants(
    scope: Scope,
    options: { readonly at: string; readonly id?: string | undefined },
  ): Promise<number>;
}

/** One counter of a {@link BudgetStore.chargeBudget} call. */
export interface BudgetCharge {
  /** Counter name: a lower-case word (`llm_calls`, `input_tokens`, …). */
  readonly name: string;
  /** Non-negative integer to add. */
  readonly amount: number;
  /** The counter's limit for the window; null to add without a check. */
  readonly limit: number | null;
}

export type BudgetChargeResult =
  | {
      readonly charged: true;
      /** Every charged counter's value in the window after the charge. */
      readonly used: Readonly<Record<string, number>>;
    }
  | {
      readonly charged: false;
      /** The first counter that refused. */
      readonly name: string;
      readonly used: number;
      readonly limit: number;
    };

/** Budget counters and capacity counts, in the store so that every process sharing it respects one budget. */
export interface BudgetStore {
  /**
   * Adds each charge to the user's counter for the window starting at `windowStart` (ISO-8601 UTC), atomically and
   * all or nothing across processes: refused, adding nothing, when a charge with a limit would take its counter over
   * it (`used + amount > limit`) or, for an amount of 0, when its counter has reached it (`used >= limit`). The user's
   * counters of earlier windows are deleted.
   */
  chargeBudget(request: {
    readonly userId: string;
    readonly windowStart: string;
    readonly charges: readonly BudgetCharge[];
  }): Promise<BudgetChargeResult>;
  /**
   * The user's counters for the window starting at `windowStart` (ISO-8601 UTC), by name, as `chargeBudget` left
   * them: a counter at zero, or not charged in that window, is absent (the window of a counter deleted by a later window's charge
   * too). Reads only; another user's counters are never returned.
   */
  readBudget(request: {
    readonly userId: string;
    readonly windowStart: string;
  }): Promise<Readonly<Record<string, number>>>;
  /**
   * The active beliefs of the user, in every namespace, leaving out the kinds in `excludeKinds`: their number (`unit`
   * `'beliefs'`, the default) or the sum of the UTF-8 byte lengths of their statements (`'bytes'`).
   */
  countActiveBeliefs(
    userId: string,
    options?: {
      readonly excludeKinds?: readonly BeliefKind[] | undefined;
      readonly unit?: 'beliefs' | 'bytes' | undefined;
    },
  ): Promise<number>;
}

/** How often recall returned a belief, written in batches by the engine. */
export interface AccessStore {
  /**
   * Adds `count` to each belief's `accessCount` and sets its `lastAccessedAt` to `at` unless it is later already, in
   * one transaction. Neither `version` nor `updatedAt` changes (an access is not a change of the belief). Ids unknown
   * or of another scope are skipped.
   */
  recordAccess(
    scope: Scope,
    hits: readonly { readonly id: string; readonly count: number }[],
    at: string,
  ): Promise<void>;
}
