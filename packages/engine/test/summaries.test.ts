/**
 * The engine's offline summarizer and the summary settings. What summaries do on a store (summarize, supersede,
 * forget and rewrite, autoSummaries) is pinned by the conformance suite on every store.
 */
import { describe, expect, it } from 'vitest';
import { createBelief } from '../src/belief.js';
import { resolveConfig } from '../src/config.js';
import { InvalidInputError } from '../src/errors.js';
import type { SummaryRequest } from '../src/ports.js';
import { renderBeliefLine } from '../src/render.js';
import { extractiveSummarizer } from '../src/summaries.js';

const AT = '2026-02-01T10:00:00.000Z';
const turn = (position: number, text: string, role: 'user' | 'assistant' = 'user') => ({
  id: `t${position}`,
  position,
  role,
  text,
  at: AT,
});
const request = (turns: SummaryRequest['turns'], maxBytes = 400): SummaryRequest => ({
  scope: { userId: 'u1' },
  sessionId: 's1',
  turns,
  maxBytes,
  now: AT,
});

describe('the extractive summarizer', () => {
  const summarize = extractiveSummarizer().summarize;

  it('keeps the sentences that carry the conversation, in order, each quoted from its turn', async () => {
    const turns = [
      turn(0, 'I started training for the Berlin marathon in September. My coach wants four runs a week.'),
      turn(1, 'Great goal! How many kilometres are you running now?', 'assistant'),
      turn(2, 'About thirty kilometres a week, and my long run is on Sundays along the river.'),
      turn(3, 'What shoes should I buy?'),
      turn(4, 'Training for the marathon means I skip the Sunday choir practice this autumn.'),
    ];
    const result = await summarize(request(turns));
    expect(result.text).toContain('Berlin marathon');
    expect(result.text).not.toContain('What shoes');
    expect(result.text).not.toContain('Great goal');
    for (const s of result.sources ?? []) {
      const from = turns.find((t) => t.id === s.turnId);
      expect(from?.role).toBe('user');
      expect(from?.text).toContain(s.quote);
    }
    // In conversation order.
    const order = (result.sources ?? []).map((s) => Number(s.turnId.slice(1)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('stays within maxBytes and covers more than one topic', async () => {
    const turns = Array.from({ length: 30 }, (_, i) =>
      turn(
        i,
        i % 2 === 0
          ? `My daughter Lena practised the violin piece number ${i} for the spring recital.`
          : `We repainted the kitchen cabinets a pale green colour on day ${i}.`,
      ),
    );
    const result = await summarize(request(turns, 200));
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(200);
    expect(result.text).toMatch(/violin/);
    expect(result.text).toMatch(/kitchen/);
  });

  it('has nothing to say for questions only, or an empty conversation', async () => {
    expect(
      (await summarize(request([turn(0, 'Where do I live?'), turn(1, 'Remind me of my rent.')]))).text,
    ).toBe('');
    expect((await summarize(request([]))).text).toBe('');
  });

  it('summarizes the assistant side when the user said nothing to summarize', async () => {
    const result = await summarize(
      request([
        turn(0, 'ok'),
        turn(1, 'Here is a three day itinerary for Kyoto with temples and gardens.', 'assistant'),
      ]),
    );
    expect(result.text).toContain('Kyoto');
  });
});

describe('summary settings', () => {
  it('are off by default with bounded sizes', () => {
    const c = resolveConfig(undefined, null);
    expect(c).toMatchObject({
      autoSummaries: false,
      summaryAfterTurns: 40,
      summaryIdleMs: 1_800_000,
      summaryBytes: 400,
    });
  });

  it.each([
    [{ autoSummaries: 'yes' }, 'config.autoSummaries'],
    [{ summaryAfterTurns: 0 }, 'config.summaryAfterTurns'],
    [{ summaryIdleMs: -1 }, 'config.summaryIdleMs'],
    [{ summaryBytes: 10 }, 'config.summaryBytes'],
  ])('refuses %j', (input, field) => {
    expect(() => resolveConfig(input as never, null)).toThrow(InvalidInputError);
    expect(() => resolveConfig(input as never, null)).toThrow(field);
  });
});

describe('a summary in the block', () => {
  it('is labelled as the conversation, dated by its first turn, cut to what answers the query', () => {
    const summary = createBelief(
      {
        scope: { userId: 'u1' },
        kind: 'summary',
        subject: 'conversation',
        attribute: 'summary:s1',
        value: 'I adopted a kitten named Pixel. We moved to Porto in May. I play padel on Thursdays.',
        statement: 'I adopted a kitten named Pixel. We moved to Porto in May. I play padel on Thursdays.',
        confidence: 1,
        source: 'extracted',
        validFrom: '2023-05-08T09:00:00.000Z',
        at: AT,
      },
      16_384,
    );
    expect(renderBeliefLine(summary, { query: 'when did we move to Porto', snippetBytes: 60 })).toBe(
      '[conversation 2023-05-08] …We moved to Porto in May.',
    );
  });
});

describe('summary keys', () => {
  it('keep conversations apart that a canonical key would merge, and stay short', async () => {
    const { summaryKey } = await import('../src/summaries.js');
    expect(summaryKey('trip_1')).toBe('summary:trip_1');
    expect(summaryKey('Trip-1')).not.toBe(summaryKey('trip_1'));
    expect(summaryKey('Trip-1')).not.toBe(summaryKey('trip-1'));
    expect(summaryKey('x'.repeat(256)).length).toBeLessThanOrEqual(200);
    expect(summaryKey('x'.repeat(256))).not.toBe(summaryKey('x'.repeat(255)));
  });
});

describe('which questions recall summaries', () => {
  it('a question about an earlier conversation as a whole, not one about the user or a detail the assistant gave', async () => {
    const { asksAboutConversations } = await import('../src/recall.js');
    for (const q of [
      'What did we talk about last week?',
      'Recap our last chat.',
      'Remind me what our conversation about the Dolomites trip covered?',
      'What was our previous conversation about?',
      'Can you summarize our discussion on budgets',
    ]) {
      expect(asksAboutConversations(q), q).toBe(true);
    }
    for (const q of [
      'Where do I live?',
      'What did you recommend last time?',
      'I talked to my sister about the move',
      'In our previous chat, you suggested a few options. Can you remind me what the other four were?',
    ]) {
      expect(asksAboutConversations(q), q).toBe(false);
    }
  });
});
