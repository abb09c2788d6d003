/**
 * The summary tier on the store under test: `summarize(scope, sessionId)` writes one dated summary per conversation
 * from what is still remembered, a new one supersedes the last, forgetting a turn it drew on retires it and writes
 * it again from what is left (the store's forget prefilter must fetch summaries), `autoSummaries` writes them as a
 * conversation grows or goes idle, and nothing of one user is summarized into another's.
 */
import {
  type EngineStore,
  MemoryEngine,
  type MemoryEngineOptions,
  type Scope,
  type Summarizer,
} from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { unique } from '../fixtures.js';

const DIMS = 16;
const DAY1 = '2026-03-01T09:00:00.000Z';
const DAY2 = '2026-03-04T18:30:00.000Z';
const ALL = ['active', 'pending', 'superseded', 'retracted', 'forgotten'] as const;

function engine(store: EngineStore, options: Partial<MemoryEngineOptions> = {}): MemoryEngine {
  return new MemoryEngine({
    store,
    extractor: new KeyValueExtractor(),
    embedder: new WordHashEmbedder(DIMS),
    ...options,
    config: { episodic: true, replies: true, ...options.config },
  });
}

/** One conversation appended the way a binding does: transcript items and their turns in one step. */
async function converse(
  e: MemoryEngine,
  scope: Scope,
  sessionId: string,
  turns: readonly { role: 'user' | 'assistant'; text: string }[],
  at: string,
): Promise<void> {
  await e.appendTranscript(
    scope,
    sessionId,
    turns.map((t) => ({ role: t.role, content: t.text })),
    { turns: turns.map((t, i) => ({ index: i, role: t.role, text: t.text, at })) },
  );
}

const TRIP = [
  {
    role: 'user' as const,
    text: 'We spent the whole weekend hiking the coastal trail near Big Sur with my sister.',
  },
  { role: 'assistant' as const, text: 'That sounds wonderful. How was the weather?' },
  {
    role: 'user' as const,
    text: 'The weather was foggy in the morning, but the coastal views from the trail were stunning.',
  },
  { role: 'user' as const, text: 'Where should we go next?' },
  { role: 'user' as const, text: 'My sister wants to try kayaking in Monterey next month.' },
];

export function summaryTests(ctx: SuiteContext): void {
  ctx.test(
    'summaries: summarize writes one dated summary of a conversation, drawn from what the user said',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store);
      const scope = { userId: unique('su-') };
      const other = { userId: unique('su-other-') };
      const s1 = unique('s-');
      const theirs = unique('s-other-');
      await converse(e, scope, s1, TRIP, DAY1);
      await converse(
        e,
        other,
        theirs,
        [{ role: 'user', text: 'My secret project is called Bluebird and it ships in May.' }],
        DAY1,
      );
      const summary = await e.summarize(scope, s1);
      expect(summary).toMatchObject({
        kind: 'summary',
        subject: 'conversation',
        status: 'active',
        validFrom: DAY1,
      });
      // Sentences of what the user said, in order; no question, nothing of the assistant's, nothing of another user's.
      expect(summary!.statement).toContain('hiking the coastal trail near Big Sur');
      expect(summary!.statement).not.toContain('Where should we go next');
      expect(summary!.statement).not.toContain('How was the weather');
      expect(summary!.statement).not.toContain('Bluebird');
      expect(Buffer.byteLength(summary!.statement)).toBeLessThanOrEqual(e.config.summaryBytes);
      // Each sentence is grounded in the turn it came from.
      expect(summary!.evidence.length).toBeGreaterThan(0);
      for (const ev of summary!.evidence) {
        expect(ev).toMatchObject({ sessionId: s1, role: 'user', at: DAY1 });
        expect(TRIP[ev.position]!.text).toContain(ev.quote);
      }
      // Listed by kind and by conversation; the same text again confirms it rather than writing another.
      const listed = await e.list(scope, { kinds: ['summary'], sessionId: s1 });
      expect(listed.items.map((b) => b.id)).toEqual([summary!.id]);
      expect((await e.summarize(scope, s1))!.id).toBe(summary!.id);
      expect((await e.list(other, { kinds: ['summary'] })).items).toEqual([]);
      // Another user's conversation is nothing to summarize from this scope.
      expect(await e.summarize(scope, theirs)).toBeNull();
      // Recall can return it, labelled as the conversation's, dated by it.
      // Recalled for a question about the conversation as a whole, labelled as the conversation's, dated by it; a
      // question about the user recalls the turns themselves.
      const block = await e.context(scope, 'What did we talk about, kayaking with my sister?', {
        blockBytes: 2000,
      });
      expect(block.text).toContain('[conversation 2026-03-01]');
      const plain = await e.recall(scope, 'kayaking with my sister');
      expect(plain.map((h) => h.belief.kind)).not.toContain('summary');
      expect(plain.map((h) => h.belief.kind)).toContain('episode');
      await e.close();
    },
  );

  ctx.test('summaries: a longer conversation supersedes the summary, and its history stays', async () => {
    const store = await ctx.open(DIMS);
    const e = engine(store);
    const scope = { userId: unique('sh-') };
    const s1 = unique('s-');
    await converse(e, scope, s1, TRIP.slice(0, 3), DAY1);
    const first = await e.summarize(scope, s1);
    await converse(e, scope, s1, TRIP.slice(3), DAY2);
    const second = await e.summarize(scope, s1);
    expect(second!.id).not.toBe(first!.id);
    expect(second!.statement).toContain('kayaking in Monterey');
    expect(second!.validTo).toBe(DAY2);
    const history = await e.history(scope, { id: first!.id });
    expect(history.map((b) => [b.id, b.status])).toEqual(
      expect.arrayContaining([
        [first!.id, 'superseded'],
        [second!.id, 'active'],
      ]),
    );
    // Nothing to summarize: an unknown conversation, or only questions.
    expect(await e.summarize(scope, unique('none-'))).toBeNull();
    await e.close();
  });

  ctx.test(
    'summaries: forgetting what a summary drew on retires it, and it is written again from what is left',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store);
      const scope = { userId: unique('sf-') };
      const s1 = unique('s-');
      await converse(e, scope, s1, TRIP, DAY1);
      const summary = await e.summarize(scope, s1);
      expect(summary!.statement).toContain('Big Sur');
      const episode = (await e.list(scope, { kinds: ['episode'], sessionId: s1 })).items.find((b) =>
        b.statement.includes('Big Sur'),
      );
      await e.forget(scope, episode!.id);
      const after = await store.list(scope, { kinds: ['summary'], statuses: ALL, limit: 100 });
      expect(after.items.find((b) => b.id === summary!.id)?.status).toBe('forgotten');
      const active = after.items.filter((b) => b.status === 'active');
      expect(active).toHaveLength(1);
      expect(active[0]!.statement).toContain('kayaking in Monterey');
      expect(JSON.stringify(await store.list(scope, { statuses: ALL, limit: 100 }))).not.toContain('Big Sur');
      // The turns the summary quoted but that were not forgotten keep their text in the transcript.
      const items = (await store.getItems(scope, s1)) as { content: string }[];
      expect(items[4]!.content).toBe(TRIP[4]!.text);
      await e.close();
    },
  );

  ctx.test(
    'summaries: autoSummaries writes them as a conversation grows and when the user comes back',
    async () => {
      const store = await ctx.open(DIMS);
      const e = engine(store, {
        config: { autoSummaries: true, summaryAfterTurns: 4, summaryIdleMs: 3_600_000 },
      });
      const scope = { userId: unique('sa-') };
      const s1 = unique('s1-');
      const s2 = unique('s2-');
      // Three items: not yet a summary.
      await converse(e, scope, s1, TRIP.slice(0, 3), DAY1);
      await e.flush(scope);
      expect((await e.list(scope, { kinds: ['summary'] })).items).toEqual([]);
      // The fourth and fifth: the conversation crossed four items.
      await converse(e, scope, s1, TRIP.slice(3), DAY1);
      await e.flush(scope);
      const grown = (await e.list(scope, { kinds: ['summary'], sessionId: s1 })).items;
      expect(grown).toHaveLength(1);
      // A new conversation days later: the first, idle since, is summarized up to its last turn (already current here),
      // and a conversation left before its fourth item is summarized once the user is back.
      await converse(
        e,
        scope,
        s2,
        [{ role: 'user', text: 'I adopted a grey kitten named Pixel at the shelter.' }],
        DAY2,
      );
      await e.flush(scope);
      expect((await e.list(scope, { kinds: ['summary'], sessionId: s1 })).items.map((b) => b.id)).toEqual([
        grown[0]!.id,
      ]);
      const s3 = unique('s3-');
      await converse(
        e,
        scope,
        s3,
        [{ role: 'user', text: 'I adopted a grey kitten named Pixel at the shelter.' }],
        '2026-03-09T10:00:00.000Z',
      );
      await e.flush(scope);
      const pixel = (await e.list(scope, { kinds: ['summary'], sessionId: s2 })).items;
      expect(pixel.map((b) => b.statement)).toEqual(['I adopted a grey kitten named Pixel at the shelter.']);
      await e.close();
    },
  );

  ctx.test('summaries: a model summarizer is called once, its usage counted, its sources kept', async () => {
    const store = await ctx.open(DIMS);
    const calls: string[] = [];
    const summarizer: Summarizer = {
      name: 'scripted',
      summarize: async (request) => {
        calls.push(request.sessionId);
        expect(request.turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user', 'user', 'user']);
        return {
          text: 'The user hiked near Big Sur with their sister and plans kayaking in Monterey.',
          usage: { llmCalls: 1, inputTokens: 120, outputTokens: 20 },
        };
      },
    };
    const e = engine(store, { summarizer });
    const scope = { userId: unique('sm-') };
    const s1 = unique('s-');
    await converse(e, scope, s1, TRIP, DAY1);
    const before = e.stats().llmCalls;
    const summary = await e.summarize(scope, s1);
    expect(calls).toEqual([s1]);
    expect(e.stats().llmCalls - before).toBe(1);
    expect(summary!.statement).toBe(
      'The user hiked near Big Sur with their sister and plans kayaking in Monterey.',
    );
    // Without sources named, every user turn it read is its evidence.
    expect(summary!.evidence.map((ev) => ev.position)).toEqual([0, 2, 3, 4]);
    await e.close();
  });
}
