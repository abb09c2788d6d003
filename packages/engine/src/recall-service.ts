/**
 * Recall as the engine runs it: fetch lexical and vector candidates of one scope from the store, keep what may be
 * recalled, rank with the policy of `recall.ts`, and collapse results that add no evidence.
 */
import { endedGrants } from './capture.js';
import { MAX_QUERY_CHARS } from './config.js';
import type { EngineCore } from './engine-core.js';
import { REPLY_SUBJECT, replyKey } from './episodes.js';
import { InvalidInputError } from './errors.js';
import type { LexicalHit } from './ports.js';
import {
  asksAboutReplies,
  collapseCovered,
  maxRecallTotal,
  rankHits,
  rankProfile,
  recalledKinds,
  scaledScore,
  statementWords,
} from './recall.js';
import { type ContextBlock, renderContextBlock } from './render.js';
import { assertPosition } from './store-input.js';
import { clip, contentWords, echoesQuery, stem, topicStems } from './text.js';
import type { Belief, BeliefKind, Evidence, Scope, ScoredBelief } from './types.js';
import { assertId, assertText, givenBlockBytes, sameScope } from './util.js';

export interface RecallOptions {
  /** At most this many beliefs. Default `config.recallLimit`. */
  readonly limit?: number | undefined;
  /** Return per-signal scores (always computed; this only keeps them). */
  readonly explain?: boolean | undefined;
  /** Include these kinds only. */
  readonly kinds?: readonly BeliefKind[] | undefined;
  /** Use vector similarity when an embedder is configured. Default true. */
  readonly vector?: boolean | undefined;
  /**
   * Only results scoring at least this (0..1; see `ScoredBelief.score`). Applied after ranking, so it never reorders:
   * it cuts the tail of the list (or all of it). Default 0: every result the relevance floor lets through.
   */
  readonly minScore?: number | undefined;
  /**
   * The turns the model already sees: items of conversation `sessionId` from position `fromPosition` on (the
   * transcript's positions). Their episodes, and beliefs whose every evidence is one of them, are not returned (nor
   * counted against `limit`): recall spends the block on what the model's history lacks. They are still ranked, so the
   * other results score and rank as without the option (the relevance floor counts the query's words they hold). A
   * belief also said in another turn or conversation, and one without evidence (`remember`, `correct`), is returned as
   * usual. Default: none.
   */
  readonly workingMemory?: WorkingMemory | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The end of one conversation that the model sees in its history (see `RecallOptions.workingMemory`). */
export interface WorkingMemory {
  readonly sessionId: string;
  /** The position of the first item of it in the conversation's transcript (0: the whole conversation). */
  readonly fromPosition: number;
}

/**
 * The query recall uses: a query longer than {@link MAX_QUERY_CHARS} is cut there, at the last word boundary before
 * it (its head carries the question), then to `maxBytes` UTF-8 bytes. Anything not a string is returned as is, for
 * the input check to refuse.
 */
export function clipQuery(query: string, maxBytes: number): string {
  if (typeof query !== 'string') return query;
  let q = query;
  if (q.length > MAX_QUERY_CHARS) {
    q = q.slice(0, MAX_QUERY_CHARS + 1);
    const boundary = q.search(/\s\S*$/);
    // Cut at the last space unless that drops most of a very long word (then cut inside it, on a code point).
    q = boundary > MAX_QUERY_CHARS / 2 ? q.slice(0, boundary) : q.slice(0, MAX_QUERY_CHARS);
    if (/[\uD800-\uDBFF]$/.test(q)) q = q.slice(0, -1);
    q = q.trimEnd();
  }
  const cut = clip(q, maxBytes);
  return cut === q ? q : cut.slice(0, -1).trimEnd();
}

/** Checks recall arguments before any waiting, so bad input fails fast. Returns the limit to use. */
export function checkRecall(core: EngineCore, query: unknown, options: RecallOptions): number {
  assertText(query, 'query', core.config.maxTextBytes, true);
  const limit = options.limit ?? core.config.recallLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new InvalidInputError('limit', 'must be an integer between 1 and 1000');
  }
  const { minScore, workingMemory } = options;
  if (minScore !== undefined && !(typeof minScore === 'number' && minScore >= 0 && minScore <= 1)) {
    throw new InvalidInputError('minScore', 'must be a number between 0 and 1');
  }
  if (workingMemory !== undefined) {
    if (workingMemory === null || typeof workingMemory !== 'object')
      throw new InvalidInputError('workingMemory', 'must be { sessionId, fromPosition }');
    assertId(workingMemory.sessionId, 'workingMemory.sessionId');
    assertPosition(workingMemory.fromPosition, 'workingMemory.fromPosition');
  }
  return limit;
}

/**
 * The active beliefs of `scope` (canonical) most relevant to `query` (a profile of the newest when the query is
 * empty). Never returns other scopes, pending, superseded, retracted or forgotten beliefs, nor what a capture grant
 * that has ended captured.
 */
export async function recallBeliefs(
  core: EngineCore,
  scope: Scope,
  query: string,
  options: RecallOptions,
): Promise<ScoredBelief[]> {
  const limit = checkRecall(core, query, options);
  const started = performance.now();
  const kinds = options.kinds ? new Set(options.kinds) : null;
  // The assistant's replies are recalled only for a question about what it said, and conversation summaries only for
  // one about an earlier conversation as a whole; otherwise the store's searches leave them out, so they take no
  // candidate's place (summaries in every recall cost block recall on both development sets: see the README).
  const withReplies = kinds ? kinds.has('reply') : asksAboutReplies(query);
  const searchKinds: readonly BeliefKind[] | undefined = kinds ? [...kinds] : recalledKinds(query);
  const searched = searchKinds ? new Set(searchKinds) : null;
  // What a grant that has ended captured is left out by the store's searches (so it takes no candidate's place).
  const ended = await endedGrants(core, scope);
  const excludeGrants = ended.size > 0 ? [...ended.keys()] : undefined;
  const keep = (b: Belief): boolean =>
    b.status === 'active' &&
    sameScope(b.scope, scope) &&
    (b.grantId === undefined || !ended.has(b.grantId)) &&
    (kinds
      ? kinds.has(b.kind)
      : (core.config.episodic || b.kind !== 'episode') && (searched === null || searched.has(b.kind)));
  // What the model reads in its history is not recalled again; a belief known from elsewhere too still is.
  const seen = options.workingMemory;
  const inSight = (e: Evidence): boolean =>
    seen !== undefined && e.sessionId === seen.sessionId && e.position >= seen.fromPosition;
  const unseen = (b: Belief): boolean => !(b.evidence.length > 0 && b.evidence.every(inSight));
  const now = core.clock().getTime();
  let ranked: ScoredBelief[];
  const profile = query.trim() === '';
  if (profile) {
    const page = await core.store.list(scope, {
      statuses: ['active'],
      limit: Math.min(1000, limit * 4),
      excludeGrants,
      ...(searchKinds ? { kinds: searchKinds } : {}),
    });
    const kept = page.items.filter((b) => keep(b) && (seen === undefined || unseen(b)));
    ranked = rankProfile(kept, { now, limit, config: core.config.ranking });
  } else {
    const candidateLimit = Math.max(core.config.candidateLimit, limit);
    const searchOptions = {
      limit: candidateLimit,
      excludeGrants,
      ...(searchKinds ? { kinds: searchKinds } : {}),
    };
    // Only content words reach the lexical index: "what is my" must not make a belief relevant.
    const terms = contentWords(query);
    const lexicalP =
      terms.length > 0
        ? core.store.searchLexical(scope, terms.join(' '), searchOptions)
        : Promise.resolve([]);
    // A lexical-fuzzy embedder's similarity repeats what the lexical index matched (on LoCoMo, recall@10 73.1
    // without it, 73.0 with it), and a match in its vectors alone is not relevance (`vectorAlone`): recall does not
    // scan every vector of the user for it. A semantic embedder searches the vectors for matches in other words.
    const vectorP =
      core.vectors && options.vector !== false && core.embedder?.kind !== 'lexical'
        ? core
            .embedQuery(query, scope, options.signal)
            .then((v) => (v ? core.store.searchVector(scope, v, searchOptions) : []))
        : Promise.resolve([]);
    const [firstLexical, vector] = await Promise.all([lexicalP, vectorP]);
    // A past turn that only asked this question again (an episode of "Where do I live?"), or said the query again
    // nearly word for word, is the best match for the query and never its answer: it is not recalled for it, so it
    // cannot take the answer's place (the model sees the query itself).
    const queryStems = topicStems(query);
    const echoes = new Map<string, boolean>();
    const isEcho = (b: Belief): boolean => {
      if (b.kind !== 'episode') return false;
      let e = echoes.get(b.id);
      if (e === undefined) {
        e = echoesQuery(b.value, queryStems);
        echoes.set(b.id, e);
      }
      return e;
    };
    // What was drawn from such a turn alone ("The user is planning a trip to Denver" from the request said again)
    // repeats the query too. The echo turns are found among the candidates: the echo is the query's best match.
    const echoTurns = new Set<string>();
    for (const h of [...firstLexical, ...vector]) {
      if (isEcho(h.belief)) for (const e of h.belief.evidence) echoTurns.add(`${e.position}:${e.sessionId}`);
    }
    const fromEchoes = (b: Belief): boolean =>
      echoTurns.size > 0 &&
      b.evidence.length > 0 &&
      b.evidence.every((e) => echoTurns.has(`${e.position}:${e.sessionId}`));
    const usable = (b: Belief): boolean => keep(b) && !isEcho(b) && !fromEchoes(b);
    let lexical = firstLexical.filter((h) => usable(h.belief));
    const vec = vector.filter((h) => usable(h.belief));
    // With working memory, its turns are ranked like any (they hold what the conversation knows: the relevance floor,
    // session coverage, context and feedback read them, as without it) and taken out of the ranked list afterwards, so
    // the other results keep their scores and order: the whole list is ranked, and the window leaves the rest.
    const rank = (lex: readonly LexicalHit[]) =>
      rankHits(lex, vec, {
        now,
        limit: seen === undefined ? limit * 4 : Number.POSITIVE_INFINITY,
        config: core.config.ranking,
        query,
      });
    let first = rank(lexical);
    const feedback = core.config.ranking.feedbackWeight;
    if (feedback > 0 && first.length > 0) {
      // Pseudo-relevance feedback: the words the best results share and the query lacks find the results that
      // answer in other words (a question about "her career" and a turn about "the new job").
      const extra = feedbackWords(
        first,
        terms,
        core.config.ranking.feedbackDocs,
        core.config.ranking.feedbackTerms,
      );
      if (extra.length > 0) {
        // BM25 adds up over words, so the expanded query's score is the first search's plus the added words' alone:
        // only the added words are searched, and the query's words are not matched a second time.
        const added = (await core.store.searchLexical(scope, extra.join(' '), searchOptions)).filter((h) =>
          usable(h.belief),
        );
        const expanded = new Map<string, LexicalHit>(lexical.map((h) => [h.belief.id, h]));
        for (const h of added) {
          const base = expanded.get(h.belief.id)?.score ?? 0;
          expanded.set(h.belief.id, { belief: h.belief, score: base + h.score });
        }
        lexical = mergeLexical(lexical, [...expanded.values()], feedback);
        first = rank(lexical);
      }
    }
    // Rank a wider list, then drop what adds no evidence (an episode and the belief distilled from it).
    ranked = collapseCovered(
      seen === undefined ? first : first.filter((r) => unseen(r.belief)).slice(0, limit * 4),
      limit,
    );
    // A question about what the assistant said ("what dessert did you recommend?") names the user's request, not the
    // answer ("Try the mango sticky rice"): the assistant's reply to each recalled turn follows it.
    if (withReplies) {
      ranked = await withAnswers(
        core,
        scope,
        ranked,
        (b) => keep(b) && (seen === undefined || unseen(b)),
        limit,
      );
    }
  }
  // Ranked on the totals above; scaled only now by a constant of the configuration, so the order stays theirs.
  const maxTotal = maxRecallTotal(core.config.ranking, profile);
  const minScore = options.minScore ?? 0;
  const scored = ranked
    .map((r) => ({ ...r, score: scaledScore(r.score, maxTotal) }))
    .filter((r) => r.score >= minScore);
  core.stats.recalls++;
  core.emit({ type: 'recall', scope, returned: scored.length, ms: performance.now() - started });
  return options.explain ? scored : scored.map(({ belief, score, tier }) => ({ belief, score, tier }));
}

/** Expansion words: content words that several of the best results hold and the query does not. */
function feedbackWords(
  ranked: readonly ScoredBelief[],
  queryWords: readonly string[],
  docs: number,
  max: number,
): string[] {
  const inQuery = new Set(queryWords.map(stem));
  const counts = new Map<string, { word: string; n: number }>();
  for (const r of ranked.slice(0, docs)) {
    // The belief's subject ("user") names what every statement is about: it tells no answer from another, and as a
    // search word it would match most of the index.
    const seen = new Set<string>(contentWords(r.belief.subject).map(stem));
    for (const word of statementWords(r.belief)) {
      const st = stem(word);
      if (inQuery.has(st) || seen.has(st) || word.length < 3 || /^\d+$/.test(word)) continue;
      seen.add(st);
      const cur = counts.get(st);
      if (cur) cur.n++;
      else counts.set(st, { word, n: 1 });
    }
  }
  return [...counts.values()]
    .filter((c) => c.n >= 2)
    .sort((a, b) => b.n - a.n || (a.word < b.word ? -1 : 1))
    .slice(0, max)
    .map((c) => c.word);
}

/** Lexical hits of the query and of the expanded query, each normalised by its best, the expanded ones weighted. */
function mergeLexical(
  first: readonly LexicalHit[],
  second: readonly LexicalHit[],
  weight: number,
): LexicalHit[] {
  const max = (hits: readonly LexicalHit[]) => hits.reduce((m, h) => Math.max(m, h.score), 0) || 1;
  const m1 = max(first);
  const m2 = max(second);
  const out = new Map<string, LexicalHit>();
  for (const h of first) out.set(h.belief.id, { belief: h.belief, score: h.score / m1 });
  for (const h of second) {
    const score = (weight * h.score) / m2;
    const cur = out.get(h.belief.id);
    if (!cur || cur.score < score) out.set(h.belief.id, { belief: h.belief, score });
  }
  return [...out.values()];
}

/** The block size of one `context` call. */
export interface BlockSizeOption {
  /** Size of this block in UTF-8 bytes. Default `config.blockBytes`. */
  readonly blockBytes?: number | undefined;
  /** @deprecated The earlier name of `blockBytes`; use `blockBytes`. */
  readonly budgetBytes?: number | undefined;
}

/** The block size a call asks for (`blockBytes`, or its deprecated name), else the configured one. */
function blockBytesOf(core: EngineCore, size: BlockSizeOption): number {
  return givenBlockBytes(size, 'blockBytes') ?? core.config.blockBytes;
}

/** Recalled beliefs rendered as the bounded context block. */
export function contextOf(
  core: EngineCore,
  recalled: readonly ScoredBelief[],
  query: string,
  size: BlockSizeOption,
): ContextBlock & { readonly recalled: readonly ScoredBelief[] } {
  const block = renderContextBlock(
    recalled.map((r) => r.belief),
    blockBytesOf(core, size),
    { query },
  );
  return { ...block, recalled };
}

/** Why a host-selected id is not in the block. */
export interface SkippedId {
  readonly id: string;
  /**
   * `not_found`: unknown, or of another scope (the two look the same); `not_active`: pending, retired or forgotten, or
   * captured under a capture grant that has ended.
   */
  readonly reason: 'not_found' | 'not_active' | 'duplicate';
}

/** The block of host-selected beliefs (see `MemoryAdmin.context` with `{ ids }`). */
export interface SelectedContext extends ContextBlock {
  /** The active beliefs found, in the order given (the block holds those that fit). */
  readonly selected: readonly Belief[];
  /** The ids left out, in the order given, with the reason. */
  readonly skipped: readonly SkippedId[];
}

/** The active beliefs of `scope` with these ids, in the order given, rendered as the bounded block. */
export async function selectedContext(
  core: EngineCore,
  scope: Scope,
  ids: readonly string[],
  size: BlockSizeOption,
): Promise<SelectedContext> {
  const selected: Belief[] = [];
  const skipped: SkippedId[] = [];
  const seen = new Set<string>();
  const ended = await endedGrants(core, scope);
  for (const id of ids) {
    if (seen.has(id)) {
      skipped.push({ id, reason: 'duplicate' });
      continue;
    }
    seen.add(id);
    const b = await core.store.get(scope, id);
    // The store's scoping makes another scope's id "not found": nothing tells it from an unknown one.
    if (!b || !sameScope(b.scope, scope)) skipped.push({ id, reason: 'not_found' });
    else if (b.status !== 'active' || (b.grantId !== undefined && ended.has(b.grantId)))
      skipped.push({ id, reason: 'not_active' });
    else selected.push(b);
  }
  const block = renderContextBlock(selected, blockBytesOf(core, size));
  return { ...block, selected, skipped };
}

/** Positions after a user's turn where the assistant's answer to it may be (tool calls may come between). */
const ANSWER_WINDOW = 3;

/**
 * `ranked` with the assistant's reply to each recalled user turn (the first reply within {@link ANSWER_WINDOW}
 * positions after it, in the same conversation) placed right after the turn, at its score, cut to `limit`.
 */
async function withAnswers(
  core: EngineCore,
  scope: Scope,
  ranked: readonly ScoredBelief[],
  keep: (b: Belief) => boolean,
  limit: number,
): Promise<ScoredBelief[]> {
  const asked = ranked.filter((r) => r.belief.kind === 'episode' && r.belief.evidence[0] !== undefined);
  if (asked.length === 0) return [...ranked];
  const keys = asked.flatMap((r) => {
    const e = r.belief.evidence[0]!;
    return Array.from({ length: ANSWER_WINDOW }, (_, i) => ({
      subject: REPLY_SUBJECT,
      attribute: replyKey(e.sessionId, e.position + 1 + i),
    }));
  });
  const replies = new Map<string, Belief>();
  for (const b of await core.store.getActiveByKeys(scope, keys)) {
    if (b.kind === 'reply' && keep(b)) replies.set(b.attribute, b);
  }
  const out: ScoredBelief[] = [];
  const placed = new Set<string>();
  const place = (r: ScoredBelief): void => {
    if (placed.has(r.belief.id)) return;
    placed.add(r.belief.id);
    out.push(r);
  };
  for (const r of ranked) {
    place(r);
    const e = r.belief.kind === 'episode' ? r.belief.evidence[0] : undefined;
    if (!e) continue;
    for (let i = 1; i <= ANSWER_WINDOW; i++) {
      const reply = replies.get(replyKey(e.sessionId, e.position + i));
      if (!reply) continue;
      place({ belief: reply, score: r.score, tier: 'episode', ...(r.signals ? { signals: r.signals } : {}) });
      break;
    }
  }
  return out.slice(0, limit);
}
