/**
 * `remember(scope, text)`: a host's free text. The extractor turns it into beliefs (new ones, or confirmations and
 * supersessions of beliefs held), planned like any other change; when it draws none, the text is kept as written, as
 * one belief of kind `note`. The result says which.
 */
import { canonicalValue } from './belief.js';
import { checkBudgets, recordUsage } from './budgets.js';
import { extractionCandidates } from './candidates.js';
import { applyOperations } from './commit-plan.js';
import type { EngineCore } from './engine-core.js';
import { InvalidInputError } from './errors.js';
import { groundQuote } from './grounding.js';
import { assertState } from './lifecycle.js';
import { keyed, operationRecord, replayed } from './operations.js';
import type { ExtractionOperation, ExtractionTurn, Extractor } from './ports.js';
import { validateOperations } from './reconcile.js';
import { assertOriginLabel, MAX_REF_BYTES, validateMetadata } from './store-input.js';
import {
  type Belief,
  type BeliefMetadata,
  type BeliefOrigin,
  EXTRACTABLE_KINDS,
  type Scope,
} from './types.js';
import { assertText, contentHash, newId } from './util.js';

/** Options of `remember(scope, text, options)`. */
export interface RememberTextOptions {
  /**
   * The host's label for where the text came from, e.g. `crm` or `settings-page` (letters, digits, `._:/-`, at most
   * 64 characters). Kept on the beliefs it creates as `origin.label`.
   */
  readonly source?: string | undefined;
  /** An external reference, e.g. a ticket id (at most 1024 bytes), kept as `origin.ref`. Needs `source`. */
  readonly sourceRef?: string | undefined;
  /** A stable operation key: a retry with the same text and options returns the first result. */
  readonly key?: string | undefined;
  /** `pending`: the beliefs it creates are held for review (`approve` / `reject`). Default `active`. */
  readonly state?: 'active' | 'pending' | undefined;
  /** Host metadata for the beliefs it creates (a small JSON object). */
  readonly metadata?: BeliefMetadata | undefined;
}

/** What `remember(scope, text)` stored. */
export interface RememberTextResult {
  /**
   * `belief`: the extractor drew beliefs from the text (new ones, or ones held already, confirmed or superseded).
   * `note`: it drew none, and the text is kept as written, as one belief of kind `note` (the same text again confirms
   * that note).
   */
  readonly stored: 'belief' | 'note';
  /**
   * The beliefs the text left active or pending, as stored. Empty only when a racing change retired every belief the
   * extractor named.
   */
  readonly beliefs: readonly Belief[];
}

/** The session id extraction sees for remembered text (the beliefs it creates keep no evidence of it). */
const REMEMBER_SESSION = 'remember';

/** Checks the text and options, and returns them canonical. */
export function checkRememberText(
  core: EngineCore,
  text: unknown,
  options: unknown,
): { text: string; options: RememberTextOptions; origin: BeliefOrigin | undefined } {
  assertText(text, 'text', core.config.maxTextBytes);
  if (options !== undefined && (options === null || typeof options !== 'object'))
    throw new InvalidInputError('options', 'must be an object');
  const o = (options ?? {}) as RememberTextOptions;
  assertState(o.state);
  if (o.source !== undefined) assertOriginLabel(o.source, 'source');
  if (o.sourceRef !== undefined) {
    if (o.source === undefined) throw new InvalidInputError('sourceRef', 'needs source');
    assertText(o.sourceRef, 'sourceRef', MAX_REF_BYTES);
  }
  const origin =
    o.source === undefined
      ? undefined
      : { label: o.source, ...(o.sourceRef === undefined ? {} : { ref: o.sourceRef }) };
  return {
    text: text.trim(),
    options: { ...o, metadata: validateMetadata(o.metadata, 'metadata') },
    origin,
  };
}

/** The `note` that keeps `text` as written: one key per text, so the same text confirms it. */
function noteOperation(text: string): ExtractionOperation {
  return {
    op: 'add',
    kind: 'note',
    subject: 'user',
    attribute: `note:${contentHash(canonicalValue(text))}`,
    value: text,
    statement: text,
    confidence: 1,
    evidence: [],
  };
}

/** Remembers free text for `scope` (canonical, after the user's barrier). */
export async function rememberText(
  core: EngineCore,
  extractor: Extractor,
  scope: Scope,
  text: string,
  options: RememberTextOptions,
  origin: BeliefOrigin | undefined,
  /** The capture grant it is remembered under (the scope's active one), if any. */
  grantId?: string | undefined,
): Promise<RememberTextResult> {
  const state = options.state ?? 'active';
  const request = { text, origin, state, metadata: options.metadata };
  return keyed(
    core,
    scope,
    'remember',
    options.key,
    request,
    async (pending) => {
      await checkBudgets(core, scope.userId);
      const candidates = await extractionCandidates(core, scope, text);
      const turn: ExtractionTurn = {
        id: newId(),
        sessionId: REMEMBER_SESSION,
        position: 0,
        role: 'user',
        text,
        at: core.now(),
      };
      const result = await extractor.extract({
        scope,
        turns: [turn],
        candidates,
        now: core.now(),
        signal: core.abort.signal,
      });
      core.countUsage(result.usage);
      core.stats.extractionCalls++;
      await recordUsage(core, scope.userId, result.usage);
      const kinds = new Set<string>(EXTRACTABLE_KINDS);
      // Only what the text grounds, and no retraction: remembering adds or confirms. The beliefs keep no evidence
      // (the text is the host's, not a turn of a conversation); `origin` says where it came from.
      const drawn = validateOperations(
        result.operations as unknown[],
        new Set(candidates.map((c) => c.id)),
        core.config.maxTextBytes,
      )
        .filter((op) => op.op !== 'retract' && (op.op !== 'add' || kinds.has(op.kind)))
        .filter((op) => op.evidence.some((e) => e.turnId === turn.id && groundQuote(text, e.quote) !== null))
        .map((op) => ({ ...op, evidence: [] }));
      const stored = drawn.length > 0 ? 'belief' : 'note';
      const plan = await applyOperations(
        core,
        scope,
        stored === 'belief' ? drawn : [noteOperation(text)],
        [],
        {
          source: 'manual',
          actor: 'manual',
          nearRepeats: true,
          stamp: { metadata: options.metadata, origin },
          grantId,
          ...(state === 'pending' ? { decision: 'pending' as const } : {}),
          journal: pending ? (p) => operationRecord(core, pending, p.touched, stored) : undefined,
        },
      );
      const beliefs: Belief[] = [];
      for (const id of plan.touched) {
        const b = await core.store.get(scope, id);
        if (b) beliefs.push(b);
      }
      return { stored, beliefs };
    },
    async (record) => ({
      stored: record.outcome === 'note' ? 'note' : 'belief',
      beliefs: await replayed(core, scope, record),
    }),
  );
}
