/**
 * The summary tier: one compressed, dated summary of each conversation, kept as a `summary` belief on a key of its
 * own (`summary:<session id>`), so a new summary of the same conversation supersedes the last one and its history
 * stays. Written on demand (`summarize(scope, sessionId)`) and, with `config.autoSummaries`, by the write pipeline
 * when a conversation has grown by `summaryAfterTurns` turns or the user comes back after `summaryIdleMs`.
 *
 * The summary is drawn from the conversation's records that are still active (the user's episodes and the
 * assistant's replies), so a forgotten or corrected turn is never summarized; forgetting a turn it drew on retires
 * it, and the engine writes it again from what is left.
 */

import { checkBudgets, recordUsage } from './budgets.js';
import { applyOperations } from './commit-plan.js';
import type { EngineCore } from './engine-core.js';
import { conversationKey } from './episodes.js';
import { describeError, InvalidInputError } from './errors.js';
import type {
  ExtractionTurn,
  OperationEvidence,
  Summarizer,
  SummaryRequest,
  SummaryResult,
  SummaryTurn,
} from './ports.js';
import { clip, contentStems, isQuestionOnly, sentences } from './text.js';
import type { Belief, Scope } from './types.js';
import { utf8Length } from './util.js';

/** The subject every summary is filed under. */
export const SUMMARY_SUBJECT = 'conversation';

/** The key of the summary of one conversation (see `conversationKey`: `Trip-1` and `trip_1` have one each). */
export function summaryKey(sessionId: string): string {
  return conversationKey('summary', sessionId);
}

/** Most records of one conversation read for its summary (the newest are kept when it has more). */
const MAX_SUMMARY_RECORDS = 2000;
/** Most evidence items a summary keeps: the turns it quotes, or the first of those a model's summary draws on. */
const MAX_SUMMARY_SOURCES = 200;
/** Most sentences the extractive summarizer weighs (the conversation's last). */
const MAX_POOL_SENTENCES = 2000;
/** Sentences shorter than this many content words say too little to summarize a conversation. */
const MIN_SENTENCE_WORDS = 3;

/**
 * The engine's own summarizer, offline and deterministic: the sentences that carry the most of what the user said in
 * the conversation (SumBasic: each sentence scores by how frequent its words are in the conversation, and a chosen
 * sentence's words count for less afterwards, so the summary covers several topics rather than one). Questions and
 * requests are left out; the chosen sentences keep their order, joined with `…` where sentences were skipped.
 */
export function extractiveSummarizer(): Summarizer {
  return {
    name: 'extractive',
    summarize: async (request: SummaryRequest): Promise<SummaryResult> => extractiveSummary(request),
  };
}

interface Sentence {
  readonly turnId: string;
  readonly order: number;
  readonly text: string;
  readonly stems: readonly string[];
}

/** The sentences of `turns` a summary may keep: statements (no question, no request) of a few content words. */
function candidateSentences(turns: readonly SummaryTurn[], maxBytes: number): Sentence[] {
  const pool: Sentence[] = [];
  for (const t of turns) {
    for (const text of sentences(t.text)) {
      if (isQuestionOnly(text) || utf8Length(text) > maxBytes) continue;
      const stems = [...new Set(contentStems(text))];
      if (stems.length >= MIN_SENTENCE_WORDS) pool.push({ turnId: t.id, order: pool.length, text, stems });
    }
  }
  return pool;
}

function extractiveSummary({ turns, maxBytes }: Pick<SummaryRequest, 'turns' | 'maxBytes'>): SummaryResult {
  // What the user said; a conversation where the user said nothing to summarize is summarized from the assistant's side.
  const user = candidateSentences(
    turns.filter((t) => t.role === 'user'),
    maxBytes,
  );
  // Each pick rescans what is left: a very long conversation is summarized from its last sentences.
  const pool = (user.length > 0 ? user : candidateSentences(turns, maxBytes)).slice(-MAX_POOL_SENTENCES);
  if (pool.length === 0) return { text: '', sources: [] };
  const weight = new Map<string, number>();
  let total = 0;
  for (const s of pool) {
    for (const w of s.stems) weight.set(w, (weight.get(w) ?? 0) + 1);
    total += s.stems.length;
  }
  for (const [w, n] of weight) weight.set(w, n / total);
  const score = (s: Sentence): number =>
    s.stems.reduce((sum, w) => sum + (weight.get(w) ?? 0), 0) / s.stems.length;
  const chosen: Sentence[] = [];
  const left = new Set(pool);
  let used = 0;
  const shortest = Math.min(...pool.map((s) => utf8Length(s.text)));
  while (left.size > 0 && maxBytes - used > shortest) {
    let best: Sentence | null = null;
    let bestScore = -1;
    for (const s of left) {
      const v = score(s);
      if (v > bestScore) {
        best = s;
        bestScore = v;
      }
    }
    if (best === null) break;
    left.delete(best);
    const cost = utf8Length(best.text) + (chosen.length > 0 ? 5 : 0);
    if (used + cost > maxBytes) continue;
    chosen.push(best);
    used += cost;
    for (const w of best.stems) weight.set(w, (weight.get(w) ?? 0) ** 2);
  }
  chosen.sort((a, b) => a.order - b.order);
  let text = '';
  let prev = -2;
  for (const s of chosen) {
    if (text !== '') text += s.order === prev + 1 ? ' ' : ' … ';
    text += s.text;
    prev = s.order;
  }
  return { text, sources: chosen.map((s) => ({ turnId: s.turnId, quote: s.text })) };
}

/** The conversation's active episodes and replies, as the turns a summarizer reads (parts of a split turn joined). */
async function conversationTurns(
  core: EngineCore,
  scope: Scope,
  sessionId: string,
): Promise<ExtractionTurn[]> {
  const records: Belief[] = [];
  let cursor: string | null = null;
  do {
    const page = await core.store.list(scope, {
      kinds: ['episode', 'reply'],
      sessionId,
      limit: 1000,
      cursor,
    });
    records.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null && records.length < MAX_SUMMARY_RECORDS);
  const byTurn = new Map<number, { turn: ExtractionTurn; parts: { key: string; text: string }[] }>();
  for (const b of records) {
    const e = b.evidence.find((x) => x.sessionId === sessionId);
    if (!e) continue;
    const entry = byTurn.get(e.position) ?? {
      turn: {
        id: `turn:${e.position}`,
        sessionId,
        position: e.position,
        role: b.kind === 'reply' ? 'assistant' : 'user',
        text: '',
        at: e.at,
        ...(e.ref === undefined ? {} : { ref: e.ref }),
      },
      parts: [],
    };
    entry.parts.push({ key: b.attribute, text: b.statement });
    byTurn.set(e.position, entry);
  }
  return [...byTurn.values()]
    .sort((a, b) => a.turn.position - b.turn.position)
    .map(({ turn, parts }) => ({
      ...turn,
      // A split turn's parts are keyed `…:<position>`, `…:<position>#1`, …: their keys sort in order of the part.
      text: parts
        .sort((a, b) => a.key.length - b.key.length || (a.key < b.key ? -1 : 1))
        .map((p) => p.text)
        .join(' '),
    }));
}

/** Who writes a summary, for the audit log, and how. */
export interface SummarizeOptions {
  readonly summarizer: Summarizer;
  readonly actor: string;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Writes the summary of one conversation of `scope` from its records that are still active, and commits it: a new
 * one, the same one confirmed, or a new one superseding the last. Returns the active summary, or null when the
 * conversation has nothing left to summarize (its last summary, if any, is then retired).
 */
export async function summarizeSession(
  core: EngineCore,
  scope: Scope,
  sessionId: string,
  { summarizer, actor, signal }: SummarizeOptions,
): Promise<Belief | null> {
  const turns = await conversationTurns(core, scope, sessionId);
  const maxBytes = core.config.summaryBytes;
  let result: SummaryResult = { text: '' };
  if (turns.length > 0) {
    // A model's summary is one call, in the user's budgets (capacity aside: a summary is not a claim).
    await checkBudgets(core, scope.userId, false);
    result = await summarizer.summarize({
      scope,
      sessionId,
      turns: turns.map(
        (t): SummaryTurn => ({ id: t.id, position: t.position, role: t.role, text: t.text, at: t.at }),
      ),
      maxBytes,
      now: core.now(),
      signal: signal ?? core.abort.signal,
    });
    if (result === null || typeof result !== 'object' || typeof result.text !== 'string') {
      throw new InvalidInputError('summarizer', `${summarizer.name} returned no { text }`);
    }
    core.countUsage(result.usage);
    await recordUsage(core, scope.userId, result.usage);
  }
  const text = clip(result.text.replace(/\s+/g, ' ').trim(), maxBytes);
  const [current] = await core.store.getActiveByKeys(scope, [
    { subject: SUMMARY_SUBJECT, attribute: summaryKey(sessionId) },
  ]);
  if (text === '') {
    if (current) {
      await applyOperations(core, scope, [{ op: 'retract', id: current.id, evidence: [] }], [], {
        source: 'manual',
        actor,
      });
    }
    return null;
  }
  const first = turns[0]!;
  const plan = await applyOperations(
    core,
    scope,
    [
      {
        op: 'add',
        kind: 'summary',
        subject: SUMMARY_SUBJECT,
        attribute: summaryKey(sessionId),
        value: text,
        statement: text,
        confidence: 1,
        // The span of the conversation it summarizes: `autoSummaries` reads the end to tell whether it is current.
        validFrom: first.at,
        validTo: turns[turns.length - 1]!.at,
        evidence: sources(turns, result.sources),
      },
    ],
    turns,
    { source: 'extracted', actor },
  );
  const id = plan.candidates[0]?.belief.id ?? current?.id;
  return id === undefined ? null : core.store.get(scope, id);
}

/** The summary's evidence: the turns the summarizer names (known ones only), or every user turn it was given. */
function sources(
  turns: readonly ExtractionTurn[],
  named: readonly OperationEvidence[] | undefined,
): OperationEvidence[] {
  const ids = new Set(turns.map((t) => t.id));
  const given = Array.isArray(named)
    ? named.filter(
        (s) => s && typeof s.turnId === 'string' && ids.has(s.turnId) && typeof s.quote === 'string',
      )
    : [];
  if (given.length > 0) return given.slice(0, MAX_SUMMARY_SOURCES);
  const user = turns.filter((t) => t.role === 'user');
  return (user.length > 0 ? user : turns)
    .slice(0, MAX_SUMMARY_SOURCES)
    .map((t) => ({ turnId: t.id, quote: leadingWords(t.text) }));
}

/** The first words of a text (at most 120 bytes), as a verbatim quote of it. */
function leadingWords(text: string): string {
  let out = '';
  for (const word of text.trim().split(/\s+/)) {
    const next = out === '' ? word : `${out} ${word}`;
    if (utf8Length(next) > 120) break;
    out = next;
  }
  return out === '' ? text.trim().slice(0, 40) : out;
}

/** {@link summarizeSession} with the engine's summarizer, announced as a `summarized` event. */
export async function writeSummary(
  core: EngineCore,
  scope: Scope,
  sessionId: string,
  actor: string,
  signal?: AbortSignal,
): Promise<Belief | null> {
  const started = performance.now();
  const summary = await summarizeSession(core, scope, sessionId, {
    summarizer: core.summarizer,
    actor,
    signal,
  });
  core.stats.summaries++;
  core.emit({
    type: 'summarized',
    scope,
    sessionId,
    summary: summary?.id ?? null,
    ms: performance.now() - started,
  });
  return summary;
}

/** The conversation a summary summarizes (its key names it). */
export function summarizedSession(summary: Pick<Belief, 'evidence'>): string | null {
  return summary.evidence[0]?.sessionId ?? null;
}

/** The scope's active summaries (at most the first 1000), by id. */
export async function activeSummaries(core: EngineCore, scope: Scope): Promise<Map<string, Belief>> {
  const page = await core.store.list(scope, { kinds: ['summary'], limit: 1000 });
  return new Map(page.items.map((b) => [b.id, b]));
}

/**
 * After a forget: writes again, from what is left, the summaries of `before` (the scope's active summaries read
 * before it) that it retired. A failure is logged, never raised: the forget itself is done.
 */
export async function rewriteRetired(
  core: EngineCore,
  scope: Scope,
  before: ReadonlyMap<string, Belief>,
  forgotten: string,
): Promise<void> {
  for (const [id, summary] of before) {
    if (id === forgotten) continue;
    const now = await core.store.get(scope, id);
    const sessionId = summarizedSession(summary);
    if (now?.status !== 'forgotten' || sessionId === null) continue;
    try {
      await writeSummary(core, scope, sessionId, 'forget');
    } catch (err) {
      core.logger?.warn(
        `mem01: a conversation summary was retired by forget and not written again: ${describeError(err)}`,
      );
    }
  }
}

/** Conversations whose idle predecessor this process has looked for already (bounded; a restart looks again). */
const IDLE_CHECKED_MAX = 10_000;

/**
 * `config.autoSummaries`, after a claim's turns are committed: summarizes each conversation of `turns` whose
 * transcript just crossed a multiple of `summaryAfterTurns` positions (a size rule with no state to keep), and, the
 * first time this process sees a conversation, the user's previous one when it has been idle for `summaryIdleMs`
 * before these turns and its summary (if any) ends before its last turn. Failures are logged, never raised: the turns
 * are committed.
 */
export async function autoSummarize(
  core: EngineCore,
  scope: Scope,
  turns: readonly ExtractionTurn[],
  actor: string,
  checked: Set<string>,
): Promise<void> {
  if (!core.config.autoSummaries || turns.length === 0) return;
  const every = core.config.summaryAfterTurns;
  const due = new Set<string>();
  const bySession = new Map<string, ExtractionTurn[]>();
  for (const t of turns) bySession.set(t.sessionId, [...(bySession.get(t.sessionId) ?? []), t]);
  try {
    for (const [sessionId, own] of bySession) {
      // Positions 0..p hold p + 1 items: the conversation reached a multiple of `every` items within these turns.
      if (own.some((t) => (t.position + 1) % every === 0)) due.add(sessionId);
      const key = `${scope.userId}\u0000${scope.namespace ?? ''}\u0000${sessionId}`;
      if (checked.has(key)) continue;
      if (checked.size >= IDLE_CHECKED_MAX) checked.clear();
      checked.add(key);
      const idle = await idlePredecessor(core, scope, sessionId, own[0]!.at, bySession);
      if (idle !== null) due.add(idle);
    }
    for (const sessionId of due) await writeSummary(core, scope, sessionId, actor);
  } catch (err) {
    core.logger?.warn(`mem01: a conversation summary was not written: ${describeError(err)}`);
  }
}

/**
 * The user's conversation before `sessionId` (the newest record of another conversation), when its last turn came
 * `summaryIdleMs` or more before `at` and its summary does not reach that turn; else null.
 */
async function idlePredecessor(
  core: EngineCore,
  scope: Scope,
  sessionId: string,
  at: string,
  current: ReadonlyMap<string, unknown>,
): Promise<string | null> {
  const page = await core.store.list(scope, { kinds: ['episode', 'reply'], limit: 50 });
  let last: { sessionId: string; at: string } | null = null;
  for (const b of page.items) {
    const e = b.evidence[0];
    if (!e || current.has(e.sessionId) || e.sessionId === sessionId) continue;
    if (last === null) last = { sessionId: e.sessionId, at: e.at };
    else if (e.sessionId === last.sessionId && e.at > last.at) last = { sessionId: e.sessionId, at: e.at };
  }
  if (last === null || Date.parse(at) - Date.parse(last.at) < core.config.summaryIdleMs) return null;
  const [summary] = await core.store.getActiveByKeys(scope, [
    { subject: SUMMARY_SUBJECT, attribute: summaryKey(last.sessionId) },
  ]);
  return summary?.validTo != null && summary.validTo >= last.at ? null : last.sessionId;
}
