/**
 * The extraction of one outbox claim, the write pipeline's unit of work: the claimed entries as extractor turns,
 * the candidates, the extractor call (within the user's budgets), the validated operations plus episodes, and the
 * plan committed together with the claim's completion.
 */

import { checkBudgets, recordUsage } from './budgets.js';
import { extractionCandidates } from './candidates.js';
import { applyOperations } from './commit-plan.js';
import type { EngineCore } from './engine-core.js';
import { episodeOperations, type PartTurn, partTurns, replyOperations } from './episodes.js';
import type { CapturePolicy, ExtractionOperation, ExtractionTurn, Extractor, OutboxClaim } from './ports.js';
import { type ReconcilePlan, validateOperations } from './reconcile.js';
import type { Scope, Usage } from './types.js';
import { pick } from './util.js';

/** What the extractor sees of an outbox entry (`ref` only when it has one). */
const TURN_FIELDS = [
  'id',
  'sessionId',
  'position',
  'role',
  'text',
  'at',
  'ref',
] as const satisfies readonly (keyof ExtractionTurn)[];

/** The claimed entries as the extractor is given them (long turns split into parts). */
export function claimTurns(claim: OutboxClaim, maxTextBytes: number): PartTurn[] {
  return partTurns(
    claim.entries.map((e): ExtractionTurn => pick(e, TURN_FIELDS)),
    maxTextBytes,
  );
}

/** Who runs the extraction of a claim. */
export interface ClaimExtraction {
  readonly extractor: Extractor;
  /** The worker id, recorded as the actor of the commit. */
  readonly actor: string;
  /** The host's capture policy, run by the planner on what extraction would insert. */
  readonly policy: CapturePolicy | null;
  /** Aborts the extractor's call (the engine closes, or the claim was taken over). Default: the engine's. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Extracts `turns` of a claim (when they hold user text) and commits the reconciled plan, completing the claim in
 * the same transaction. Throws what the budgets, the extractor or the store throw; the caller records and retries.
 */
export async function extractClaim(
  core: EngineCore,
  scope: Scope,
  claim: OutboxClaim,
  turns: readonly PartTurn[],
  { extractor, actor, policy, signal }: ClaimExtraction,
): Promise<{ plan: ReconcilePlan; usage: Usage | undefined }> {
  const userText = turns
    .filter((t) => t.role === 'user')
    .map((t) => t.text)
    .join('\n');
  let operations: ExtractionOperation[] = [];
  let usage: Usage | undefined;
  if (userText.trim() !== '') {
    // A spent budget (or a full result capacity) leaves the turns queued until it frees up.
    await checkBudgets(core, scope.userId);
    const candidates = await extractionCandidates(core, scope, userText);
    const result = await extractor.extract({
      scope,
      turns,
      candidates,
      now: core.now(),
      signal: signal ?? core.abort.signal,
    });
    usage = result.usage;
    core.countUsage(usage);
    await recordUsage(core, scope.userId, usage);
    core.stats.extractionCalls++;
    operations = validateOperations(
      result.operations as unknown[],
      new Set(candidates.map((c) => c.id)),
      core.config.maxTextBytes,
    );
  }
  if (core.config.episodic) operations = [...operations, ...episodeOperations(turns)];
  if (core.config.replies) operations = [...operations, ...replyOperations(turns, core.config.maxTextBytes)];
  const plan = await applyOperations(core, scope, operations, turns, {
    source: 'extracted',
    actor,
    nearRepeats: true,
    complete: { claimId: claim.claimId, entryIds: claim.entries.map((e) => e.id) },
    policy: policy ?? undefined,
    // A claim holds the turns of one grant: what they produce carries it.
    grantId: claim.entries[0]?.grantId,
  });
  return { plan, usage };
}
