/**
 * Lifecycle operations by hand (a user, a tool, an operator): correct, retract, approve, reject, remember and
 * forget. Every one but forget is planned by {@link reconcile} through {@link applyOperations}, so the rules of what
 * supersedes what are the same as for extraction, and a lost race is re-read and re-planned.
 */
import { isBeliefKind } from './belief.js';
import { applyOperations } from './commit-plan.js';
import type { EngineCore } from './engine-core.js';
import { EPISODE_SUBJECT, episodeKeysOf } from './episodes.js';
import { InvalidInputError, NotFoundError, VersionConflictError } from './errors.js';
import type { ExtractionOperation } from './ports.js';
import type { PlanOperation } from './reconcile.js';
import type { Belief, BeliefKind, BeliefSource, BeliefStatus, Scope } from './types.js';
import { assertText } from './util.js';

export interface RememberInput {
  readonly kind: BeliefKind;
  readonly subject?: string | undefined;
  readonly attribute: string;
  readonly value: string;
  readonly statement?: string | undefined;
  readonly confidence?: number | undefined;
  readonly source?: Extract<BeliefSource, 'manual' | 'tool'> | undefined;
}

/** Options of the lifecycle operations that change one belief. */
export interface VersionedOptions {
  /** The version the caller read; a different stored version fails with `VersionConflictError`. */
  readonly expectedVersion?: number | undefined;
}

export function assertVersion(v: unknown): void {
  if (!Number.isInteger(v) || (v as number) < 1)
    throw new InvalidInputError('expectedVersion', 'must be a positive integer');
}

/** The checks a lifecycle operation makes on the belief it names, on every attempt. */
function expect(
  id: string,
  expectedVersion: number | undefined,
  statuses: readonly BeliefStatus[],
  action: string,
): (byId: ReadonlyMap<string, Belief>) => void {
  return (byId) => {
    const current = byId.get(id);
    if (!current) throw new NotFoundError(`belief ${id}`);
    if (expectedVersion !== undefined && current.version !== expectedVersion) {
      throw new VersionConflictError(id, expectedVersion, current.version);
    }
    if (!statuses.includes(current.status)) {
      throw new InvalidInputError(
        'id',
        `belief ${id} is ${current.status}; only ${statuses.join(' or ')} beliefs can be ${action}`,
      );
    }
  };
}

async function read(core: EngineCore, scope: Scope, id: string | undefined): Promise<Belief> {
  const b = id === undefined ? null : await core.store.get(scope, id);
  if (!b) throw new NotFoundError(`belief ${id}`);
  return b;
}

/**
 * A user's correction: supersedes the belief with `text` as its new value and statement, confidence 1, source
 * `correction`. The same value confirms the belief instead. Returns the belief that is active afterwards.
 */
export async function correct(
  core: EngineCore,
  scope: Scope,
  id: string,
  text: string,
  options: VersionedOptions,
): Promise<Belief> {
  const value = text.trim();
  const op: PlanOperation = { op: 'supersede', id, value, statement: value, confidence: 1, evidence: [] };
  const plan = await applyOperations(core, scope, [op], [], {
    source: 'correction',
    actor: 'user',
    check: expect(id, options.expectedVersion, ['active', 'pending'], 'corrected'),
  });
  const inserted = plan.inserts[0];
  return inserted ?? read(core, scope, plan.touched[0]);
}

/** Ends an active or pending belief without replacing it (`retract`), or a pending one (`reject`). */
export async function end(
  core: EngineCore,
  scope: Scope,
  id: string,
  action: 'retract' | 'reject',
  options: VersionedOptions,
): Promise<Belief> {
  const op: PlanOperation = action === 'retract' ? { op: 'retract', id, evidence: [] } : { op: 'reject', id };
  await applyOperations(core, scope, [op], [], {
    source: 'manual',
    actor: 'user',
    check: expect(
      id,
      options.expectedVersion,
      action === 'retract' ? ['active', 'pending'] : ['pending'],
      action === 'retract' ? 'retracted' : 'rejected',
    ),
  });
  return read(core, scope, id);
}

/** Approves a pending belief: it becomes active and supersedes the active belief on its key, if any. */
export async function approve(
  core: EngineCore,
  scope: Scope,
  id: string,
  options: VersionedOptions,
): Promise<Belief> {
  await applyOperations(core, scope, [{ op: 'approve', id }], [], {
    source: 'manual',
    actor: 'user',
    check: expect(id, options.expectedVersion, ['pending'], 'approved'),
  });
  return read(core, scope, id);
}

/** Checks a {@link RememberInput} and turns it into the `add` it plans. */
export function rememberOperation(core: EngineCore, input: RememberInput): ExtractionOperation {
  if (!input || typeof input !== 'object') throw new InvalidInputError('input', 'must be an object');
  if (!isBeliefKind(input.kind))
    throw new InvalidInputError('kind', `unknown kind ${JSON.stringify(input.kind)}`);
  assertText(input.attribute, 'attribute', 256);
  assertText(input.value, 'value', core.config.maxTextBytes);
  if (input.statement !== undefined) assertText(input.statement, 'statement', core.config.maxTextBytes);
  return {
    op: 'add',
    kind: input.kind,
    subject: input.subject ?? 'user',
    attribute: input.attribute,
    value: input.value,
    statement: input.statement ?? input.value,
    confidence: input.confidence ?? 1,
    evidence: [],
  };
}

/**
 * Adds a belief directly (a tool or an operator), under the same rules as extraction: the same value confirms, a
 * different value on the same key supersedes.
 */
export async function remember(
  core: EngineCore,
  scope: Scope,
  op: ExtractionOperation,
  source: Extract<BeliefSource, 'manual' | 'tool'>,
): Promise<Belief> {
  const plan = await applyOperations(core, scope, [op], [], { source, actor: 'manual' });
  return read(core, scope, plan.touched[0] ?? plan.inserts[0]?.id);
}

/**
 * Forgets a belief: its content leaves every read path (indexes, outbox, transcript); a content-free tombstone
 * stays. The episodes of the turns it came from are forgotten too, or recall would still return the fact in the
 * user's own words.
 */
export async function forget(
  core: EngineCore,
  scope: Scope,
  id: string,
  options: VersionedOptions,
): Promise<Belief> {
  const before = await core.store.get(scope, id);
  const tombstone = await core.store.forget(scope, id, {
    at: core.now(),
    expectedVersion: options.expectedVersion,
  });
  if (before && before.status !== 'forgotten' && before.kind !== 'episode' && before.evidence.length > 0) {
    for (const episode of await core.store.getActiveByKeys(
      scope,
      episodeKeysOf(before.evidence, core.episodeParts),
    )) {
      if (episode.kind === 'episode' && episode.subject === EPISODE_SUBJECT) {
        await core.store.forget(scope, episode.id, { at: core.now() });
      }
    }
  }
  return tombstone;
}
