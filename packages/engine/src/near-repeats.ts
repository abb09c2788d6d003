/**
 * Near repeats (`config.duplicateSimilarity`): the `add` operations whose statement says again, in nearly the same
 * words, what an active belief of the same kind says on another key. Reconciliation plans each as an exact repeat of
 * that belief (see `ReconcileState.nearRepeats`); this module only finds them, with the store's vector search.
 */
import type { EngineCore } from './engine-core.js';
import type { AddOperation } from './ports.js';
import { beliefKey, type NearRepeat, type PlanOperation } from './reconcile.js';
import { isConversational, type Scope } from './types.js';
import { cosineSimilarity } from './util.js';

/**
 * Nearest neighbours read per probe. The vector index holds episodes too (one per user turn), so a belief of the
 * probe's kind may sit behind verbatim turns that say the same. A repeat behind more than this many closer vectors is
 * not found, and the `add` is planned as without the check.
 */
const NEIGHBOURS = 20;

/** The embedded statements of a batch's `add` operations that may be near repeats. */
export interface RepeatProbes {
  /** Operation index → the statement's vector. */
  readonly vectors: ReadonlyMap<number, Float32Array>;
  /** Statement → vector, so the commit does not embed the same statement again. */
  readonly byStatement: ReadonlyMap<string, Float32Array>;
}

/**
 * Embeds the statements of the `add` operations that near repeats apply to (not episodes: a turn is kept as said;
 * their texts are embedded in the same request, for the commit),
 * or null when the check is off or cannot run: no embedder, no vector search, or a lexical-fuzzy embedder. Its
 * similarity is shared words, and the words it leaves out carry the difference: the offline hashing embedder gives 1.0
 * to "The user likes it." and "The user likes me.", and on LoCoMo 2 of the 5 pairs it put at 0.9 or above were
 * different claims.
 */
export async function repeatProbes(
  core: EngineCore,
  scope: Scope,
  operations: readonly PlanOperation[],
): Promise<RepeatProbes | null> {
  const threshold = core.config.duplicateSimilarity;
  const embedder = core.embedder;
  if (threshold === null || !core.vectors || !embedder || embedder.kind === 'lexical') return null;
  const adds: { index: number; statement: string }[] = [];
  const episodes: string[] = [];
  operations.forEach((op, index) => {
    if (op.op !== 'add') return;
    if (isConversational(op.kind)) episodes.push(op.statement);
    else adds.push({ index, statement: op.statement });
  });
  if (adds.length === 0) return null;
  // The episodes' texts go in the same request: the commit embeds them anyway, and then reuses these vectors, so the
  // check costs no extra embedder call.
  const statements = [...new Set([...adds.map((a) => a.statement), ...episodes])];
  const embedded = await core.embedTexts(statements, scope, core.abort.signal);
  const byStatement = new Map<string, Float32Array>();
  statements.forEach((s, i) => {
    const v = embedded[i];
    if (v) byStatement.set(s, v);
  });
  const vectors = new Map<number, Float32Array>();
  for (const a of adds) {
    const v = byStatement.get(a.statement);
    if (v) vectors.set(a.index, v);
  }
  return { vectors, byStatement };
}

/**
 * For each probed `add`, what it nearly repeats, read now: the most similar active belief of its kind on another key
 * (similarity at least `config.duplicateSimilarity`), else the first earlier `add` of the batch of its kind on another
 * key that similar. An `add` on the key of an active belief is left to the key rules (same value confirms, another
 * supersedes), as is one that repeats nothing.
 */
export async function findNearRepeats(
  core: EngineCore,
  scope: Scope,
  operations: readonly PlanOperation[],
  probes: RepeatProbes,
): Promise<Map<number, NearRepeat>> {
  const threshold = core.config.duplicateSimilarity ?? 1;
  const out = new Map<number, NearRepeat>();
  const probed: { index: number; add: AddOperation; key: string; v: Float32Array }[] = [];
  for (const [index, v] of probes.vectors) {
    const add = operations[index];
    if (add?.op !== 'add') continue;
    probed.push({ index, add, key: beliefKey(add.subject, add.attribute), v });
  }
  probed.sort((a, b) => a.index - b.index);
  for (const p of probed) {
    const hits = await core.store.searchVector(scope, p.v, { limit: NEIGHBOURS });
    const hit = hits.find(
      (h) =>
        h.score >= threshold &&
        h.belief.status === 'active' &&
        h.belief.kind === p.add.kind &&
        beliefKey(h.belief.subject, h.belief.attribute) !== p.key,
    );
    if (hit) {
      out.set(p.index, { belief: hit.belief });
      continue;
    }
    const earlier = probed.find(
      (q) =>
        q.index < p.index &&
        q.add.kind === p.add.kind &&
        q.key !== p.key &&
        cosineSimilarity(q.v, p.v) >= threshold,
    );
    if (earlier) out.set(p.index, { op: earlier.index });
  }
  return out;
}
