/**
 * Plans operations against fresh state with {@link reconcile} and commits the plan, re-reading and re-planning when
 * a racing writer wins. Every write to beliefs, extracted or by hand, goes through here.
 */
import { endedGrants } from './capture.js';
import type { EngineCore } from './engine-core.js';
import { episodeKeysOf } from './episodes.js';
import { DuplicateActiveBeliefError, InvalidInputError, VersionConflictError } from './errors.js';
import { findNearRepeats, repeatProbes } from './near-repeats.js';
import type { CapturePolicy, ExtractionTurn, OperationRecord } from './ports.js';
import {
  beliefKey,
  operationRefs,
  type PlanOperation,
  type ReconcileOptions,
  type ReconcilePlan,
  reconcile,
} from './reconcile.js';
import { CAPTURE_DECISIONS } from './store-input.js';
import {
  type Belief,
  type BeliefSource,
  type CaptureDecision,
  isConversational,
  type Scope,
} from './types.js';

/** Attempts of one plan-and-commit before a lost race is reported. */
const RACE_RETRIES = 8;

export interface ApplyOptions {
  readonly source: BeliefSource;
  /** Who made the change, for the audit log. */
  readonly actor: string;
  /** Outbox entries this commit completes (extraction), in the same transaction. */
  readonly complete?: { readonly claimId: string; readonly entryIds: readonly string[] } | undefined;
  /**
   * Runs before each attempt with the records the operations refer to by id, as just read, and the scope's capture
   * grants that have ended (by id, with how; read only when a record read carries a grant): a lifecycle operation
   * checks the caller's `expectedVersion`, the belief's status and its grant here, so a retried attempt re-checks them.
   */
  readonly check?:
    | ((byId: ReadonlyMap<string, Belief>, ended: ReadonlyMap<string, 'revoked' | 'expired'>) => void)
    | undefined;
  /** The capture grant the beliefs the plan inserts are captured under (see `Belief.grantId`). */
  readonly grantId?: string | undefined;
  /**
   * Plan a near repeat of an active belief (`config.duplicateSimilarity`) as a repeat of it. For what extraction
   * draws; a structured `remember` names its key, and key rules alone apply to it.
   */
  readonly nearRepeats?: boolean | undefined;
  /** A capture policy to run on the beliefs the plan would insert (extraction only). */
  readonly policy?: CapturePolicy | undefined;
  /** A host's decision for every belief the plan would insert (`remember`'s `state: 'pending'`). */
  readonly decision?: CaptureDecision | undefined;
  /** Host metadata and origin of the beliefs the plan inserts; a function of the records read, for each attempt. */
  readonly stamp?:
    | ReconcileOptions['stamp']
    | ((byId: ReadonlyMap<string, Belief>) => ReconcileOptions['stamp'])
    | undefined;
  /**
   * The operation key to record with the commit: its record, given the plan (the result's belief ids and outcome).
   */
  readonly journal?: ((plan: ReconcilePlan) => OperationRecord) | undefined;
}

/** Reconciles `operations` against the current state of `scope` and commits the plan atomically. */
export async function applyOperations(
  core: EngineCore,
  scope: Scope,
  operations: readonly PlanOperation[],
  turns: readonly ExtractionTurn[],
  options: ApplyOptions,
): Promise<ReconcilePlan> {
  const refs = operationRefs(operations);
  // Near repeats apply to what extraction draws (from a turn, or `remember`'s free text): a structured `remember`
  // names its own key. Statements are embedded once; what they nearly repeat is read again on every attempt.
  const probes = options.nearRepeats ? await repeatProbes(core, scope, operations) : null;
  for (let attempt = 1; ; attempt++) {
    const byId = new Map<string, Belief>();
    for (const id of refs.ids) {
      const b = await core.store.get(scope, id);
      if (b) byId.set(id, b);
    }
    const keys = [
      ...refs.keys,
      ...[...byId.values()].map((b) => ({ subject: b.subject, attribute: b.attribute })),
    ];
    const active = keys.length > 0 ? await core.store.getActiveByKeys(scope, dedupeKeys(keys)) : [];
    // The grants that ended matter only to records captured under a grant: read them only then.
    const ended = [...byId.values(), ...active].some((b) => b.grantId !== undefined)
      ? await endedGrants(core, scope)
      : new Map<string, 'revoked' | 'expired'>();
    options.check?.(byId, ended);
    const activeByKey = new Map(active.map((b) => [beliefKey(b.subject, b.attribute), b]));
    // The episodes of the turns these beliefs came from: retired with them when the plan retires them.
    const evidence = [...byId.values(), ...active]
      .filter((b) => !isConversational(b.kind))
      .flatMap((b) => b.evidence);
    const episodes =
      evidence.length > 0
        ? (
            await core.store.getActiveByKeys(scope, dedupeKeys(episodeKeysOf(evidence, core.episodeParts)))
          ).filter((b) => b.kind === 'episode')
        : [];
    const nearRepeats = probes ? await findNearRepeats(core, scope, operations, probes) : undefined;
    const state = { byId, activeByKey, episodes, nearRepeats, endedGrants: new Set(ended.keys()) };
    const reconcileOptions: ReconcileOptions = {
      scope,
      now: core.now(),
      pendingBelow: core.config.pendingBelow,
      source: options.source,
      actor: options.actor,
      maxTextBytes: core.config.maxTextBytes,
      requireGrounding: options.source === 'extracted',
      stamp: typeof options.stamp === 'function' ? options.stamp(byId) : options.stamp,
      grantId: options.grantId,
    };
    const decide = await decisions(reconcileOptions, options, (o) => reconcile(operations, turns, state, o));
    const plan = reconcile(operations, turns, state, { ...reconcileOptions, decide });
    const inserts = await core.embedAll(plan.inserts, probes?.byStatement);
    try {
      await core.store.commit({
        scope,
        inserts,
        updates: plan.updates,
        audit: plan.audit,
        complete: options.complete,
        ...(options.journal ? { operation: options.journal(plan) } : {}),
      });
    } catch (err) {
      // The store refused the commit because a racing writer changed what this attempt read: read again.
      const race = err instanceof DuplicateActiveBeliefError || err instanceof VersionConflictError;
      if (!race || attempt >= RACE_RETRIES) throw err;
      core.stats.commitRetries++;
      continue;
    }
    core.stats.commits++;
    core.stats.operationsApplied += operations.length - plan.dropped.length;
    core.stats.operationsDropped += plan.dropped.length;
    return plan;
  }
}

/**
 * The decisions for the beliefs a plan would insert: the host's one decision for all, or the capture policy's for each
 * candidate of a draft plan on the same state (the plan that is committed is made again with them, by the one planner).
 */
async function decisions(
  reconcileOptions: ReconcileOptions,
  options: ApplyOptions,
  draft: (o: ReconcileOptions) => ReconcilePlan,
): Promise<ReconcileOptions['decide']> {
  const fixed = options.decision;
  if (fixed !== undefined) return () => ({ decision: fixed, revision: null });
  const policy = options.policy;
  if (!policy) return undefined;
  const byIndex = new Map<number, { decision: CaptureDecision; revision: string }>();
  for (const c of draft(reconcileOptions).candidates) {
    const decision = await policy.decide(c.belief, {
      scope: reconcileOptions.scope,
      supersedes: c.supersedes,
      confidence: c.belief.confidence,
      evidence: c.belief.evidence,
      proposed: c.proposed,
    });
    if (typeof decision !== 'string' || !CAPTURE_DECISIONS.has(decision)) {
      throw new InvalidInputError(
        'capturePolicy',
        `decide() returned ${JSON.stringify(decision) ?? 'undefined'}, not accept, pending or reject`,
      );
    }
    byIndex.set(c.index, { decision, revision: policy.revision });
  }
  return (index) => byIndex.get(index);
}

function dedupeKeys(keys: readonly { subject: string; attribute: string }[]) {
  const seen = new Map<string, { subject: string; attribute: string }>();
  for (const k of keys) seen.set(beliefKey(k.subject, k.attribute), k);
  return [...seen.values()];
}
