/**
 * The built `mem01-mcp` over stdio, reached by the MCP SDK's `Client` (which spawns it as an MCP host does), on a
 * SQLite file in a temporary MEM01_HOME.
 */
import { join } from 'node:path';
import { startInspector } from '@mem01/cli';
import { MemoryEngine } from '@mem01/engine';
import { createLocalEmbedder } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
import { quiet } from '@mem01/test-kit';
import type { TextResourceContents } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { profileUri, usageUri } from '../src/resources.js';
import {
  type BeliefOut,
  childEnv,
  connectStdio,
  ok,
  type RecallOut,
  type RememberOut,
  tempDir,
  tempDirForFile,
} from './helpers.js';
import { rememberThenRecallAcrossConnections, USER } from './scenario.js';

const home = tempDirForFile();

describe('mem01-mcp over stdio', () => {
  it('remembers on one connection and recalls on the next; corrects, forgets, serves resources and the prompt', {
    timeout: 120_000,
  }, async () => {
    await rememberThenRecallAcrossConnections(
      () => connectStdio(['--user', USER], childEnv(home.path)),
      profileUri(USER),
    );
  });

  it('takes the user from MEM01_USER_ID and says on stderr what it serves, with the default SQLite file', {
    timeout: 60_000,
  }, async () => {
    const conn = await connectStdio([], childEnv(home.path, { MEM01_USER_ID: USER }));
    try {
      const listed = await ok<{ userId: string; items: BeliefOut[] }>(conn.client, 'list_memories', {});
      expect(listed.userId).toBe(USER);
      expect(listed.items.map((b) => b.statement)).toContain("The user's favorite color is teal.");
      expect(conn.stderr()).toContain(`serving user "${USER}" from sqlite ${join(home.path, 'memory.db')}`);
    } finally {
      await conn.close();
    }
  });

  it('skips a retried statement, and keeps distinct ones and one said again after another', {
    timeout: 60_000,
  }, async () => {
    const conn = await connectStdio(['--user', 'retry-user'], childEnv(home.path));
    const c = conn.client;
    // One `at` for the retries: the same text at the same time is the same statement, on any server.
    const at = new Date().toISOString();
    const later = new Date(Date.parse(at) + 1000).toISOString();
    try {
      const lisbon = await ok<RememberOut>(c, 'add_memory', { text: 'I live in Lisbon.', at });
      const retry = await ok<RememberOut>(c, 'add_memory', { text: 'I live in Lisbon.', at });
      expect(retry).toMatchObject({ accepted: false, duplicate: true, sessionId: lisbon.sessionId });
      expect(retry.position).toBe(lisbon.position);
      const porto = await ok<RememberOut>(c, 'add_memory', { text: 'I live in Porto.', at });
      expect(porto.accepted).toBe(true);
      expect(porto.position).not.toBe(lisbon.position);
      // Sent again without `at`, a retry of the last statement is still skipped (the engine's repeat rule).
      const resent = await ok<RememberOut>(c, 'add_memory', { text: 'I live in Porto.' });
      expect(resent).toMatchObject({ accepted: false, duplicate: true, position: porto.position });
      // Lisbon said again after Porto is not a retry: it is accepted, and supersedes Porto.
      const again = await ok<RememberOut>(c, 'add_memory', {
        text: 'I live in Lisbon.',
        at: later,
        wait: true,
      });
      expect(again.accepted).toBe(true);
      expect(again.position).not.toBe(lisbon.position);
      const recalled = await ok<RecallOut>(c, 'search_memory', { query: 'Where do I live?' });
      expect(recalled.block).toMatch(/\] The user lives in Lisbon\.|\[user said [\d-]+\] I live in Lisbon\./);
      // Porto is superseded, and the turn that said it is retired with it.
      expect(recalled.block).not.toContain('Porto');
      // A turn of the client's own conversation keeps its position: retried, it is skipped.
      const turn = { text: 'My dog is called Biscuit.', sessionId: 'chat-7', position: 3 };
      const first = await ok<RememberOut>(c, 'add_memory', turn);
      expect(first).toMatchObject({ accepted: true, position: 3 });
      expect(first.sessionId).toMatch(/^mcp:[0-9a-f]{24}:c:chat-7$/);
      expect(await ok<RememberOut>(c, 'add_memory', turn)).toMatchObject({
        accepted: false,
        duplicate: true,
      });
      // The deprecated names (the tool remember, the field conversationId) reach the same conversation: the same turn.
      const { sessionId: _, ...old } = turn;
      expect(await ok<RememberOut>(c, 'remember', { ...old, conversationId: 'chat-7' })).toMatchObject({
        accepted: false,
        duplicate: true,
        sessionId: first.sessionId,
      });
      const yes = await ok<RememberOut>(c, 'add_memory', { ...turn, position: 4, wait: true });
      expect(yes.accepted).toBe(true);
    } finally {
      await conn.close();
    }
  });

  it('serves the user’s budget usage as a resource, against the MEM01_* limits, and no other user’s', {
    timeout: 60_000,
  }, async () => {
    const own = tempDir();
    const env = childEnv(own.path, {
      MEM01_EMBEDDING_CALLS_PER_USER: '50',
      MEM01_MAX_ACTIVE_BELIEFS_PER_USER: '100',
    });
    const conn = await connectStdio(['--user', 'dana'], env);
    const c = conn.client;
    try {
      const read = async (userId: string) =>
        JSON.parse(
          ((await c.readResource({ uri: usageUri(userId) })).contents[0] as TextResourceContents).text,
        );
      const before = await read('dana');
      expect(before).toMatchObject({
        userId: 'dana',
        periodMs: 3_600_000,
        counting: true,
        llmCalls: { used: 0, limit: null },
        embeddingCalls: { used: 0, limit: 50 },
        activeBeliefs: { used: 0, limit: 100 },
      });
      expect(Date.parse(before.windowEnd) - Date.parse(before.windowStart)).toBe(3_600_000);
      await ok<RememberOut>(c, 'add_memory', { text: 'I live in Oslo.', wait: true });
      const after = await read('dana');
      // The offline embedder reports no usage: the commit's one call counts as one.
      expect(after.embeddingCalls).toEqual({ used: 1, limit: 50 });
      expect(after.activeBeliefs).toEqual({ used: 1, limit: 100 });
      // The estimated tokens of that belief's statement (UTF-8 bytes / 4), with no token cap set.
      expect(after.activeTokens.limit).toBeNull();
      expect(after.activeTokens.used).toBeGreaterThan(0);
      await expect(c.readResource({ uri: usageUri('bob') })).rejects.toThrow(
        /invalid_input: userId: this server serves one user only/,
      );
    } finally {
      await conn.close();
      own.remove();
    }
  });

  it('shows in the CLI inspector what it wrote: the mcp: session of each belief', {
    timeout: 60_000,
  }, async () => {
    const store = openSqliteStore({ path: join(home.path, 'memory.db'), logger: quiet });
    const engine = new MemoryEngine({
      store,
      embedder: createLocalEmbedder(),
      extractor: { name: 'none', extract: async () => ({ operations: [] }) },
    });
    const inspector = await startInspector({ engine, store });
    try {
      const [teal] = (await engine.recall({ userId: USER }, 'favorite color')).map((r) => r.belief);
      expect(teal?.statement).toBe("The user's favorite color is teal.");
      const page = await fetch(`${inspector.origin}/belief?u=${USER}&id=${teal?.id}`, {
        headers: { authorization: `Bearer ${inspector.token}` },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      const session = teal?.evidence[0]?.sessionId as string;
      expect(session.startsWith('mcp:')).toBe(true);
      expect(html).toContain(`evidence in session <code>${session}</code>`);
      expect(html).toContain('source extracted');
    } finally {
      await inspector.close();
      await engine.close();
      await store.close();
    }
  });
});
