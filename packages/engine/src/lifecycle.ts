/**
 * Lifecycle operations by hand (a user, a tool, an operator): correct, retract, approve, reject, remember and
 * forget. Every one but forget is planned by {@link reconcile} through {@link applyOperations}, so the rules of what
 * supersedes what are the same as for extraction, and a lost race is re-read and re-planned.
 */
import { isBeliefKind } from './belief.js';
import { applyOperations } from './commit-plan.js';
import type { EngineCore } from './engine-core.js';
import { CaptureGrantEndedError, InvalidInputError, NotFoundError, VersionConflictError } from './errors.js';
import { keyed, operationRecord, type PendingOperation, replayedOne } from './operations.js';
import type { ExtractionOperation, OperationAction } from './ports.js';
import type { PlanOperation, ReconcilePlan } from './reconcile.js';
import { validateMetadata } from './store-input.js';
import type { Belief, BeliefKind, BeliefMetadata, BeliefSource, BeliefStatus, Scope } from './types.js';
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
  /**
   * The version the caller read; a different stored version fails with `VersionConflictError`. Optional unless
   * `config.requireVersion` is on.
   */
  readonly expectedVersion?: number | undefined;
  /**
   * A stable operation key (1..256 characters, unique per user + namespace): the change is recorded with it in the
   * same transaction. Repeating the key with the same request returns the first result (its belief read again, so a
   * later forget shows as the tombstone); with another request it fails with `OperationConflictError`.
   */
  readonly key?: string | undefined;
}

/** Options of `remember` (the structured form). */
export interface RememberOptions {
  /** A stable operation key, as for {@link VersionedOptions.key}. */
  readonly key?: string | undefined;
  /** `pending`: held for review (`approve` / `reject`), retiring nothing until approved. Default `active`. */
  readonly state?: 'active' | 'pending' | undefined;
  /** Host metadata for the new belief (a small JSON object, see `MAX_METADATA_BYTES`). */
  readonly metadata?: BeliefMetadata | undefined;
}

export function assertVersion(v: unknown): void {
  if (!Number.isInteger(v) || (v as number) < 1)
    throw new InvalidInputError('expectedVersion', 'must be a positive integer');
}

/** Checks `expectedVersion` (required when `config.requireVersion` is on). */
export function checkVersion(core: EngineCore, v: unknown): void {
  if (v === undefined) {
    if (core.config.requireVersion)
      throw new InvalidInputError('expectedVersion', 'is required (config.requireVersion is on)');
    return;
  }
  assertVersion(v);
}

/** Checks `remember`'s state option. */
export function assertState(v: unknown): asserts v is 'active' | 'pending' | undefined {
  if (v !== undefined && v !== 'active' && v !== 'pending')
    throw new InvalidInputError('state', 'must be "active" or "pending"');
}

/** The journal of a keyed lifecycle commit: the belief it returns, by id. */
function journalFor(
  core: EngineCore,
  pending: PendingOperation | null,
  result: (plan: ReconcilePlan) => string | undefined,
  outcome = 'belief',
) {
  if (!pending) return undefined;
  return (plan: ReconcilePlan) => {
    const id = result(plan);
    return operationRecord(core, pending, id === undefined ? [] : [id], outcome);
  };
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
  options: VersionedOptions & { readonly metadata?: BeliefMetadata | undefined },
): Promise<Belief> {
  const value = text.trim();
  const op: PlanOperation = { op: 'supersede', id, value, statement: value, confidence: 1, evidence: [] };
  const request = { id, text: value, expectedVersion: options.expectedVersion, metadata: options.metadata };
  const activeAfter = (plan: ReconcilePlan) => plan.inserts[0]?.id ?? plan.touched[0];
  return keyed(
    core,
    scope,
    'correct',
    options.key,
    request,
    async (pending) => {
      const plan = await applyOperations(core, scope, [op], [], {
        source: 'correction',
        actor: 'user',
        check: expect(id, options.expectedVersion, ['active', 'pending'], 'corrected'),
        // The replacement keeps the host metadata of the belief it corrects, unless new metadata is given.
        stamp: (byId) => ({ metadata: options.metadata ?? byId.get(id)?.metadata }),
        journal: journalFor(core, pending, activeAfter),
      });
      const inserted = plan.inserts[0];
      return inserted ?? read(core, scope, plan.touched[0]);
    },
    (record) => replayedOne(core, scope, record),
  );
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
  const check = expect(
    id,
    options.expectedVersion,
    action === 'retract' ? ['active', 'pending'] : ['pending'],
    action === 'retract' ? 'retracted' : 'rejected',
  );
  return changeOne(core, scope, id, action, options, (pending) =>
    applyManual(core, scope, id, op, check, pending),
  );
}

/**
 * Approves a pending belief: it becomes active and supersedes the active belief on its key, if any. A belief captured
 * under a grant that has ended (revoked or expired) is refused with `CaptureGrantEndedError`.
 */
export async function approve(
  core: EngineCore,
  scope: Scope,
  id: string,
  options: VersionedOptions,
): Promise<Belief> {
  const checkPending = expect(id, options.expectedVersion, ['pending'], 'approved');
  const check = (byId: ReadonlyMap<string, Belief>, ended: ReadonlyMap<string, 'revoked' | 'expired'>) => {
    checkPending(byId);
    const grantId = byId.get(id)?.grantId;
    const how = grantId === undefined ? undefined : ended.get(grantId);
    if (grantId !== undefined && how !== undefined) throw new CaptureGrantEndedError(id, grantId, how);
  };
  return changeOne(core, scope, id, 'approve', options, (pending) =>
    applyManual(core, scope, id, { op: 'approve', id }, check, pending),
  );
}

/**
 * A keyed change of belief `id` by `action`: `options.key` records it with the change; a repeated key returns the
 * belief read again. `run` makes the change and returns the belief.
 */
function changeOne(
  core: EngineCore,
  scope: Scope,
  id: string,
  action: OperationAction,
  options: VersionedOptions,
  run: (pending: PendingOperation | null) => Promise<Belief>,
): Promise<Belief> {
  const request = { id, expectedVersion: options.expectedVersion };
  return keyed(core, scope, action, options.key, request, run, (record) => replayedOne(core, scope, record));
}

/** Applies one manual operation on belief `id` (after `check`, on every attempt) and returns the belief then. */
async function applyManual(
  core: EngineCore,
  scope: Scope,
  id: string,
  op: PlanOperation,
  check: (byId: ReadonlyMap<string, Belief>, ended: ReadonlyMap<string, 'revoked' | 'expired'>) => void,
  pending: PendingOperation | null,
): Promise<Belief> {
  await applyOperations(core, scope, [op], [], {
    source: 'manual',
    actor: 'user',
    check,
    journal: journalFor(core, pending, () => id),
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
  options: RememberOptions = {},
  /** The capture grant it is remembered under (the scope's active one), if any. */
  grantId?: string | undefined,
): Promise<Belief> {
  const stamp = { metadata: options.metadata };
  const state = options.state ?? 'active';
  const result = (plan: ReconcilePlan) => plan.touched[0] ?? plan.inserts[0]?.id;
  return keyed(
    core,
    scope,
    'remember',
    options.key,
    { op, source, state, metadata: options.metadata },
    async (pending) => {
      const plan = await applyOperations(core, scope, [op], [], {
        source,
        actor: 'manual',
        stamp,
        grantId,
        ...(state === 'pending' ? { decision: 'pending' as const } : {}),
        journal: journalFor(core, pending, result),
      });
      return read(core, scope, result(plan));
    },
    (record) => replayedOne(core, scope, record),
  );
}

/** Checks `remember`'s options and returns them canonical (metadata a detached copy). */
export function checkRememberOptions(options: unknown): RememberOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object')
    throw new InvalidInputError('options', 'must be an object');
  const o = options as RememberOptions;
  assertState(o.state);
  return {
    key: o.key,
    state: o.state,
    metadata: validateMetadata(o.metadata, 'metadata'),
  };
}

/**
 * Forgets a belief: its content leaves every read path (indexes, outbox, transcript); a content-free tombstone
 * stays. The store forgets in the same transaction the episodes `planForget` (`redact.ts`) names: those of the turns the
 * belief came from and every other episode of the scope whose text carries its value or statement, or recall would
 * still return the fact in the user's own words; the transcript turns of those episodes lose their text too.
 */
export async function forget(
  core: EngineCore,
  scope: Scope,
  id: string,
  options: VersionedOptions,
): Promise<Belief> {
  return changeOne(core, scope, id, 'forget', options, (pending) =>
    core.store.forget(scope, id, {
      at: core.now(),
      expectedVersion: options.expectedVersion,
      ...(pending ? { operation: operationRecord(core, pending, [id], 'forgotten') } : {}),
    }),
  );
}
