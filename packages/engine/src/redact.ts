/**
 * What forgetting does to the transcript: the policy every store applies inside its `forget` transaction.
 *
 * - The items a belief came from (its evidence turns) lose all their text: every text field becomes
 *   {@link FORGOTTEN_MARKER}. The belief may paraphrase the turn ("lives in Lisbon" from "I moved to Lisbon"), so
 *   removing only the belief's words would leave the fact readable.
 * - Every other item of the same user loses each occurrence of the belief's value and statement (whole words, any
 *   case), so an assistant reply that repeated it does not keep it either.
 * - Every episode of the belief's scope that carries the value or statement by that same rule, or that keeps one of
 *   its evidence turns, is forgotten with it ({@link planForget}), and the turns those episodes keep lose all their
 *   text as evidence turns do: recall cannot return the value in the user's own words, and the episodes and the
 *   transcript agree about what is left.
 *
 * Item structure (types, roles, call ids) is kept, so the session stays a valid Agents SDK history.
 */
import { type Belief, CONVERSATION_KINDS, isConversational } from './types.js';

/** What replaces forgotten text in a transcript item. */
export const FORGOTTEN_MARKER = '[forgotten]';

/** Needles shorter than this (after trimming) are not searched for: "tea" would be cut out of "steam". */
export const MIN_FORGET_NEEDLE_CHARS = 3;

/** The keys whose string values are text a person or a model wrote (as opposed to ids, types and roles). */
const TEXT_KEYS = new Set(['content', 'text', 'output', 'arguments', 'transcript', 'refusal', 'summary']);

/** The texts to cut out of a user's other transcript items when a belief with this value and statement is
 * forgotten: distinct, trimmed, long enough. */
export function forgetNeedles(belief: { readonly value: string; readonly statement: string }): string[] {
  const out: string[] = [];
  for (const raw of [belief.statement, belief.value]) {
    const needle = raw.trim();
    if (needle.length >= MIN_FORGET_NEEDLE_CHARS && !out.includes(needle)) out.push(needle);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One case-insensitive pattern matching any needle as whole words (not inside a longer word). */
function needlePattern(needles: readonly string[], flags = 'giu'): RegExp | null {
  if (needles.length === 0) return null;
  const alternatives = [...needles].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, flags);
}

/**
 * A redacted copy of one transcript item, or `null` when nothing in it changes.
 * `whole`: the item is an evidence turn; every text field becomes the marker. Otherwise each occurrence of a needle
 * in any string of the item becomes the marker.
 */
export function redactTranscriptItem(
  item: unknown,
  rule: { readonly whole: boolean; readonly needles: readonly string[] },
): unknown | null {
  const pattern = needlePattern(rule.needles);
  let changed = false;
  const visit = (value: unknown, key: string | null): unknown => {
    if (typeof value === 'string') {
      if (rule.whole && key !== null && TEXT_KEYS.has(key)) {
        if (value === FORGOTTEN_MARKER) return value;
        changed = true;
        return FORGOTTEN_MARKER;
      }
      if (!pattern) return value;
      const next = value.replace(pattern, FORGOTTEN_MARKER);
      if (next !== value) changed = true;
      return next;
    }
    if (Array.isArray(value)) return value.map((v) => visit(v, key));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = visit(v, k);
      return out;
    }
    return value;
  };
  const result = visit(item, null);
  return changed ? result : null;
}

/**
 * A quick prefilter for stores: could this serialized item contain one of the needles? Lower-cases ASCII only (as
 * SQL `lower()` does), so it may say yes too often but never no wrongly for ASCII text.
 */
export function mayContainNeedle(serialized: string, needles: readonly string[]): boolean {
  const hay = serialized.toLowerCase();
  return needles.some((n) => hay.includes(JSON.stringify(n).slice(1, -1).toLowerCase()));
}

/** A turn of a session, by position: a belief's evidence turn, or the turn an episode keeps. */
export interface ForgetTurn {
  readonly sessionId: string;
  readonly position: number;
}

/**
 * What a store does inside its forget transaction besides making the belief a tombstone, decided here once for every
 * store by {@link planForget}.
 */
export interface ForgetPlan {
  /** Episodes of the belief's scope forgotten with it, each left as a content-free tombstone like the belief (ids
   * in ascending order). */
  readonly episodeIds: readonly string[];
  /**
   * Turns that lose all their text: in the transcript (every text field becomes {@link FORGOTTEN_MARKER}) and in the
   * outbox. The belief's evidence turns and the turns of the episodes in `episodeIds`.
   */
  readonly turns: readonly ForgetTurn[];
  /** Texts cut out of the user's other transcript items, see {@link redactTranscriptItem}. */
  readonly needles: readonly string[];
}

/**
 * Which episodes (and the other records of `kinds`) of the belief's scope a store must fetch for
 * {@link planForget} (its SQL prefilter): those not forgotten yet whose evidence JSON contains one of `sessions`, or whose lower-cased value or statement contains one
 * of `loweredNeedles`. A store may return more (every episode of the scope, say); it must not return fewer.
 */
export interface ForgetCandidates {
  /** The kinds to fetch: the records drawn from a conversation (episodes, replies, summaries). */
  readonly kinds: readonly Belief['kind'][];
  /** Session ids, JSON-encoded (with the quotes) as they appear in a stored evidence array. */
  readonly sessions: readonly string[];
  /**
   * Lower-cased needles; empty: no text match asked; null: every episode of the scope (a needle has a character
   * outside ASCII, which SQL `lower()` may not fold as JavaScript does). Text that spells an ASCII needle with one of
   * the few non-ASCII letters JavaScript folds onto ASCII (the Kelvin sign) slips through this prefilter, as it slips
   * the transcript's ({@link mayContainNeedle}).
   */
  readonly loweredNeedles: readonly string[] | null;
}

/** An episode as {@link planForget} reads it. */
export type ForgetEpisode = Pick<Belief, 'id' | 'kind' | 'status' | 'value' | 'statement' | 'evidence'>;

/** The belief {@link planForget} plans for. */
export type ForgottenBelief = Pick<Belief, 'id' | 'value' | 'statement' | 'evidence'>;

const turnKey = (t: ForgetTurn): string => `${t.sessionId}\u0000${t.position}`;

/** The well-formed turns of an evidence array (rows written by older versions may hold odd entries). */
function turnsOf(evidence: readonly unknown[]): ForgetTurn[] {
  const out: ForgetTurn[] = [];
  for (const e of evidence) {
    const ev = e as Partial<ForgetTurn> | null;
    if (typeof ev?.sessionId === 'string' && typeof ev.position === 'number') {
      out.push({ sessionId: ev.sessionId, position: ev.position });
    }
  }
  return out;
}

const encodedSessions = (turns: readonly ForgetTurn[]): string[] => [
  ...new Set(turns.map((t) => JSON.stringify(t.sessionId))),
];

/** The first fetch: the belief's evidence sessions and its needles. */
function firstCandidates(belief: ForgottenBelief): ForgetCandidates {
  const needles = forgetNeedles(belief);
  // ASCII is the range SQL lower() folds as JavaScript does.
  const ascii = needles.every((n) => /^[\u0000-\u007f]*$/.test(n));
  return {
    kinds: CONVERSATION_KINDS,
    sessions: encodedSessions(turnsOf(belief.evidence)),
    loweredNeedles: ascii ? needles.map((n) => n.toLowerCase()) : null,
  };
}

/** The second fetch: the sessions of the plan's turns that the first did not fetch (the parts of a split turn). */
function followUp(plan: ForgetPlan, first: ForgetCandidates): ForgetCandidates | null {
  if (first.loweredNeedles === null) return null;
  const fetched = new Set(first.sessions);
  const sessions = encodedSessions(plan.turns).filter((s) => !fetched.has(s));
  return sessions.length === 0 ? null : { kinds: CONVERSATION_KINDS, sessions, loweredNeedles: [] };
}

/** The plan from the episodes fetched so far (by id; anything that is not a live episode is ignored). */
function planFrom(belief: ForgottenBelief, episodes: ReadonlyMap<string, ForgetEpisode>): ForgetPlan {
  const needles = forgetNeedles(belief);
  const pattern = needlePattern(needles, 'iu');
  const turns = new Map<string, ForgetTurn>();
  for (const turn of turnsOf(belief.evidence)) turns.set(turnKey(turn), turn);
  const evidenceTurns = new Set(turns.keys());
  const candidates = [...episodes.values()]
    .filter((e) => isConversational(e.kind) && e.status !== 'forgotten' && e.id !== belief.id)
    .map((e) => ({ id: e.id, kind: e.kind, text: [e.value, e.statement], turns: turnsOf(e.evidence) }));
  const chosen = new Set<string>();
  // A summary quotes a sentence or two of many turns: it goes once one of them, or the value, goes, but its other
  // turns keep their text (it is written again from what is left).
  const summaries = candidates.filter((e) => e.kind === 'summary');
  const verbatim = candidates.filter((e) => e.kind !== 'summary');
  for (const e of verbatim) {
    const carries = pattern !== null && e.text.some((text) => pattern.test(text));
    if (carries || e.turns.some((t) => evidenceTurns.has(turnKey(t)))) {
      chosen.add(e.id);
      for (const turn of e.turns) turns.set(turnKey(turn), turn);
    }
  }
  // The assistant's answer to a turn whose text is now gone repeats what it answered ("I'll keep peanuts out of
  // your suggestions"): its replies, up to the user's next turn of the session, go too, with their turns.
  const userTurns = verbatim.filter((e) => e.kind === 'episode').flatMap((e) => e.turns);
  for (const gone of [...turns.values()]) {
    const next = Math.min(
      ...userTurns
        .filter((t) => t.sessionId === gone.sessionId && t.position > gone.position)
        .map((t) => t.position),
    );
    for (const e of verbatim) {
      if (e.kind !== 'reply' || chosen.has(e.id)) continue;
      const answers = e.turns.some(
        (t) => t.sessionId === gone.sessionId && t.position > gone.position && t.position < next,
      );
      if (!answers) continue;
      chosen.add(e.id);
      for (const turn of e.turns) turns.set(turnKey(turn), turn);
    }
  }
  // The other parts of a turn whose text is now gone: the turn is the unit the transcript keeps.
  for (const e of verbatim) {
    if (!chosen.has(e.id) && e.turns.some((t) => turns.has(turnKey(t)))) chosen.add(e.id);
  }
  for (const e of summaries) {
    const carries = pattern !== null && e.text.some((text) => pattern.test(text));
    if (carries || e.turns.some((t) => turns.has(turnKey(t)))) chosen.add(e.id);
  }
  return {
    episodeIds: [...chosen].sort(),
    turns: [...turns.values()],
    needles,
  };
}

function collect(into: Map<string, ForgetEpisode>, episodes: Iterable<ForgetEpisode>): void {
  for (const e of episodes) into.set(e.id, e);
}

/**
 * What forgetting `belief` does beyond its own row, for a store to apply in its forget transaction. `fetch` returns
 * the episodes of the belief's scope that {@link ForgetCandidates} describes (called once or twice).
 *
 * An episode that is not forgotten yet is forgotten with the belief when it keeps one of the belief's evidence turns,
 * or when its text carries the belief's value or statement as whole words (any case: the rule that cuts them out of
 * the transcript). Its turn then loses all its text in the transcript, as an evidence turn does, and every other
 * episode of that turn (the parts of a turn split for length) goes with it: the episodes and the transcript agree.
 * Episodes in any status are forgotten (a superseded episode is still in `history`). Other scopes are never touched;
 * the store fetches only the belief's own.
 */
export function planForget(
  belief: ForgottenBelief,
  fetch: (candidates: ForgetCandidates) => Iterable<ForgetEpisode>,
): ForgetPlan {
  const steps = planning(belief);
  let step = steps.next();
  while (!step.done) step = steps.next(fetch(step.value));
  return step.value;
}

/** {@link planForget} for a store whose reads are asynchronous. */
export async function planForgetAsync(
  belief: ForgottenBelief,
  fetch: (candidates: ForgetCandidates) => Promise<Iterable<ForgetEpisode>>,
): Promise<ForgetPlan> {
  const steps = planning(belief);
  let step = steps.next();
  while (!step.done) step = steps.next(await fetch(step.value));
  return step.value;
}

/**
 * The planning, as the fetches it needs: the evidence sessions and the needles first; then, when a matched episode
 * keeps a turn of another session, that session, for the other parts of the turn.
 */
function* planning(
  belief: ForgottenBelief,
): Generator<ForgetCandidates, ForgetPlan, Iterable<ForgetEpisode>> {
  const episodes = new Map<string, ForgetEpisode>();
  const first = firstCandidates(belief);
  collect(episodes, yield first);
  const plan = planFrom(belief, episodes);
  const next = followUp(plan, first);
  if (next === null) return plan;
  collect(episodes, yield next);
  return planFrom(belief, episodes);
}
