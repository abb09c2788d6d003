/**
 * Conversation summaries through the session, end to end: real `Runner` runs with an offline model on the default
 * runtime (@mem01/local and one SQLite file under a temp MEM01_HOME), then `summarizeConversation` and
 * `memoryHistory({ kinds: ['summary'] })`, for the user and against another user.
 */
import { InvalidInputError } from '@mem01/engine';
import { quiet, type TempDir, tempDir } from '@mem01/test-kit';
import { RunContext } from '@openai/agents';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, createMemoryTools, type MemSessionOptions, memSession } from '../src/index.js';
import { agentWith, echoModel, inputText, runner } from './harness.js';

const dirs: TempDir[] = [];
afterEach(() => closeSharedRuntimes());
afterAll(() => {
  for (const d of dirs) d.remove();
});

/** The default runtime, offline: no DATABASE_URL, no OPENAI_API_KEY, one SQLite file in a fresh MEM01_HOME. */
function defaults(): (userId: string) => MemSessionOptions {
  const dir = tempDir('mem01session-summaries-');
  dirs.push(dir);
  return (userId) => ({ userId, env: { MEM01_HOME: dir.path }, logger: quiet });
}

/** One conversation of `userId`: a run per text through the real Runner, then its extraction waited for. */
async function converse(
  options: MemSessionOptions,
  conversation: string,
  texts: readonly string[],
): Promise<void> {
  const session = memSession(conversation, options);
  const model = echoModel();
  try {
    for (const text of texts) await runner().run(agentWith(model), text, { session, ...session.runConfig() });
    await session.flushMemory();
  } finally {
    await session.close();
  }
}

const TRIP = [
  'We are planning a hiking trip to the Dolomites in July with my brother Luca.',
  'Luca is bringing his new climbing gear for the via ferrata routes near Cortina.',
];
const GARDEN = ['I planted tomatoes and basil in the raised garden bed this weekend.'];

describe('conversation summaries through the session', () => {
  it('summarizes an earlier conversation from a session of the next one, lists it by kind and conversation, and confirms it when summarized again', async () => {
    const as = defaults();
    await converse(as('maya'), 'maya-trip', TRIP);
    await converse(as('maya'), 'maya-garden', GARDEN);

    const second = memSession('maya-garden', as('maya'));
    try {
      // Nothing is summarized until asked (autoSummaries is off by default).
      expect(await second.memoryHistory({ kinds: ['summary'] })).toEqual([]);
      const summary = await second.summarizeConversation('maya-trip');
      expect(summary).toMatchObject({ kind: 'summary', status: 'active', subject: 'conversation' });
      // The user's own words, from the conversation summarized and none other.
      expect(summary!.statement).toContain('Dolomites');
      expect(summary!.statement).toContain('via ferrata');
      expect(summary!.statement).not.toContain('tomatoes');
      expect(summary!.evidence.length).toBeGreaterThan(0);
      expect(summary!.evidence.every((e) => e.sessionId === 'maya-trip' && e.role === 'user')).toBe(true);
      // Dated by the conversation: its first and last turn.
      expect(summary!.validFrom).not.toBeNull();
      expect(summary!.validTo! >= summary!.validFrom!).toBe(true);

      const listed = await second.memoryHistory({ kinds: ['summary'], sessionId: 'maya-trip' });
      expect(listed.map((b) => b.id)).toEqual([summary!.id]);
      expect(listed[0]!.statement).toBe(summary!.statement);
      // The default kinds (every kind but replies) list summaries beside beliefs and episodes.
      const all = await second.memoryHistory();
      expect(all.map((b) => b.id)).toContain(summary!.id);
      expect(all.some((b) => b.kind === 'episode')).toBe(true);
      expect(all.some((b) => b.kind === 'reply')).toBe(false);
      // This session's own conversation is not summarized yet; without an id, it is the one summarized.
      expect(await second.memoryHistory({ kinds: ['summary'], sessionId: 'maya-garden' })).toEqual([]);
      const own = await second.summarizeConversation();
      expect(own?.statement).toContain('tomatoes and basil');
      expect(own!.evidence.every((e) => e.sessionId === 'maya-garden')).toBe(true);
      const summaries = await second.memoryHistory({ kinds: ['summary'] });
      expect(summaries.map((b) => b.evidence[0]?.sessionId).sort()).toEqual(['maya-garden', 'maya-trip']);
      // Summarized again with nothing new: the same summary, confirmed (no second one, no superseded one).
      const again = await second.summarizeConversation('maya-trip');
      expect(again?.id).toBe(summary!.id);
      expect(again?.statement).toBe(summary!.statement);
      const withRetired = await second.memoryHistory({
        kinds: ['summary'],
        sessionId: 'maya-trip',
        includeInvalidated: true,
      });
      expect(withRetired.map((b) => b.id)).toEqual([summary!.id]);
    } finally {
      await second.close();
    }
    // A later conversation asking about it is given the summary in its block, dated by the conversation.
    const third = memSession('maya-next', as('maya'));
    const model = echoModel();
    try {
      await runner().run(
        agentWith(model),
        'Remind me what our conversation about the Dolomites trip covered?',
        { session: third, ...third.runConfig() },
      );
    } finally {
      await third.close();
    }
    expect(inputText(model.inputs[0]!)).toMatch(/\[conversation \d{4}-\d{2}-\d{2}\] [^\\]*Dolomites/);
  });

  it('the agent’s list_memories tool shows a summary with its kind and the day of its conversation', async () => {
    const as = defaults();
    await converse(as('maya'), 'maya-trip', TRIP);
    const session = memSession('maya-next', as('maya'));
    try {
      const summary = await session.summarizeConversation('maya-trip');
      expect(summary).not.toBeNull();
      const list = (await createMemoryTools({ session })).find((t) => t.name === 'list_memories')!;
      const out = String(await list.invoke(new RunContext(undefined), JSON.stringify({ limit: 20 })));
      const day = summary!.validFrom!.slice(0, 10);
      expect(out).toContain(`${summary!.id} [summary, conversation ${day}] `);
      expect(out).toMatch(/\[episode\] .*Dolomites/);
    } finally {
      await session.close();
    }
  });

  it('another user, running the same agent the same way, cannot summarize the first user’s conversation', async () => {
    const as = defaults();
    await converse(as('maya'), 'maya-trip', TRIP);
    const maya = memSession('maya-garden', as('maya'));
    const noah = memSession('noah-chat', as('noah'));
    try {
      const summary = await maya.summarizeConversation('maya-trip');
      expect(summary?.statement).toContain('Dolomites');
      // Noah talks to the same agent the same way, in a conversation of his own.
      await converse(as('noah'), 'noah-chat', GARDEN);
      expect(await noah.summarizeConversation('maya-trip')).toBeNull();
      expect(await noah.memoryHistory({ kinds: ['summary'], sessionId: 'maya-trip' })).toEqual([]);
      expect(await noah.memoryHistory({ kinds: ['summary'] })).toEqual([]);
      expect(JSON.stringify(await noah.memoryHistory({ includeInvalidated: true }))).not.toMatch(
        /Dolomites|via ferrata|Luca/,
      );
      // Maya's summary is as it was: still the active one, same version, same text.
      const [still] = await maya.memoryHistory({ kinds: ['summary'], sessionId: 'maya-trip' });
      expect(still).toMatchObject({
        id: summary!.id,
        status: 'active',
        version: summary!.version,
        statement: summary!.statement,
      });
      // Noah's own conversation is his to summarize.
      const his = await noah.summarizeConversation();
      expect(his?.statement).toContain('tomatoes');
      expect((await maya.memoryHistory({ kinds: ['summary'] })).map((b) => b.id)).toEqual([summary!.id]);
    } finally {
      await maya.close();
      await noah.close();
    }
  });

  it('engine: { autoSummaries: true } writes the summaries without asking, as the conversation grows', async () => {
    const as = defaults();
    const auto = (userId: string): MemSessionOptions => ({
      ...as(userId),
      engine: { autoSummaries: true, summaryAfterTurns: 4 },
    });
    // Two runs: four items (two user turns, two replies), a multiple of summaryAfterTurns.
    await converse(auto('maya'), 'maya-trip', TRIP);
    const session = memSession('maya-trip', auto('maya'));
    try {
      const [summary] = await session.memoryHistory({ kinds: ['summary'], sessionId: 'maya-trip' });
      expect(summary?.statement).toContain('Dolomites');
    } finally {
      await session.close();
    }
    // Off by default: the same runs write none.
    await converse(as('noah'), 'noah-trip', TRIP);
    const off = memSession('noah-trip', as('noah'));
    try {
      expect(await off.memoryHistory({ kinds: ['summary'] })).toEqual([]);
    } finally {
      await off.close();
    }
  });

  it('summarizeConversation refuses an invalid conversation id with a typed InvalidInputError', async () => {
    const as = defaults();
    const session = memSession('maya-trip', as('maya'));
    try {
      for (const bad of ['', '   ', 'x'.repeat(257), 'a\u0000b']) {
        const err = await session.summarizeConversation(bad).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InvalidInputError);
        expect(err).toMatchObject({ code: 'invalid_input', field: 'sessionId' });
      }
      await expect(session.summarizeConversation(42 as unknown as string)).rejects.toBeInstanceOf(
        InvalidInputError,
      );
    } finally {
      await session.close();
    }
  });
});
