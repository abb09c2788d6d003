/**
 * `summarize_conversation` and `list_memories`'s `kinds` and `sessionId` filters against the built bin, with the MCP
 * SDK's own client: a single-user server over stdio summarizes one of its user's conversations and lists it; another
 * user's server (stdio) and another user's per-user token (HTTP) on the same SQLite file cannot summarize or read it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSessionId } from '../src/session-ids.js';
import {
  type BeliefOut,
  type Connected,
  call,
  childEnv,
  connectHttp,
  connectStdio,
  type HttpChild,
  ok,
  type RememberOut,
  startHttpChild,
  tempDir,
  textOf,
} from './helpers.js';

interface SummaryOut {
  readonly userId: string;
  readonly sessionId: string;
  readonly summary: (BeliefOut & { kind: string; subject: string }) | null;
  readonly from: string | null;
  readonly to: string | null;
}

interface ListOut {
  readonly items: readonly (BeliefOut & { kind: string })[];
  readonly sessionId?: string;
  readonly nextCursor: string | null;
}

const TRIP = [
  'We are planning a hiking trip to the Dolomites in July with my brother Luca.',
  'Luca is bringing his new climbing gear for the via ferrata routes near Cortina.',
];

const ALICE_TOKEN = 'alice-token-0123456789abcdef';
const BOB_TOKEN = 'bob-token-0123456789abcdef';

let home: ReturnType<typeof tempDir>;
let alice: Connected;
let bob: Connected;
/** Alice's conversation "trip" as the server stores it (its `mcp:` session id). */
let stored: string;

beforeAll(async () => {
  home = tempDir();
  alice = await connectStdio(['--user', 'alice'], childEnv(home.path));
  bob = await connectStdio(['--user', 'bob'], childEnv(home.path));
  for (const [position, text] of TRIP.entries()) {
    const r = await ok<RememberOut>(alice.client, 'add_memory', {
      text,
      sessionId: 'trip',
      position,
      wait: position === TRIP.length - 1,
    });
    stored = r.sessionId;
  }
  // A statement outside the conversation: never part of its summary.
  await ok(alice.client, 'add_memory', { text: 'My favorite color is teal.', wait: true });
}, 60_000);

afterAll(async () => {
  await alice?.close();
  await bob?.close();
  home.remove();
});

describe('summarize_conversation', () => {
  it('summarizes the user’s conversation by the sessionId add_memory took, and list_memories lists it by kind and conversation', {
    timeout: 60_000,
  }, async () => {
    const c = alice.client;
    expect(stored).toBe(clientSessionId({ userId: 'alice', namespace: '' }, 'trip'));
    // Nothing is summarized until asked.
    expect((await ok<ListOut>(c, 'list_memories', { kinds: ['summary'] })).items).toEqual([]);

    const result = await call(c, 'summarize_conversation', { sessionId: 'trip' });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as unknown as SummaryOut;
    expect(out).toMatchObject({ userId: 'alice', sessionId: stored });
    const summary = out.summary!;
    expect(summary).toMatchObject({ kind: 'summary', status: 'active', subject: 'conversation', version: 1 });
    expect(summary.statement).toContain('Dolomites');
    expect(summary.statement).toContain('via ferrata');
    expect(summary.statement).not.toContain('teal');
    expect(summary.evidence.length).toBeGreaterThan(0);
    expect(summary.evidence.every((e) => e.sessionId === stored)).toBe(true);
    expect(out.from).not.toBeNull();
    expect(out.to! >= out.from!).toBe(true);
    // The text: the summary inside the block of untrusted data, with its kind and its conversation's day.
    const text = textOf(result);
    expect(text).toContain(MEMORY_BLOCK_OPEN);
    expect(text).toContain(MEMORY_BLOCK_CLOSE);
    expect(text).toContain(`- ${summary.id} v1 [active, summary, conversation ${out.from!.slice(0, 10)}] `);

    const summaries = await ok<ListOut>(c, 'list_memories', { kinds: ['summary'] });
    expect(summaries.items.map((b) => b.id)).toEqual([summary.id]);
    expect(summaries.items[0]!.statement).toBe(summary.statement);
    // By conversation: the client's id or the stored one name the same conversation.
    for (const sessionId of ['trip', stored]) {
      const one = await ok<ListOut>(c, 'list_memories', { kinds: ['summary'], sessionId });
      expect(one.sessionId).toBe(stored);
      expect(one.items.map((b) => b.id)).toEqual([summary.id]);
    }
    const episodes = await ok<ListOut>(c, 'list_memories', { kinds: ['episode'], sessionId: 'trip' });
    expect(episodes.items.map((b) => b.statement).sort()).toEqual([...TRIP].sort());
    expect((await ok<ListOut>(c, 'list_memories', { kinds: ['summary'], sessionId: 'other' })).items).toEqual(
      [],
    );
    // Several kinds at once; every kind by default (the summary among them).
    const mixed = await ok<ListOut>(c, 'list_memories', { kinds: ['summary', 'episode'], limit: 100 });
    expect(new Set(mixed.items.map((b) => b.kind))).toEqual(new Set(['summary', 'episode']));
    const all = await ok<ListOut>(c, 'list_memories', { limit: 100 });
    expect(all.items.map((b) => b.id)).toContain(summary.id);
    expect(all.items.some((b) => b.kind === 'fact' || b.kind === 'preference')).toBe(true);

    // Summarized again with nothing new: the same summary, confirmed; nothing superseded.
    const again = await ok<SummaryOut>(c, 'summarize_conversation', { sessionId: stored });
    expect(again.summary?.id).toBe(summary.id);
    expect(again.summary?.statement).toBe(summary.statement);
    const everything = await ok<ListOut>(c, 'list_memories', { kinds: ['summary'], status: 'all' });
    expect(everything.items.map((b) => [b.id, b.status])).toEqual([[summary.id, 'active']]);
  });

  it('says when a conversation has nothing to summarize, and writes nothing', {
    timeout: 60_000,
  }, async () => {
    const c = alice.client;
    const r = await call(c, 'summarize_conversation', { sessionId: 'never-said' });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ summary: null, from: null, to: null });
    expect(textOf(r)).toMatch(/^Nothing to summarize: conversation "never-said" has no remembered turn/);
    const summaries = await ok<ListOut>(c, 'list_memories', { kinds: ['summary'], status: 'all' });
    expect(summaries.items).toHaveLength(1);
  });

  it('another user’s server cannot summarize or list the user’s conversation, by either id, and cannot name the user', {
    timeout: 60_000,
  }, async () => {
    const before = await ok<ListOut>(alice.client, 'list_memories', { kinds: ['summary'], status: 'all' });
    expect(before.items).toHaveLength(1);
    const c = bob.client;
    for (const sessionId of ['trip', stored]) {
      const r = await call(c, 'summarize_conversation', { sessionId });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ userId: 'bob', summary: null });
      expect(textOf(r)).toMatch(/^Nothing to summarize/);
      expect(JSON.stringify(r)).not.toMatch(/Dolomites|ferrata|Luca/);
      expect((await ok<ListOut>(c, 'list_memories', { sessionId, status: 'all' })).items).toEqual([]);
    }
    expect((await ok<ListOut>(c, 'list_memories', { kinds: ['summary'], status: 'all' })).items).toEqual([]);
    // A single-user server serves its user only: naming alice is refused, and nothing is written.
    const refused = await call(c, 'summarize_conversation', { sessionId: 'trip', userId: 'alice' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^invalid_input: userId: this server serves one user only/);
    const listRefused = await call(c, 'list_memories', { kinds: ['summary'], userId: 'alice' });
    expect(listRefused.isError).toBe(true);
    // Alice's summary is exactly as it was.
    const after = await ok<ListOut>(alice.client, 'list_memories', { kinds: ['summary'], status: 'all' });
    expect(after.items).toEqual(before.items);
  });
});

describe('summarize_conversation over HTTP with per-user tokens', () => {
  let server: HttpChild;

  beforeAll(async () => {
    const file = join(home.path, 'tokens');
    writeFileSync(file, `${ALICE_TOKEN}:alice\n${BOB_TOKEN}:bob\n`);
    server = await startHttpChild(['--multi-user', '--token-file', file], childEnv(home.path));
  }, 60_000);

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  it('a token that does not name the user cannot summarize the user’s conversation (403); its own user’s is served', {
    timeout: 60_000,
  }, async () => {
    const before = await ok<ListOut>(alice.client, 'list_memories', { kinds: ['summary'], status: 'all' });
    const asBob = await connectHttp(server.url, BOB_TOKEN);
    try {
      await expect(
        asBob.client.callTool({
          name: 'summarize_conversation',
          arguments: { sessionId: 'trip', userId: 'alice' },
        }),
      ).rejects.toMatchObject({ code: 403 });
      await expect(
        asBob.client.callTool({
          name: 'list_memories',
          arguments: { kinds: ['summary'], userId: 'alice' },
        }),
      ).rejects.toMatchObject({ code: 403 });
      // Bob's own memory has no such conversation, by either id.
      for (const sessionId of ['trip', stored]) {
        expect(
          await ok<SummaryOut>(asBob.client, 'summarize_conversation', { sessionId, userId: 'bob' }),
        ).toMatchObject({ userId: 'bob', summary: null });
      }
    } finally {
      await asBob.close();
    }
    // Alice's summary is exactly as it was.
    const untouched = await ok<ListOut>(alice.client, 'list_memories', { kinds: ['summary'], status: 'all' });
    expect(untouched.items).toEqual(before.items);
    const asAlice = await connectHttp(server.url, ALICE_TOKEN);
    try {
      const mine = await ok<SummaryOut>(asAlice.client, 'summarize_conversation', {
        sessionId: 'trip',
        userId: 'alice',
      });
      // The same summary, confirmed (a new version of it, the same text).
      expect(mine.summary).toMatchObject({
        id: before.items[0]?.id,
        status: 'active',
        version: (before.items[0]?.version ?? 0) + 1,
        statement: before.items[0]?.statement,
      });
    } finally {
      await asAlice.close();
    }
  });
});
