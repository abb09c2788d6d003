import { describe, expect, it } from 'vitest';
import {
  FORGOTTEN_MARKER,
  type ForgetCandidates,
  type ForgetEpisode,
  forgetNeedles,
  mayContainNeedle,
  planForget,
  planForgetAsync,
  redactTranscriptItem,
} from '../src/redact.js';
import { assistantMessageItem } from '../src/testing/index.js';

const userTurn = (text: string) => ({ role: 'user', content: text });
const assistantTurn = assistantMessageItem;

describe('forgetNeedles', () => {
  it('keeps the statement and value, trimmed, distinct and at least 3 characters long', () => {
    expect(forgetNeedles({ value: ' Lisbon ', statement: 'The user lives in Lisbon.' })).toEqual([
      'The user lives in Lisbon.',
      'Lisbon',
    ]);
    expect(forgetNeedles({ value: 'no', statement: 'no' })).toEqual([]);
    expect(forgetNeedles({ value: 'same', statement: 'same' })).toEqual(['same']);
  });
});

describe('redactTranscriptItem', () => {
  it('an evidence turn loses all its text but keeps its structure', () => {
    expect(redactTranscriptItem(userTurn('I moved to Lisbon in May'), { whole: true, needles: [] })).toEqual(
      userTurn(FORGOTTEN_MARKER),
    );
    const out = redactTranscriptItem(assistantTurn('Lisbon is lovely'), { whole: true, needles: [] });
    expect(out).toEqual(assistantTurn(FORGOTTEN_MARKER));
  });

  it('other items lose each whole-word occurrence of a needle, in any case, and nothing else', () => {
    const item = assistantTurn('So LISBON it is: lisbon, Lisbon! Not Lisbonne.');
    expect(redactTranscriptItem(item, { whole: false, needles: ['Lisbon'] })).toEqual(
      assistantTurn(`So ${FORGOTTEN_MARKER} it is: ${FORGOTTEN_MARKER}, ${FORGOTTEN_MARKER}! Not Lisbonne.`),
    );
    // Needles are literal text, never patterns.
    expect(
      redactTranscriptItem(userTurn('price is $2,400 (monthly)'), {
        whole: false,
        needles: ['$2,400 (monthly)'],
      }),
    ).toEqual(userTurn(`price is ${FORGOTTEN_MARKER}`));
  });

  it('returns null when nothing changes, including an already-redacted evidence turn', () => {
    expect(redactTranscriptItem(userTurn('I like tea'), { whole: false, needles: ['Lisbon'] })).toBeNull();
    expect(redactTranscriptItem(userTurn(FORGOTTEN_MARKER), { whole: true, needles: [] })).toBeNull();
    expect(
      redactTranscriptItem({ type: 'function_call', callId: 'c1' }, { whole: true, needles: [] }),
    ).toBeNull();
  });

  it('does not change the input', () => {
    const item = userTurn('I moved to Lisbon');
    const copy = structuredClone(item);
    redactTranscriptItem(item, { whole: true, needles: ['Lisbon'] });
    expect(item).toEqual(copy);
  });
});

describe('mayContainNeedle', () => {
  it('finds needles in serialised JSON case-insensitively, including escaped characters', () => {
    expect(mayContainNeedle(JSON.stringify(userTurn('I live in LISBON')), ['Lisbon'])).toBe(true);
    expect(mayContainNeedle(JSON.stringify(userTurn('say "hi" to Ana')), ['"hi" to'])).toBe(true);
    expect(mayContainNeedle(JSON.stringify(userTurn('I like tea')), ['Lisbon'])).toBe(false);
  });
});

describe('planForget', () => {
  const AT = '2026-01-01T00:00:00.000Z';
  const turn = (sessionId: string, position: number) => ({
    sessionId,
    position,
    role: 'user' as const,
    quote: '',
    at: AT,
  });
  const episode = (
    id: string,
    sessionId: string,
    position: number,
    text: string,
    status = 'active',
  ): ForgetEpisode => ({
    id,
    kind: 'episode',
    status: status as ForgetEpisode['status'],
    value: text,
    statement: text,
    evidence: [turn(sessionId, position)],
  });
  const lisbon = {
    id: 'b1',
    value: 'Lisbon',
    statement: 'The user lives in Lisbon.',
    evidence: [turn('s1', 0)],
  };
  /** A store's fetch over `episodes`, applying the prefilter as SQL would; records what it was asked. */
  const store = (episodes: readonly ForgetEpisode[]) => {
    const asked: ForgetCandidates[] = [];
    const fetch = (c: ForgetCandidates) => {
      asked.push(c);
      return episodes.filter(
        (e) =>
          c.loweredNeedles === null ||
          c.sessions.some((s) => JSON.stringify(e.evidence).includes(s)) ||
          c.loweredNeedles.some(
            (n) => e.value.toLowerCase().includes(n) || e.statement.toLowerCase().includes(n),
          ),
      );
    };
    return { asked, fetch };
  };

  it('names the evidence episodes and every episode carrying the value as whole words, in any case', () => {
    const episodes = [
      episode('e-evidence', 's1', 0, 'I moved to the capital of Portugal'),
      episode('e-repeat', 's2', 4, 'Flights to LISBON are cheap'),
      episode('e-retired', 's3', 1, 'lisbon again', 'superseded'),
      episode('e-other-word', 's2', 5, 'Lisbonense pastries'),
      episode('e-unrelated', 's1', 1, 'I like tea'),
      episode('e-gone', 's2', 6, 'Lisbon', 'forgotten'),
      { ...episode('b-fact', 's2', 7, 'Lisbon'), kind: 'fact' as const },
    ];
    const { asked, fetch } = store(episodes);
    const plan = planForget(lisbon, fetch);
    expect(plan.episodeIds).toEqual(['e-evidence', 'e-repeat', 'e-retired']);
    expect(plan.turns).toEqual([
      { sessionId: 's1', position: 0 },
      { sessionId: 's2', position: 4 },
      { sessionId: 's3', position: 1 },
    ]);
    expect(plan.needles).toEqual(['The user lives in Lisbon.', 'Lisbon']);
    // The matched episodes' sessions were fetched by their text already: one query, plus the follow-up for the parts
    // of their turns in sessions not asked for by evidence.
    expect(asked[0]).toEqual({
      kinds: ['episode', 'reply', 'summary'],
      sessions: ['"s1"'],
      loweredNeedles: ['the user lives in lisbon.', 'lisbon'],
    });
    expect(asked[1]).toEqual({
      kinds: ['episode', 'reply', 'summary'],
      sessions: ['"s2"', '"s3"'],
      loweredNeedles: [],
    });
    expect(asked).toHaveLength(2);
  });

  it('takes every part of a turn whose text goes, fetching the parts the text prefilter cannot find', () => {
    const episodes = [
      episode('part-0', 's9', 3, 'We sailed from Dar es Salaam'),
      episode('part-1', 's9', 3, 'and landed in Lisbon at dawn'),
      episode('next-turn', 's9', 4, 'Then we rested'),
    ];
    const { fetch } = store(episodes);
    expect(planForget(lisbon, fetch).episodeIds).toEqual(['part-0', 'part-1']);
  });

  it('asks for every episode of the scope when a needle is outside ASCII, once', () => {
    const { asked, fetch } = store([episode('e', 's2', 0, 'Ich wohne in MÜNCHEN')]);
    const plan = planForget({ id: 'b', value: 'München', statement: 'München', evidence: [] }, fetch);
    expect(plan.episodeIds).toEqual(['e']);
    expect(asked).toEqual([{ kinds: ['episode', 'reply', 'summary'], sessions: [], loweredNeedles: null }]);
  });

  it('names nothing for a value too short to search and no evidence; never the belief itself', async () => {
    const { fetch } = store([episode('e', 's1', 0, 'no no no')]);
    expect(planForget({ id: 'b', value: 'no', statement: 'no', evidence: [] }, fetch)).toEqual({
      episodeIds: [],
      turns: [],
      needles: [],
    });
    const self = episode('e-self', 's1', 0, 'Lisbon');
    expect(planForget(self, () => [self]).episodeIds).toEqual([]);
    // The asynchronous form plans the same.
    const episodes = [episode('e1', 's1', 0, 'x'), episode('e2', 's2', 0, 'in Lisbon')];
    expect(await planForgetAsync(lisbon, async (c) => store(episodes).fetch(c))).toEqual(
      planForget(lisbon, store(episodes).fetch),
    );
  });
});
