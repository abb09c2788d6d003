/**
 * Reconciliation: the one place that decides what a batch of operations does to a user's beliefs.
 * Pure: state in, a commit plan out. The pipeline re-runs it on fresh state when a commit loses a race.
 */
import { assertConfidence, canonicalKey, canonicalValue, createBelief, isBeliefKind } from './belief.js';
import { ExtractionError, InvalidInputError } from './errors.js';
import { groundQuote } from './grounding.js';
import type {
  BeliefPatch,
  BeliefUpdate,
  ExtractionOperation,
  ExtractionTurn,
  OperationEvidence,
} from './ports.js';
import {
  type AuditEvent,
  type Belief,
  type BeliefKind,
  type BeliefMetadata,
  type BeliefOrigin,
  type BeliefSource,
  type CaptureDecision,
  type Evidence,
  isConversational,
  type Scope,
  type TurnRole,
} from './types.js';

const turnOf = (e: { sessionId: string; position: number }): string => `${e.sessionId}\u0000${e.position}`;

/**
 * Lifecycle operations a user or an operator applies to a pending belief by id. They go through {@link reconcile}
 * with the extractor's operations, so one set of rules decides what supersedes what. A user's correction is a
 * `supersede` with source `correction`; retracting is a `retract`.
 */
export type LifecycleOperation =
  | { readonly op: 'approve'; readonly id: string }
  | { readonly op: 'reject'; readonly id: string };

/** Everything {@link reconcile} plans. */
export type PlanOperation = ExtractionOperation | LifecycleOperation;

export interface ReconcileOptions {
  readonly scope: Scope;
  readonly now: string;
  /** Extractions with confidence below this become `pending`. */
  readonly pendingBelow: number;
  readonly source: BeliefSource;
  /** Who made the change, for the audit log. */
  readonly actor: string;
  readonly maxTextBytes: number;
  /** Cap on evidence entries kept per belief (newest kept). */
  readonly maxEvidence?: number;
  /**
   * Require every operation's evidence to be a quote from a user turn of `turns`. True for extractor output;
   * false for manual, tool and correction sources, which carry their own evidence.
   */
  readonly requireGrounding: boolean;
  /**
   * The decision for the belief that operation `index` would insert (a capture policy's, or a host's `state`):
   * `accept` inserts it active whatever its confidence, `pending` holds it for review, `reject` drops the operation
   * (an audit event `reject` without a belief id records it). `revision`: the policy's, recorded on the audit event;
   * null for a decision that is not a policy's. Undefined: the engine's own rule (`pendingBelow`).
   */
  readonly decide?:
    | ((
        index: number,
      ) => { readonly decision: CaptureDecision; readonly revision: string | null } | undefined)
    | undefined;
  /** Host metadata and origin given to every belief this plan inserts (`remember`, `correct`). */
  readonly stamp?:
    | { readonly metadata?: BeliefMetadata | undefined; readonly origin?: BeliefOrigin | undefined }
    | undefined;
  /** The capture grant every belief this plan inserts is captured under (`Belief.grantId`). */
  readonly grantId?: string | undefined;
}

/**
 * What an `add` nearly repeats (`config.duplicateSimilarity`): an active belief of its kind on another key, or the
 * belief an earlier operation of the batch (by index) added or confirmed.
 */
export type NearRepeat = { readonly belief: Belief } | { readonly op: number };

export interface ReconcileState {
  /** Current records of the beliefs operations refer to by id (any status). */
  readonly byId: ReadonlyMap<string, Belief>;
  /** Current active beliefs for every subject + attribute key the operations touch. */
  readonly activeByKey: ReadonlyMap<string, Belief>;
  /**
   * Active episodes of the turns that the beliefs in `byId` and `activeByKey` came from, by key: an episode is
   * retired with a belief drawn from its turn (see {@link reconcile}).
   */
  readonly episodes?: readonly Belief[] | undefined;
  /**
   * By operation index: what that `add` nearly repeats. An `add` whose key holds no active belief confirms it, as an
   * exact repeat confirms the belief on its key, when it is still active as this plan leaves it.
   */
  readonly nearRepeats?: ReadonlyMap<number, NearRepeat> | undefined;
  /**
   * Ids of the scope's capture grants that have ended (revoked or expired). What they captured is no longer memory:
   * an active belief captured under one is never confirmed (a new observation of the same value supersedes it with a
   * new belief, which recall shows), and an extractor's `confirm` of it is dropped.
   */
  readonly endedGrants?: ReadonlySet<string> | undefined;
}

export interface DroppedOperation {
  readonly operation: PlanOperation;
  readonly reason: 'ungrounded' | 'not_active' | 'no_change' | 'rejected';
}

/** A belief the plan would insert, as a capture policy reviews it. */
export interface PlanCandidate {
  /** Index of the operation that inserts it. */
  readonly index: number;
  /** The belief as the plan inserts it. */
  readonly belief: Belief;
  /** The active belief it supersedes, or null. */
  readonly supersedes: Belief | null;
  /** What the engine's own rule makes of it. */
  readonly proposed: 'active' | 'pending';
}

export interface ReconcilePlan {
  readonly inserts: Belief[];
  readonly updates: BeliefUpdate[];
  readonly audit: AuditEvent[];
  readonly dropped: DroppedOperation[];
  /** Ids of the beliefs this plan leaves active or pending, new or confirmed. */
  readonly touched: string[];
  /** The beliefs the plan inserts, each with the operation that inserts it, for a capture policy. */
  readonly candidates: PlanCandidate[];
}

export function beliefKey(subject: string, attribute: string): string {
  return `${canonicalKey(subject)}\u0000${canonicalKey(attribute)}`;
}

/** Keys and ids a batch of operations needs read before {@link reconcile}. */
export function operationRefs(operations: readonly PlanOperation[]): {
  ids: string[];
  keys: { subject: string; attribute: string }[];
} {
  const ids = new Set<string>();
  const keys = new Map<string, { subject: string; attribute: string }>();
  for (const op of operations) {
    if (op.op === 'add') {
      keys.set(beliefKey(op.subject, op.attribute), {
        subject: canonicalKey(op.subject),
        attribute: canonicalKey(op.attribute),
      });
    } else {
      ids.add(op.id);
    }
  }
  return { ids: [...ids], keys: [...keys.values()] };
}

/** Combined confidence of two independent observations (noisy-or), kept below 1 unless one is certain. */
export function combineConfidence(a: number, b: number): number {
  if (a >= 1 || b >= 1) return 1;
  return Math.min(0.99, 1 - (1 - a) * (1 - b));
}

/**
 * Validates extractor output shape (kinds, confidences, ids). Throws `ExtractionError` — nothing is written —
 * when any operation is malformed or names an id that is not among `candidateIds`.
 */
export function validateOperations(
  operations: readonly unknown[],
  candidateIds: ReadonlySet<string>,
  maxTextBytes: number,
): ExtractionOperation[] {
  if (!Array.isArray(operations)) throw new ExtractionError('operations must be an array');
  return operations.map((raw, i) => {
    try {
      return validateOperation(raw, candidateIds, maxTextBytes);
    } catch (err) {
      if (err instanceof ExtractionError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw new ExtractionError(`operation ${i}: ${message}`, { cause: err });
    }
  });
}

function validateOperation(
  raw: unknown,
  candidateIds: ReadonlySet<string>,
  maxTextBytes: number,
): ExtractionOperation {
  if (raw === null || typeof raw !== 'object') throw new InvalidInputError('operation', 'must be an object');
  const op = raw as Record<string, unknown>;
  const evidence = validateEvidence(op.evidence);
  const str = (field: string, max = maxTextBytes): string => {
    const v = op[field];
    if (typeof v !== 'string' || v.trim() === '')
      throw new InvalidInputError(field, 'must be a non-empty string');
    if (new TextEncoder().encode(v).byteLength > max) throw new InvalidInputError(field, `over ${max} bytes`);
    return v;
  };
  const id = (): string => {
    const v = str('id', 256);
    if (!candidateIds.has(v))
      throw new ExtractionError(`operation refers to id ${JSON.stringify(v)}, not a candidate`);
    return v;
  };
  const optDate = (field: string): string | null | undefined => {
    const v = op[field];
    if (v === undefined || v === null) return v as null | undefined;
    if (typeof v !== 'string' || Number.isNaN(Date.parse(v)))
      throw new InvalidInputError(field, 'must be a date');
    return new Date(v).toISOString();
  };
  switch (op.op) {
    case 'add': {
      if (!isBeliefKind(op.kind))
        throw new InvalidInputError('kind', `unknown kind ${JSON.stringify(op.kind)}`);
      assertConfidence(op.confidence);
      return {
        op: 'add',
        kind: op.kind,
        subject: str('subject', 256),
        attribute: str('attribute', 256),
        value: str('value'),
        statement: str('statement'),
        confidence: op.confidence,
        evidence,
        validFrom: optDate('validFrom'),
        validTo: optDate('validTo'),
      };
    }
    case 'confirm': {
      if (op.confidence !== undefined) assertConfidence(op.confidence);
      return { op: 'confirm', id: id(), confidence: op.confidence as number | undefined, evidence };
    }
    case 'supersede': {
      if (op.kind !== undefined && !isBeliefKind(op.kind)) {
        throw new InvalidInputError('kind', `unknown kind ${JSON.stringify(op.kind)}`);
      }
      assertConfidence(op.confidence);
      return {
        op: 'supersede',
        id: id(),
        value: str('value'),
        statement: str('statement'),
        confidence: op.confidence,
        evidence,
        kind: op.kind as BeliefKind | undefined,
        validFrom: optDate('validFrom'),
      };
    }
    case 'retract':
      return { op: 'retract', id: id(), evidence };
    default:
      throw new InvalidInputError('op', `unknown operation ${JSON.stringify(op.op)}`);
  }
}

function validateEvidence(raw: unknown): OperationEvidence[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new InvalidInputError('evidence', 'must be an array');
  return raw.map((e, i) => {
    if (e === null || typeof e !== 'object')
      throw new InvalidInputError(`evidence[${i}]`, 'must be an object');
    const { turnId, quote } = e as Record<string, unknown>;
    if (typeof turnId !== 'string' || turnId === '')
      throw new InvalidInputError(`evidence[${i}].turnId`, 'required');
    if (typeof quote !== 'string') throw new InvalidInputError(`evidence[${i}].quote`, 'must be a string');
    return { turnId, quote };
  });
}

/**
 * Applies operations, in order, to the current state and returns what to commit.
 *
 * - add: same scope + subject + attribute as an active belief → same value confirms it, a different value
 *   supersedes it; otherwise a near repeat (`state.nearRepeats`) confirms the belief it repeats, and anything else is
 *   a new belief. Below `pendingBelow` the belief is `pending` and retires nothing.
 * - confirm: merges evidence and raises confidence; no new record.
 * - supersede: a new belief on the old one's key replaces it (links both ways, `invalidatedAt`).
 * - retract: ends the belief with no replacement.
 * Operations without a grounded quote (when required) or on a belief that is no longer active are dropped.
 */
export function reconcile(
  operations: readonly PlanOperation[],
  turns: readonly ExtractionTurn[],
  state: ReconcileState,
  options: ReconcileOptions,
): ReconcilePlan {
  const maxEvidence = options.maxEvidence ?? 20;
  const turnsById = new Map(turns.map((t) => [t.id, t]));
  const working = new Map<string, Belief>();
  const originalVersion = new Map<string, number>();
  const inserted = new Set<string>();
  const activeByKey = new Map(state.activeByKey);
  const audit: AuditEvent[] = [];
  const dropped: DroppedOperation[] = [];
  const touched = new Set<string>();
  const candidates: PlanCandidate[] = [];
  /** The operation being applied. */
  let opIndex = -1;

  // Every stored record the operations can reach, by id, as read.
  const stored = new Map<string, Belief>(state.byId);
  for (const b of state.activeByKey.values()) stored.set(b.id, b);
  for (const r of state.nearRepeats?.values() ?? []) {
    if ('belief' in r && !stored.has(r.belief.id)) stored.set(r.belief.id, r.belief);
  }
  const current = (id: string): Belief | undefined => working.get(id) ?? stored.get(id);
  /** The belief each `add` left active or pending (inserted or confirmed), by operation index. */
  const addedBy = new Map<number, string>();
  /** The active belief `add` operation `index` nearly repeats, as this plan leaves it. */
  const nearRepeatOf = (index: number): Belief | undefined => {
    const r = state.nearRepeats?.get(index);
    if (!r) return undefined;
    const id = 'belief' in r ? r.belief.id : addedBy.get(r.op);
    const b = id === undefined ? undefined : current(id);
    return b?.status === 'active' ? b : undefined;
  };
  /** Whether a belief is still authorized: captured under no grant, or under one that has not ended. */
  const authorized = (b: Belief): boolean => b.grantId === undefined || !state.endedGrants?.has(b.grantId);
  /** Whether `op`'s value confirms `live`: the same value, on a belief still authorized. */
  const confirms = (live: Belief, value: string): boolean =>
    authorized(live) && canonicalValue(live.value) === canonicalValue(value);
  const put = (b: Belief): void => {
    if (!inserted.has(b.id) && !originalVersion.has(b.id)) {
      const orig = stored.get(b.id);
      if (orig) originalVersion.set(b.id, orig.version);
    }
    working.set(b.id, b);
  };
  const log = (
    action: AuditEvent['action'],
    beliefId: string | null,
    policy?: AuditEvent['policy'] | undefined,
  ): void => {
    audit.push({
      at: options.now,
      scope: options.scope,
      beliefId,
      action,
      actor: options.actor,
      ...(policy ? { policy } : {}),
    });
  };

  // A claim is grounded in what the user said; a reply (the assistant's turn kept verbatim) in the assistant's turn;
  // a conversation summary in any turn of its conversation (`null`).
  const toEvidence = (
    ev: readonly OperationEvidence[],
    role: TurnRole | null = 'user',
  ): Evidence[] | null => {
    const out: Evidence[] = [];
    for (const e of ev) {
      const turn = turnsById.get(e.turnId);
      if (options.requireGrounding) {
        if (!turn || (role !== null && turn.role !== role) || groundQuote(turn.text, e.quote) === null)
          continue;
      }
      if (!turn) continue;
      out.push({
        sessionId: turn.sessionId,
        position: turn.position,
        role: turn.role,
        quote: e.quote.trim().slice(0, 500),
        at: turn.at,
        ...(turn.ref === undefined ? {} : { ref: turn.ref }),
      });
    }
    if (options.requireGrounding && out.length === 0) return null;
    return out;
  };

  const mergeEvidence = (a: readonly Evidence[], b: readonly Evidence[]): Evidence[] => {
    const seen = new Set(a.map((e) => `${e.sessionId}\u0000${e.position}`));
    const out = [...a];
    for (const e of b) {
      const k = `${e.sessionId}\u0000${e.position}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push(e);
      }
    }
    return out.slice(-maxEvidence);
  };

  /** Turns whose beliefs this plan retires, with the beliefs that replace them (null: retracted). */
  const retiredTurns = new Map<string, (string | null)[]>();
  const patch = (b: Belief, set: Omit<BeliefPatch, 'updatedAt'>): Belief => {
    const next = { ...b, ...set, updatedAt: options.now } as Belief;
    put(next);
    if (
      !isConversational(b.kind) &&
      b.status !== next.status &&
      (next.status === 'superseded' || next.status === 'retracted')
    ) {
      for (const e of b.evidence) {
        const by = retiredTurns.get(turnOf(e)) ?? [];
        by.push(next.supersededBy ?? null);
        retiredTurns.set(turnOf(e), by);
      }
    }
    return next;
  };

  const confirm = (b: Belief, evidence: readonly Evidence[], confidence: number): void => {
    patch(b, {
      evidence: mergeEvidence(b.evidence, evidence),
      confidence: options.source === 'correction' ? 1 : combineConfidence(b.confidence, confidence),
    });
    touched.add(b.id);
    log('confirm', b.id);
  };

  const insert = (
    fields: {
      kind: Belief['kind'];
      subject: string;
      attribute: string;
      value: string;
      statement: string;
      confidence: number;
      validFrom?: string | null | undefined;
      validTo?: string | null | undefined;
    },
    evidence: readonly Evidence[],
    replaces: Belief | undefined,
  ): Belief | null => {
    const proposed =
      options.source !== 'correction' && fields.confidence < options.pendingBelow ? 'pending' : 'active';
    const decided = options.source === 'correction' ? undefined : options.decide?.(opIndex);
    const policy =
      decided && decided.revision !== null
        ? { revision: decided.revision, decision: decided.decision }
        : undefined;
    if (decided?.decision === 'reject') {
      dropped.push({ operation: operations[opIndex]!, reason: 'rejected' });
      log('reject', null, policy);
      return null;
    }
    const pending = decided ? decided.decision === 'pending' : proposed === 'pending';
    const belief = createBelief(
      {
        scope: options.scope,
        kind: fields.kind,
        subject: fields.subject,
        attribute: fields.attribute,
        value: fields.value,
        statement: fields.statement,
        confidence: options.source === 'correction' ? 1 : fields.confidence,
        source: options.source,
        evidence,
        status: pending ? 'pending' : 'active',
        supersedes: pending || !replaces ? null : replaces.id,
        validFrom: fields.validFrom ?? null,
        validTo: fields.validTo ?? null,
        at: options.now,
        metadata: options.stamp?.metadata,
        origin: options.stamp?.origin,
        grantId: options.grantId,
      },
      options.maxTextBytes,
    );
    candidates.push({ index: opIndex, belief, supersedes: replaces ?? null, proposed });
    inserted.add(belief.id);
    working.set(belief.id, belief);
    touched.add(belief.id);
    if (pending) {
      log('add', belief.id, policy);
      return belief;
    }
    if (replaces) {
      patch(replaces, {
        status: 'superseded',
        supersededBy: belief.id,
        invalidatedAt: options.now,
        validTo: replaces.validTo ?? belief.validFrom ?? options.now,
      });
      touched.delete(replaces.id);
      log(options.source === 'correction' ? 'correct' : 'supersede', belief.id, policy);
    } else {
      log('add', belief.id, policy);
    }
    activeByKey.set(beliefKey(belief.subject, belief.attribute), belief);
    return belief;
  };

  const retire = (b: Belief, by: string): void => {
    patch(b, {
      status: 'superseded',
      supersededBy: by,
      invalidatedAt: options.now,
      validTo: b.validTo ?? options.now,
    });
    touched.delete(b.id);
  };

  /** The belief active on a key now, as this plan leaves it. */
  const liveOn = (b: Belief): Belief | undefined => {
    const live = activeByKey.get(beliefKey(b.subject, b.attribute));
    const now = live ? current(live.id) : undefined;
    return now && now.status === 'active' ? now : undefined;
  };

  for (const op of operations) {
    opIndex++;
    if (op.op === 'approve' || op.op === 'reject') {
      const target = current(op.id);
      if (target?.status !== 'pending') {
        dropped.push({ operation: op, reason: 'not_active' });
        continue;
      }
      if (op.op === 'reject') {
        patch(target, {
          status: 'retracted',
          invalidatedAt: options.now,
          validTo: target.validTo ?? options.now,
        });
        touched.delete(target.id);
        log('reject', target.id);
        continue;
      }
      // Approving makes the pending belief the active one on its key: the belief active there is superseded.
      const live = liveOn(target);
      const approved = patch(target, { status: 'active', supersededBy: null, invalidatedAt: null });
      if (live && live.id !== target.id) retire(live, target.id);
      activeByKey.set(beliefKey(target.subject, target.attribute), approved);
      touched.add(target.id);
      log('approve', target.id);
      continue;
    }
    const evidence = toEvidence(op.evidence, op.op === 'add' ? evidenceRole(op.kind) : 'user');
    if (evidence === null) {
      dropped.push({ operation: op, reason: 'ungrounded' });
      continue;
    }
    if (op.op === 'add') {
      const key = beliefKey(op.subject, op.attribute);
      const existing = activeByKey.get(key);
      const live = existing ? current(existing.id) : undefined;
      const liveActive = live && live.status === 'active' ? live : undefined;
      const repeated = liveActive ? undefined : nearRepeatOf(opIndex);
      if (liveActive && confirms(liveActive, op.value)) {
        confirm(liveActive, evidence, op.confidence);
        addedBy.set(opIndex, liveActive.id);
      } else if (repeated && authorized(repeated)) {
        confirm(repeated, evidence, op.confidence);
        addedBy.set(opIndex, repeated.id);
      } else {
        const added = insert(op, evidence, liveActive);
        if (added) addedBy.set(opIndex, added.id);
      }
      continue;
    }
    const target = current(op.id);
    if (op.op === 'supersede' && target?.status === 'pending' && options.source === 'correction') {
      // A user correcting a pending belief: the correction replaces whatever is active on the key, and the
      // pending belief it corrects is retired with it.
      const live = liveOn(target);
      const replacement = insert(
        { ...op, kind: op.kind ?? target.kind, subject: target.subject, attribute: target.attribute },
        evidence,
        live ?? target,
      );
      if (live && replacement) retire(target, replacement.id);
      continue;
    }
    if (!target || (target.status !== 'active' && !(op.op === 'retract' && target.status === 'pending'))) {
      // A supersede of a belief that a racing writer already replaced applies to whatever is active on its key.
      if (op.op === 'supersede' && target && target.status !== 'forgotten') {
        const live = activeByKey.get(beliefKey(target.subject, target.attribute));
        const liveNow = live ? current(live.id) : undefined;
        if (liveNow && liveNow.status === 'active' && confirms(liveNow, op.value)) {
          confirm(liveNow, evidence, op.confidence);
        } else {
          insert(
            { ...op, kind: op.kind ?? target.kind, subject: target.subject, attribute: target.attribute },
            evidence,
            liveNow && liveNow.status === 'active' ? liveNow : undefined,
          );
        }
        continue;
      }
      dropped.push({ operation: op, reason: 'not_active' });
      continue;
    }
    switch (op.op) {
      case 'confirm':
        if (!authorized(target)) dropped.push({ operation: op, reason: 'not_active' });
        else confirm(target, evidence, op.confidence ?? 0.6);
        break;
      case 'supersede':
        if (confirms(target, op.value)) {
          confirm(target, evidence, op.confidence);
        } else {
          insert(
            { ...op, kind: op.kind ?? target.kind, subject: target.subject, attribute: target.attribute },
            evidence,
            target,
          );
        }
        break;
      case 'retract':
        patch(target, {
          status: 'retracted',
          invalidatedAt: options.now,
          validTo: target.validTo ?? options.now,
          evidence: mergeEvidence(target.evidence, evidence),
        });
        activeByKey.delete(beliefKey(target.subject, target.attribute));
        touched.delete(target.id);
        log('retract', target.id);
        break;
    }
  }

  // An episode shares the lifecycle of the beliefs drawn from its turn: once one of them is superseded or retracted,
  // the verbatim turn is no longer current either (it would bring the stale value back into the prompt), so it is
  // retired too, linked to the belief that replaced it. This holds for the episodes stored and for those this plan
  // inserts (a batch may hold both the fact and its correction), and whatever else was drawn from the turn: those
  // beliefs stay current on their own. Only a turn that is itself the source of the replacing value (a user
  // correcting themself mid-sentence) keeps its episode.
  if (retiredTurns.size > 0) {
    const episodes = new Map<string, Belief>();
    for (const e of state.episodes ?? []) episodes.set(e.id, e);
    for (const id of inserted) {
      const b = working.get(id);
      if (b?.kind === 'episode') episodes.set(id, b);
    }
    for (const episode of episodes.values()) {
      const live = current(episode.id) ?? episode;
      if (live.kind !== 'episode' || live.status !== 'active') continue;
      for (const e of live.evidence) {
        const turn = turnOf(e);
        const replacers = retiredTurns.get(turn);
        if (replacers === undefined) continue;
        const fromTurn = (id: string | null) =>
          id !== null && (current(id)?.evidence ?? []).some((x) => turnOf(x) === turn);
        if (replacers.some(fromTurn)) continue;
        const by = replacers[0] ?? null;
        if (!stored.has(live.id) && !inserted.has(live.id)) stored.set(live.id, live);
        patch(live, {
          status: by === null ? 'retracted' : 'superseded',
          supersededBy: by,
          invalidatedAt: options.now,
          validTo: live.validTo ?? options.now,
        });
        touched.delete(live.id);
        log(by === null ? 'retract' : 'supersede', live.id);
        break;
      }
    }
  }

  const inserts: Belief[] = [];
  const updates: BeliefUpdate[] = [];
  for (const [id, b] of working) {
    if (inserted.has(id)) {
      inserts.push(b);
      continue;
    }
    const expectedVersion = originalVersion.get(id);
    if (expectedVersion === undefined) continue;
    updates.push({
      id,
      expectedVersion,
      set: {
        status: b.status,
        supersededBy: b.supersededBy,
        invalidatedAt: b.invalidatedAt,
        validTo: b.validTo,
        confidence: b.confidence,
        evidence: b.evidence,
        updatedAt: options.now,
      },
    });
  }
  return { inserts, updates, audit, dropped, touched: [...touched], candidates };
}

/** Whose turns ground an added record: the user's for a claim or an episode, the assistant's for a reply, any for a summary. */
function evidenceRole(kind: Belief['kind']): TurnRole | null {
  if (kind === 'reply') return 'assistant';
  return kind === 'summary' ? null : 'user';
}
