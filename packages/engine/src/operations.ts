/**
 * Operation keys: a mutation given a key is recorded in the store in the same transaction as its change, with a
 * digest of the request. Repeating the key with the same request returns the first result (the beliefs it returned,
 * read again); with another request it fails with `OperationConflictError`. Records hold ids and digests only.
 */
import type { EngineCore } from './engine-core.js';
import { CapabilityError, InvalidInputError, NotFoundError, OperationConflictError } from './errors.js';
import type { OperationAction, OperationJournal, OperationRecord } from './ports.js';
import type { Belief, Scope } from './types.js';
import { assertId, sha256Hex, stableJson } from './util.js';

/** A keyed operation about to run: what its record will hold besides the result. */
export interface PendingOperation {
  readonly key: string;
  readonly fingerprint: string;
  readonly action: OperationAction;
}

/** The record of a pending operation once its result is known. */
export function operationRecord(
  core: EngineCore,
  op: PendingOperation,
  beliefIds: readonly string[],
  outcome: string,
): OperationRecord {
  return { ...op, beliefIds: [...beliefIds], outcome, at: core.now() };
}

/** The store's operation journal; `CapabilityError` naming a store without one. */
export function journalOf(core: EngineCore): OperationJournal {
  const store = core.store as Partial<OperationJournal>;
  if (typeof store.getOperation !== 'function') {
    throw new CapabilityError(core.store.name, 'operation keys (an operation journal: getOperation)');
  }
  return store as OperationJournal;
}

/**
 * Runs a mutation under an optional operation key. Without a key, `run(null)`. With one: a recorded key with the same
 * action and request digest replays (`replay`), another request is an `OperationConflictError`, and otherwise
 * `run(pending)` performs the mutation, whose commit records the key (a racing call with the same key that commits
 * first makes the store refuse this one: it is then replayed or refused the same way).
 */
export async function keyed<T>(
  core: EngineCore,
  scope: Scope,
  action: OperationAction,
  key: string | undefined,
  request: unknown,
  run: (pending: PendingOperation | null) => Promise<T>,
  replay: (record: OperationRecord) => Promise<T>,
): Promise<T> {
  if (key === undefined) return run(null);
  const journal = journalOf(core);
  const fingerprint = await sha256Hex(stableJson({ action, request }));
  for (let attempt = 0; ; attempt++) {
    const recorded = await journal.getOperation(scope, key);
    if (recorded) {
      if (recorded.action !== action || recorded.fingerprint !== fingerprint)
        throw new OperationConflictError(key);
      return replay(recorded);
    }
    try {
      return await run({ key, fingerprint, action });
    } catch (err) {
      // Matched by code: the store may load another copy of the engine's errors.
      if (attempt === 0 && (err as { code?: unknown } | null)?.code === 'duplicate_operation') continue;
      throw err;
    }
  }
}

/**
 * Checks an operation key given to a mutation (an id: 1..256 characters, no control characters); with
 * `config.requireOperationKey`, a mutation without one is refused.
 */
export function assertKey(core: EngineCore, key: unknown): asserts key is string | undefined {
  if (key === undefined) {
    if (core.config.requireOperationKey)
      throw new InvalidInputError('key', 'is required (config.requireOperationKey is on)');
    return;
  }
  assertId(key, 'key');
}

/** The beliefs a recorded operation returned, read again (a forgotten one as its tombstone). */
export async function replayed(core: EngineCore, scope: Scope, record: OperationRecord): Promise<Belief[]> {
  const out: Belief[] = [];
  for (const id of record.beliefIds) {
    const b = await core.store.get(scope, id);
    if (!b) throw new NotFoundError(`belief ${id} of operation ${JSON.stringify(record.key)}`);
    out.push(b);
  }
  return out;
}

/** The one belief a recorded operation returned. */
export async function replayedOne(core: EngineCore, scope: Scope, record: OperationRecord): Promise<Belief> {
  const [b] = await replayed(core, scope, record);
  if (!b) throw new NotFoundError(`the result of operation ${JSON.stringify(record.key)}`);
  return b;
}
