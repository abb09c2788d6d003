/**
 * The LoCoMo retrieval protocol: ingest every conversation through the engine's real write path, recall once per
 * question, score the provenance of what came back.
 */
import { loadavg } from 'node:os';
import type {
  Belief,
  BeliefKind,
  EngineConfig,
  EngineConfigInput,
  MemoryEngine,
  OutboxInput,
  Scope,
} from '@mem01/engine';
import { bm25Tokens } from './bm25.js';
import type { Conversation, DataReport, LocomoData, Question, Session, Turn } from './locomo-data.js';
import {
  type Aggregate,
  aggregate,
  answerWordsIn,
  type Breakdown,
  breakdown,
  percentile,
  type QuestionScore,
  scoreQuestion,
} from './metrics.js';

/**
 * How a LoCoMo turn becomes an engine turn. Both LoCoMo speakers are people talking about themselves, so every
 * turn is accepted with role `user` (assistant turns are context only and never evidence), and the speaker's name
 * is written into the text so a belief or episode says whose it is. A file whose speakers are `user` and
 * `assistant` (LongMemEval) has real roles: each turn is accepted with its own (see {@link AssistantTurns}).
 * - `speaker`: `Caroline: I went to the support group yesterday.`
 * - `date-speaker`: `[8 May, 2023] Caroline: …`, like the BM25 reference's session-date prefix.
 * - `raw`: the turn text alone.
 * A shared image adds ` [shares a photo: <caption>]` (the caption is part of what the dataset's speakers saw).
 * Default `date-speaker`: it scored best of the three on LoCoMo (see the README).
 */
export type TurnFormat = 'speaker' | 'date-speaker' | 'raw';

export const TURN_FORMATS: readonly TurnFormat[] = ['speaker', 'date-speaker', 'raw'];

/** The engine text of one turn under a format. */
export function turnText(turn: Turn, session: Session, format: TurnFormat): string {
  const photo = turn.imageCaption ? ` [shares a photo: ${turn.imageCaption}]` : '';
  const body = `${turn.text}${photo}`.trim() || '(no text)';
  if (format === 'raw') return body;
  const spoken = `${turn.speaker}: ${body}`;
  if (format === 'speaker') return spoken;
  return `[${session.dateText.replace(/^.*\bon\s+/i, '') || session.at.slice(0, 10)}] ${spoken}`;
}

/**
 * What becomes of assistant turns in a file with real roles (LongMemEval); LoCoMo's turns are all the user's.
 * - `context`: accepted with role `assistant`, as memSession accepts them: the extractor reads them as context,
 *   they are never episodes and never recalled. The default, because it is what memSession does.
 * - `episodes`: kept and labelled, measured as an alternative: accepted as recallable turns (role `user`, so the
 *   engine keeps them as episodes), their text labelled `assistant:` by the turn format. The engine has no mode that
 *   keeps an assistant turn as an episode without also extracting from it, so here the extractor reads them as the
 *   user's too; the figures measure what recalling them would give, not a product setting.
 */
export type AssistantTurns = 'context' | 'episodes';

export const ASSISTANT_TURNS: readonly AssistantTurns[] = ['context', 'episodes'];

/** The role a turn is accepted with. */
export function turnRole(turn: Turn, assistantTurns: AssistantTurns = 'context'): 'user' | 'assistant' {
  if (turn.role === 'assistant' && assistantTurns === 'context') return 'assistant';
  return 'user';
}

/**
 * Which clock the engine runs on while ingesting.
 * - `wall`: the real clock; `storedAt` is the ingestion time, so every belief looks equally fresh.
 * - `session`: the clock reads each session's date while that session is ingested, and at question time the
 *   question's date when the file gives one (LongMemEval's `question_date`: recall "as of" that date), else the day
 *   after the last session, so `storedAt` (and recency) follow the conversation's own timeline. The engine's recall
 *   takes no reference time of its own, so with the wall clock a question's date is not used.
 */
export type ClockMode = 'wall' | 'session';

/** The engine under test, opened by the caller (see `openSystem`); the runner does not close it. */
export interface EvalSystem {
  readonly engine: MemoryEngine;
  /** The block budget memSession injects with (the runtime's `budgetBytes`). */
  readonly budgetBytes: number;
  /** What the engine runs on, for the report. */
  readonly description: {
    readonly store: string;
    readonly extractor: string;
    readonly embedder: string | null;
    readonly budgetBytes: number;
  };
  /** The engine overrides the system was opened with (`--engine-config`), for the report. */
  readonly engineConfig?: EngineConfigInput | undefined;
  /**
   * Called after each conversation is ingested, before its questions: brings the store to the state a long-running
   * deployment is in (the PostgreSQL store's planner statistics, which autovacuum keeps in production).
   */
  readonly settle?: (() => Promise<void>) | undefined;
  /** Sets the engine's clock (ms since the epoch; null: the wall clock). Required by the session clock. */
  readonly setClock?: ((t: number | null) => void) | undefined;
}

export interface EvalOptions {
  readonly data: LocomoData;
  readonly system: EvalSystem;
  readonly ks: readonly number[];
  /** Row label; default from the engine's `episodic` setting. */
  readonly label?: string | undefined;
  /** The row is exactly memSession's default (see `isSessionDefault`). Default false. */
  readonly sessionDefault?: boolean | undefined;
  readonly turnFormat?: TurnFormat | undefined;
  readonly clock?: ClockMode | undefined;
  /** Assistant turns of a file with real roles; default `context` (memSession's). */
  readonly assistantTurns?: AssistantTurns | undefined;
  /**
   * Simulates a proposed engine change: fetch 4× max k, drop every memory whose provenance adds no dialogue turn
   * beyond the better-ranked ones (a belief restating an episode, two beliefs from one turn), keep max k. Off by default.
   */
  readonly collapseCovered?: boolean | undefined;
  /**
   * Also plays each question the way a user asks it (default true): after the normal pass over a conversation's
   * questions, each question in turn is first accepted as a user turn in a new session of the same user (as
   * memSession stored it when it was asked before), then recalled and rendered again. Reported as `played`; the
   * normal figures are taken before any question is ingested.
   */
  readonly playQuestions?: boolean | undefined;
  /** Prefix of each conversation's user id, so several runs can share a database. */
  readonly userPrefix?: string | undefined;
  readonly onProgress?: ((event: ProgressEvent) => void) | undefined;
}

export type ProgressEvent =
  | { readonly phase: 'ingest'; readonly conversation: string; readonly turns: number }
  | { readonly phase: 'recall'; readonly conversation: string; readonly questions: number };

export interface ConversationStats {
  readonly sampleId: string;
  readonly sessions: number;
  readonly turns: number;
  readonly questions: number;
  readonly ingestMs: number;
  /** Active memories per kind after ingestion. */
  readonly activeByKind: Readonly<Partial<Record<BeliefKind, number>>>;
}

/** A turn the engine refused to accept (the run goes on without it). */
export interface RefusedTurn {
  readonly ref: string;
  readonly bytes: number;
  readonly reason: string;
}

export interface EvalResult {
  readonly label: string;
  /** True only for the row that is exactly memSession's default: nothing overridden but the store. */
  readonly sessionDefault: boolean;
  readonly episodic: boolean;
  readonly collapseCovered: boolean;
  /** The overrides the row was run with (`--engine-config`); null for none. */
  readonly engineConfig: EngineConfigInput | null;
  /** What the engine ran on, and its resolved settings (everything, defaults included). */
  readonly system: EvalSystem['description'] & { readonly config: EngineConfig };
  readonly turnFormat: TurnFormat;
  readonly clock: ClockMode;
  /** How assistant turns were accepted (only files with real roles have any). */
  readonly assistantTurns: AssistantTurns;
  /** Turns accepted with role `assistant` (context for extraction, never episodes). */
  readonly assistantTurnsAccepted: number;
  readonly ks: readonly number[];
  readonly data: DataReport;
  readonly scores: Breakdown;
  /** Per LongMemEval `question_type`, when the file's questions carry one (category 4 joins three types). */
  readonly byQuestionType?: Readonly<Record<string, Aggregate>> | undefined;
  readonly ingest: {
    readonly totalMs: number;
    readonly turns: number;
    readonly msPerTurn: number;
    readonly failures: number;
    readonly extractionCalls: number;
    readonly llmCalls: number;
    readonly activeMemories: number;
    readonly activeByKind: Readonly<Partial<Record<BeliefKind, number>>>;
    /** The engine's `maxTextBytes`: a longer turn is split into several episodes. */
    readonly maxTextBytes: number;
    /** Turns longer than `maxTextBytes` that the engine accepted (and splits). */
    readonly splitTurns: number;
    /** Turns the engine refused; the run goes on without them. */
    readonly refusedTurns: number;
    readonly refused: readonly RefusedTurn[];
  };
  readonly recall: {
    readonly queries: number;
    readonly p50Ms: number;
    readonly p95Ms: number;
    readonly meanMs: number;
    /** Fraction of returned memories (at the largest k) that are episodes. */
    readonly episodeShare: number;
    /** Mean number of memories returned per query (at most the largest k). */
    readonly meanReturned: number;
  };
  /** The rendered block per question (`engine.context` at the runtime's budget, the query cut as memSession cuts it). */
  readonly block: {
    readonly budgetBytes: number;
    readonly meanBytes: number;
    /** Median block size in bytes. */
    readonly p50Bytes: number;
    /**
     * Block bytes per evidence turn the blocks delivered: all the blocks' bytes over the evidence turns they covered
     * (what each delivered piece of evidence cost in model input).
     */
    readonly bytesPerEvidenceTurn: number;
    /** Mean memories in the block. */
    readonly meanItems: number;
    /** Fraction of the block's memories that are episodes. */
    readonly episodeShare: number;
    readonly p50Ms: number;
    readonly p95Ms: number;
  };
  /**
   * The question-played mode (see {@link EvalOptions.playQuestions}): the same scores with each question asked once
   * before; null when not run.
   */
  readonly played: {
    readonly scores: Breakdown;
    readonly block: {
      readonly meanBytes: number;
      readonly meanItems: number;
      readonly p50Bytes: number;
      readonly bytesPerEvidenceTurn: number;
    };
  } | null;
  readonly conversations: readonly ConversationStats[];
  /** Wall time of the row: every conversation ingested and every question recalled and rendered, in ms. */
  readonly wallMs: number;
  /** CPU time (user + system) the process spent on the row, in ms: on a shared machine, the steadier figure. */
  readonly cpuMs: number;
  /** The machine's 1/5/15-minute load averages when the row ended (the machine may be shared). */
  readonly loadAverage: readonly number[];
}

/** The dialogue ids a recalled memory's provenance covers. */
export function provenance(belief: Belief): string[] {
  const refs = new Set<string>();
  for (const e of belief.evidence) if (e.ref) refs.add(e.ref);
  return [...refs];
}

/** Keeps, in order, the memories whose provenance covers a dialogue turn no better-ranked memory covers. */
export function collapseCovered<T extends { readonly belief: Belief }>(ranked: readonly T[]): T[] {
  const seen = new Set<string>();
  return ranked.filter((r) => {
    const refs = provenance(r.belief);
    const fresh = refs.some((ref) => !seen.has(ref));
    for (const ref of refs) seen.add(ref);
    return fresh;
  });
}

/** A day as the answers spell it: "8 May 2023". */
const SPELLED_DAY = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  timeZone: 'UTC',
});

/**
 * The block's ISO dates (its labels: `[user said 2023-05-08]`) also spelt as the answers spell them ("8 May 2023"),
 * so that a date counts as present whichever way it is written.
 */
export function withSpelledDates(text: string): string {
  return text.replace(/\b\d{4}-\d{2}-\d{2}\b/g, (iso) => {
    const day = new Date(`${iso}T00:00:00Z`);
    return Number.isNaN(day.getTime()) ? iso : `${iso} (${SPELLED_DAY.format(day)})`;
  });
}

/** Runs the protocol on one system. */
export async function runLocomo(options: EvalOptions): Promise<EvalResult> {
  const { data, system, ks } = options;
  const { engine } = system;
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 1000)) {
    throw new RangeError('ks must be integers between 1 and 1000');
  }
  const format = options.turnFormat ?? 'date-speaker';
  const clockMode = options.clock ?? 'wall';
  if (clockMode === 'session' && !system.setClock) {
    throw new RangeError('the session clock needs a system with setClock');
  }
  const setClock = system.setClock ?? (() => undefined);
  const assistantTurns = options.assistantTurns ?? 'context';
  const maxK = Math.max(...ks);
  const episodic = engine.config.episodic;
  let failures = 0;
  const off = engine.on((e) => {
    if (e.type === 'error') failures++;
  });
  const scores: QuestionScore[] = [];
  const types: (string | undefined)[] = [];
  const latencies: number[] = [];
  const blockLatencies: number[] = [];
  let returned = 0;
  let episodesReturned = 0;
  let blockBytes = 0;
  const blockSizes: number[] = [];
  let delivered = 0;
  let blockItems = 0;
  let blockEpisodes = 0;
  const long: LongTurns = { maxTextBytes: engine.config.maxTextBytes, split: 0, refused: [], assistant: 0 };
  const perConversation: ConversationStats[] = [];
  const playQuestions = options.playQuestions ?? true;
  const played: QuestionScore[] = [];
  let playedBytes = 0;
  const playedSizes: number[] = [];
  let playedDelivered = 0;
  let playedItems = 0;
  const prefix = options.userPrefix ?? 'locomo';
  // A question's scores: its recalled list at each k, and the block the model would see.
  const scoreOf = (
    q: Question,
    hits: readonly { readonly belief: Belief }[],
    block: { readonly beliefs: readonly Belief[]; readonly text: string },
  ): QuestionScore => {
    const score = scoreQuestion(
      hits.map((h) => provenance(h.belief)),
      q.evidence,
      ks,
      q.category,
      block.beliefs.map(provenance),
    );
    const answerInBlock =
      q.answer === undefined ? undefined : answerWordsIn(q.answer, withSpelledDates(block.text), bm25Tokens);
    return answerInBlock === undefined ? score : { ...score, answerInBlock };
  };
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  try {
    for (const conv of data.conversations) {
      const scope: Scope = { userId: `${prefix}:${conv.sampleId}` };
      const turns = conv.sessions.reduce((n, s) => n + s.turns.length, 0);
      const started = performance.now();
      await ingest(engine, scope, conv, { format, clockMode, setClock, assistantTurns }, long);
      const ingestMs = performance.now() - started;
      await system.settle?.();
      options.onProgress?.({ phase: 'ingest', conversation: conv.sampleId, turns });

      const activeByKind = await countActive(engine, scope);
      for (const q of conv.questions) {
        // Recall "as of" the question's date where the clock can be set.
        if (clockMode === 'session' && q.questionDate !== undefined) setClock(Date.parse(q.questionDate));
        const t0 = performance.now();
        const fetched = await engine.recall(scope, q.question, {
          limit: options.collapseCovered ? Math.min(1000, maxK * 4) : maxK,
        });
        const hits = options.collapseCovered ? collapseCovered(fetched).slice(0, maxK) : fetched;
        latencies.push(performance.now() - t0);
        returned += hits.length;
        episodesReturned += hits.filter((h) => h.belief.kind === 'episode').length;
        // What the model sees: the block memSession's run hook renders for this message.
        const t1 = performance.now();
        const block = await engine.context(scope, q.question, {
          budgetBytes: system.budgetBytes,
        });
        blockLatencies.push(performance.now() - t1);
        blockBytes += block.bytes;
        blockItems += block.beliefs.length;
        blockEpisodes += block.beliefs.filter((b) => b.kind === 'episode').length;
        types.push(q.questionType);
        const score = scoreOf(q, hits, block);
        scores.push(score);
        blockSizes.push(block.bytes);
        delivered += evidenceDelivered(score, q.evidence);
      }
      if (playQuestions) {
        const lastAt = Math.max(...conv.sessions.map((s) => Date.parse(s.at)).filter(Number.isFinite), 0);
        for (const [i, q] of conv.questions.entries()) {
          const at = q.questionDate ?? new Date(lastAt + 86_400_000).toISOString();
          if (clockMode === 'session') setClock(Date.parse(at));
          // The question as the user typed it (memSession stores the message), in a conversation of its own.
          await acceptAll(
            engine,
            [
              {
                scope,
                sessionId: `${conv.sampleId}:asked_${i}`,
                position: 0,
                role: 'user',
                text: q.question,
                at,
                ref: `asked_${i}`,
              },
            ],
            long,
          );
          const hits = await engine.recall(scope, q.question, { limit: maxK });
          const block = await engine.context(scope, q.question, {
            budgetBytes: system.budgetBytes,
          });
          playedBytes += block.bytes;
          playedSizes.push(block.bytes);
          playedItems += block.beliefs.length;
          const score = scoreOf(q, hits, block);
          played.push(score);
          playedDelivered += evidenceDelivered(score, q.evidence);
        }
      }
      options.onProgress?.({
        phase: 'recall',
        conversation: conv.sampleId,
        questions: conv.questions.length,
      });
      setClock(null);
      perConversation.push({
        sampleId: conv.sampleId,
        sessions: conv.sessions.length,
        turns,
        questions: conv.questions.length,
        ingestMs,
        activeByKind,
      });
    }
  } finally {
    off();
  }
  const stats = engine.stats();
  const activeByKind: Partial<Record<BeliefKind, number>> = {};
  for (const c of perConversation) {
    for (const [k, n] of Object.entries(c.activeByKind) as [BeliefKind, number][]) {
      activeByKind[k] = (activeByKind[k] ?? 0) + n;
    }
  }
  const totalMs = perConversation.reduce((n, c) => n + c.ingestMs, 0);
  const turns = perConversation.reduce((n, c) => n + c.turns, 0);
  const queries = latencies.length;
  return {
    label: options.label ?? (episodic ? 'beliefs + episodes' : 'beliefs only'),
    sessionDefault: options.sessionDefault ?? false,
    collapseCovered: !!options.collapseCovered,
    engineConfig: system.engineConfig ?? null,
    system: { ...system.description, config: engine.config },
    episodic,
    turnFormat: format,
    clock: clockMode,
    assistantTurns,
    assistantTurnsAccepted: long.assistant,
    ks: [...ks],
    data: data.report,
    scores: breakdown(scores, ks, data.categories),
    ...byType(scores, types, ks),
    ingest: {
      totalMs,
      turns,
      msPerTurn: turns === 0 ? 0 : totalMs / turns,
      failures,
      extractionCalls: stats.extractionCalls,
      llmCalls: stats.llmCalls,
      activeMemories: Object.values(activeByKind).reduce((n, v) => n + (v ?? 0), 0),
      activeByKind,
      maxTextBytes: long.maxTextBytes,
      splitTurns: long.split,
      refusedTurns: long.refused.length,
      refused: long.refused,
    },
    recall: {
      queries,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      meanMs: queries === 0 ? 0 : latencies.reduce((a, b) => a + b, 0) / queries,
      episodeShare: returned === 0 ? 0 : episodesReturned / returned,
      meanReturned: queries === 0 ? 0 : returned / queries,
    },
    block: {
      budgetBytes: system.budgetBytes,
      meanBytes: queries === 0 ? 0 : blockBytes / queries,
      p50Bytes: percentile(blockSizes, 50),
      bytesPerEvidenceTurn: delivered === 0 ? 0 : blockBytes / delivered,
      meanItems: queries === 0 ? 0 : blockItems / queries,
      episodeShare: blockItems === 0 ? 0 : blockEpisodes / blockItems,
      p50Ms: percentile(blockLatencies, 50),
      p95Ms: percentile(blockLatencies, 95),
    },
    played: playQuestions
      ? {
          scores: breakdown(played, ks, data.categories),
          block: {
            meanBytes: played.length === 0 ? 0 : playedBytes / played.length,
            meanItems: played.length === 0 ? 0 : playedItems / played.length,
            p50Bytes: percentile(playedSizes, 50),
            bytesPerEvidenceTurn: playedDelivered === 0 ? 0 : playedBytes / playedDelivered,
          },
        }
      : null,
    conversations: perConversation,
    wallMs: performance.now() - wallStart,
    cpuMs: ((c) => (c.user + c.system) / 1000)(process.cpuUsage(cpuStart)),
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** How many of the question's evidence turns its block covered. */
function evidenceDelivered(score: QuestionScore, evidence: readonly string[]): number {
  return (score.block ?? 0) * new Set(evidence).size;
}

/** Aggregates per question type, when the questions carry types (LongMemEval); nothing otherwise. */
function byType(
  scores: readonly QuestionScore[],
  types: readonly (string | undefined)[],
  ks: readonly number[],
): { byQuestionType?: Record<string, Aggregate> } {
  const names = [...new Set(types.filter((t): t is string => t !== undefined))].sort();
  if (names.length === 0) return {};
  return {
    byQuestionType: Object.fromEntries(
      names.map((t) => [
        t,
        aggregate(
          scores.filter((_, i) => types[i] === t),
          ks,
        ),
      ]),
    ),
  };
}

/** Long-turn accounting of one run. */
interface LongTurns {
  readonly maxTextBytes: number;
  split: number;
  readonly refused: RefusedTurn[];
  /** Turns accepted with role `assistant`. */
  assistant: number;
}

/**
 * Accepts turns so that one turn never aborts the run: each is checked first (`engine.checkInput`), a refused one is
 * recorded and left out, and one longer than `maxTextBytes` is counted as split (the engine keeps it as several
 * episodes). Should the batch still fail, the turns are accepted one by one and the failing ones recorded.
 */
async function acceptAll(
  engine: MemoryEngine,
  inputs: readonly OutboxInput[],
  long: LongTurns,
): Promise<void> {
  const refuse = (input: OutboxInput, err: unknown) =>
    long.refused.push({
      ref: input.ref ?? `${input.sessionId}#${input.position}`,
      bytes: Buffer.byteLength(input.text),
      reason: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  const ok: OutboxInput[] = [];
  for (const input of inputs) {
    try {
      engine.checkInput(input);
      ok.push(input);
    } catch (err) {
      refuse(input, err);
    }
  }
  try {
    await engine.accept(ok);
  } catch {
    const kept: OutboxInput[] = [];
    for (const input of ok) {
      try {
        await engine.accept([input]);
        kept.push(input);
      } catch (err) {
        refuse(input, err);
      }
    }
    ok.splice(0, ok.length, ...kept);
  }
  long.split += ok.filter((i) => Buffer.byteLength(i.text) > long.maxTextBytes).length;
  long.assistant += ok.filter((i) => i.role === 'assistant').length;
}

/**
 * Accepts every turn of a conversation in session order, each with its session date as `at` and its dialogue id
 * as `ref`, and waits for extraction. With the session clock, each session is flushed before the next so the
 * engine's clock can follow the conversation's dates.
 */
async function ingest(
  engine: MemoryEngine,
  scope: Scope,
  conv: Conversation,
  how: {
    readonly format: TurnFormat;
    readonly clockMode: ClockMode;
    readonly setClock: (t: number | null) => void;
    readonly assistantTurns: AssistantTurns;
  },
  long: LongTurns,
): Promise<void> {
  const { format, clockMode, setClock } = how;
  const inputsOf = (session: Session): OutboxInput[] =>
    session.turns.map((turn, position) => ({
      scope,
      sessionId: `${conv.sampleId}:session_${session.index}`,
      position,
      role: turnRole(turn, how.assistantTurns),
      text: turnText(turn, session, format),
      at: session.at,
      ref: turn.diaId,
    }));
  if (clockMode === 'wall') {
    await acceptAll(engine, conv.sessions.flatMap(inputsOf), long);
    await engine.flush(scope);
    return;
  }
  let last = 0;
  for (const session of conv.sessions) {
    last = Math.max(last, Date.parse(session.at));
    setClock(Date.parse(session.at));
    await acceptAll(engine, inputsOf(session), long);
    await engine.flush(scope);
  }
  setClock(last + 86_400_000);
}

async function countActive(engine: MemoryEngine, scope: Scope): Promise<Partial<Record<BeliefKind, number>>> {
  const counts: Partial<Record<BeliefKind, number>> = {};
  let cursor: string | null = null;
  do {
    const page = await engine.list(scope, { statuses: ['active'], limit: 1000, cursor });
    for (const b of page.items) counts[b.kind] = (counts[b.kind] ?? 0) + 1;
    cursor = page.nextCursor;
  } while (cursor);
  return counts;
}
