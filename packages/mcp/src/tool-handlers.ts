/**
 * What each memory tool does with the engine, once the protocol layer (`tools.ts`) has checked its arguments: the
 * calls it makes and the structured and text results it returns. Failures are thrown; `tools.ts` turns them into
 * tool errors.
 */
import {
  type Belief,
  type BeliefKind,
  type BeliefStatus,
  InvalidInputError,
  NotFoundError,
} from '@mem01/engine';
import { assertText, BELIEF_STATUSES, neutralize } from '@mem01/engine/binding-kit';
import { beliefView, dataBlock, type ToolOutput } from './format.js';
import type { ServerContext } from './server-context.js';
import {
  clientSessionId,
  statementPosition,
  statementSessionId,
  storedSessionId,
  type TurnKey,
} from './session-ids.js';
import type { ServedScope } from './user-access.js';

const served = (scope: ServedScope) => ({ userId: scope.userId, namespace: scope.namespace });

/** The arguments of `remember`, as its input schema checked them. */
export interface RememberArgs {
  readonly text: string;
  readonly sessionId?: string | undefined;
  /** @deprecated The earlier name of `sessionId`. */
  readonly conversationId?: string | undefined;
  readonly position?: number | undefined;
  readonly at?: string | undefined;
  readonly wait?: boolean | undefined;
  readonly userId?: string | undefined;
}

/**
 * Accepts the text as a user turn (a turn of the client's conversation, or a statement); with `wait`, reports what
 * its extraction committed.
 */
export async function remember(ctx: ServerContext, args: RememberArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  if (
    args.sessionId !== undefined &&
    args.conversationId !== undefined &&
    args.sessionId !== args.conversationId
  ) {
    throw new InvalidInputError(
      'sessionId',
      'and conversationId (its deprecated name) differ: give sessionId',
    );
  }
  const sessionId = args.sessionId ?? args.conversationId;
  if ((sessionId === undefined) !== (args.position === undefined)) {
    throw new InvalidInputError(
      'sessionId',
      'and position go together: give both for a turn of your conversation, or neither for a statement',
    );
  }
  const text = args.text.trim();
  // A statement is at most a belief's size (the engine accepts longer turns, split into episodes, but a
  // statement to remember that long is a mistake worth a clear error).
  assertText(text, 'text', engine.config.maxTextBytes);
  const when = args.at === undefined ? new Date() : new Date(args.at);
  const turn = (key: TurnKey) => ({
    scope,
    sessionId: key.sessionId,
    position: key.position,
    role: 'user' as const,
    text,
    at: when.toISOString(),
  });
  // A turn of the client's conversation keeps its position (the same words at another one are a new turn); a
  // statement's is a digest of its text and time. The outbox skips a key it holds; for statements, the engine's
  // repeat rule also skips a retry without `at` that repeats the window's previous statement.
  const key: TurnKey =
    sessionId !== undefined && args.position !== undefined
      ? { sessionId: clientSessionId(scope, sessionId), position: args.position }
      : { sessionId: statementSessionId(scope, when), position: statementPosition(text, when) };
  const taken = await engine.accept([turn(key)], { skipRepeats: sessionId === undefined });
  const duplicate = taken.accepted === 0;
  // A skipped repeat names the turn it repeats: its position, and what its extraction committed.
  const [ref = key] = taken.turns;
  let extracted: Belief[] | undefined;
  let pending = 0;
  if (args.wait) {
    // The engine waits for the user's accepted turns (by whichever process holds them) and names the beliefs
    // this turn's extraction committed; the turn itself, kept beside them as an episode, is not listed.
    const settled = await engine.settle(scope, [ref]);
    pending = settled.pending;
    const beliefs = await Promise.all(settled.committed.map((id) => engine.get(scope, id)));
    extracted = beliefs.filter((b): b is Belief => b !== null && b.kind !== 'episode');
  }
  const extractionError = engine.lastError(scope);
  const where = `${ref.sessionId} #${ref.position}`;
  const lines = [
    duplicate
      ? `Already remembered: this repeats text accepted before (${where}); nothing new was stored.`
      : `Remembered: durably accepted as ${where}.${args.wait ? '' : ' Extraction runs in the background.'}`,
  ];
  if (pending > 0) {
    lines.push(`${pending} accepted turn(s) of this user are still waiting for extraction.`);
  }
  if (extracted !== undefined) {
    lines.push(
      extracted.length > 0
        ? `Extraction finished; beliefs from this text:\n${dataBlock(extracted)}`
        : `Extraction finished; no belief was extracted from this text.${noBeliefHint(ctx)}`,
    );
  }
  if (extractionError) lines.push(`Extraction reported a failure (it is retried): ${extractionError}`);
  return {
    structured: {
      ...served(scope),
      accepted: !duplicate,
      duplicate,
      sessionId: ref.sessionId,
      position: ref.position,
      waited: args.wait === true,
      pending,
      ...(extracted ? { extracted: extracted.map(beliefView) } : {}),
      extractionError,
    },
    text: lines.join('\n'),
  };
}

/** The arguments of `recall`, as its input schema checked them. */
export interface RecallArgs {
  readonly query: string;
  readonly limit?: number | undefined;
  readonly minScore?: number | undefined;
  readonly explain?: boolean | undefined;
  readonly userId?: string | undefined;
}

/** The bounded block and the recalled items, with their scores. */
export async function recall(ctx: ServerContext, args: RecallArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const result = await engine.context(scope, args.query, {
    ...(args.limit === undefined ? {} : { limit: args.limit }),
    ...(args.minScore === undefined ? {} : { minScore: args.minScore }),
    explain: args.explain === true,
  });
  const inBlock = new Set(result.beliefs.map((b) => b.id));
  const items = result.recalled.map((r) => ({
    id: r.belief.id,
    kind: r.belief.kind,
    status: r.belief.status,
    statement: neutralize(r.belief.statement),
    version: r.belief.version,
    storedAt: r.belief.storedAt,
    score: r.score,
    tier: r.tier,
    inBlock: inBlock.has(r.belief.id),
    ...(args.explain && r.signals ? { signals: { ...r.signals } } : {}),
  }));
  const lines = [result.text];
  const scoreOf = new Map(result.recalled.map((r) => [r.belief.id, r]));
  if (result.beliefs.length > 0) {
    lines.push('Ids of the notes in the block, in order (id, version, score):');
    result.beliefs.forEach((b, i) => {
      const r = scoreOf.get(b.id);
      const signals =
        args.explain && r?.signals
          ? ` (lexical ${fmt(r.signals.lexical)}, vector ${fmt(r.signals.vector)}, recency ${fmt(r.signals.recency)}, confidence ${fmt(r.signals.confidence)}, kind ${fmt(r.signals.kind)})`
          : '';
      lines.push(`${i + 1}. ${b.id} v${b.version} score ${fmt(r?.score ?? null)}${signals}`);
    });
  }
  if (result.omitted > 0) {
    lines.push(`${result.omitted} more recalled item(s) did not fit the block; see the structured items.`);
  }
  return {
    structured: {
      ...served(scope),
      block: result.text,
      bytes: result.bytes,
      omitted: result.omitted,
      items,
    },
    text: lines.join('\n'),
  };
}

/** The arguments of `list_memories`, as its input schema checked them. */
export interface ListMemoriesArgs {
  readonly status?: BeliefStatus | 'all' | undefined;
  readonly kinds?: readonly BeliefKind[] | undefined;
  readonly sessionId?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly userId?: string | undefined;
}

/** One page of the user's beliefs with one status (of some kinds, from one conversation, when asked). */
export async function listMemories(ctx: ServerContext, args: ListMemoriesArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const status = args.status ?? 'active';
  const statuses: readonly BeliefStatus[] = status === 'all' ? BELIEF_STATUSES : [status];
  const sessionId = args.sessionId === undefined ? undefined : storedSessionId(scope, args.sessionId);
  const page = await engine.list(scope, {
    statuses,
    limit: args.limit ?? 20,
    ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
    ...(args.kinds === undefined ? {} : { kinds: [...new Set(args.kinds)] }),
    ...(sessionId === undefined ? {} : { sessionId }),
  });
  return {
    structured: {
      ...served(scope),
      status,
      ...(sessionId === undefined ? {} : { sessionId }),
      items: page.items.map(beliefView),
      nextCursor: page.nextCursor,
    },
    text: `${dataBlock(page.items)}${page.nextCursor ? `\nMore: call again with cursor "${page.nextCursor}".` : ''}`,
  };
}

/** The arguments of `summarize_conversation`, as its input schema checked them. */
export interface SummarizeConversationArgs {
  readonly sessionId: string;
  readonly userId?: string | undefined;
}

/**
 * Writes (or confirms, or supersedes) the summary of one of the user's conversations with the engine's `summarize`,
 * and returns it; when the conversation has nothing left to summarize, says so (a result, not an error).
 */
export async function summarizeConversation(
  ctx: ServerContext,
  args: SummarizeConversationArgs,
): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const sessionId = storedSessionId(scope, args.sessionId);
  const summary = await engine.summarize(scope, sessionId);
  const from = summary?.validFrom ?? null;
  const to = summary?.validTo ?? null;
  const name = JSON.stringify(neutralize(args.sessionId));
  return {
    structured: {
      ...served(scope),
      sessionId,
      summary: summary === null ? null : beliefView(summary),
      from,
      to,
    },
    text:
      summary === null
        ? `Nothing to summarize: conversation ${name} has no remembered turn of this user left (none, or only questions). No summary was written; an earlier one, if any, was retracted.`
        : `Summary of conversation ${name} (${day(from)} to ${day(to)}), ${summary.id} v${summary.version}:\n${dataBlock([summary])}`,
  };
}

/** The arguments of `memory_history`, as its input schema checked them. */
export interface MemoryHistoryArgs {
  readonly id: string;
  readonly userId?: string | undefined;
}

/** A belief's chain of versions, oldest first. */
export async function memoryHistory(ctx: ServerContext, args: MemoryHistoryArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const chain = await engine.history(scope, { id: args.id });
  if (chain.length === 0) throw new NotFoundError(`belief ${args.id}`);
  return {
    structured: { ...served(scope), id: args.id, chain: chain.map(beliefView) },
    text: `Versions, oldest first:\n${dataBlock(chain)}`,
  };
}

/** The arguments of `correct_memory`, as its input schema checked them. */
export interface CorrectMemoryArgs {
  readonly id: string;
  readonly text: string;
  readonly expectedVersion?: number | undefined;
  readonly userId?: string | undefined;
}

/** Supersedes a belief with the user's corrected text. */
export async function correctMemory(ctx: ServerContext, args: CorrectMemoryArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const belief = await engine.correct(scope, args.id, args.text, {
    expectedVersion: args.expectedVersion,
  });
  return {
    structured: { ...served(scope), replaced: args.id, belief: beliefView(belief) },
    text: `Corrected: ${args.id} is superseded by ${belief.id} (kept in its history).\n${dataBlock([belief])}`,
  };
}

/** The arguments of `forget_memory`, as its input schema checked them. */
export interface ForgetMemoryArgs {
  readonly id: string;
  readonly expectedVersion?: number | undefined;
  readonly userId?: string | undefined;
}

/** Forgets a belief, leaving a content-free tombstone. */
export async function forgetMemory(ctx: ServerContext, args: ForgetMemoryArgs): Promise<ToolOutput> {
  const { engine } = ctx;
  const scope = ctx.scope(args.userId);
  const tombstone = await engine.forget(scope, args.id, { expectedVersion: args.expectedVersion });
  return {
    structured: {
      ...served(scope),
      id: tombstone.id,
      status: tombstone.status,
      version: tombstone.version,
    },
    text: `Forgotten: ${tombstone.id}. Its content was removed; a content-free tombstone remains (v${tombstone.version}).`,
  };
}

function noBeliefHint(ctx: ServerContext): string {
  return ctx.extractorName.includes('local')
    ? ' The offline extractor understands first-person English ("I live in Lisbon", "My favorite color is teal"); set OPENAI_API_KEY on the server for model-based extraction.'
    : '';
}

function day(iso: string | null): string {
  return iso === null ? '–' : iso.slice(0, 10);
}

function fmt(n: number | null): string {
  return n === null ? '–' : n.toFixed(3);
}
