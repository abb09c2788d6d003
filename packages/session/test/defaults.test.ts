/**
 * The defaults from the environment, end to end: @mem01/local + one SQLite file; the OpenAI path against the
 * fake OpenAI server; Postgres when DATABASE_URL is set. (The error for a missing Postgres package is
 * @mem01/runtime's, tested there.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { extractionData, startFakeOpenAI } from '@mem01/openai/testing';
import { resetNoticeForTests } from '@mem01/runtime/testing';
import { openSqliteStore } from '@mem01/store-sqlite';
import {
  createPgDatabase,
  dropPgDatabase,
  quiet,
  type TempDir,
  tempDir,
  uniquePgName,
} from '@mem01/test-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeSharedRuntimes, memSession, sharedRuntimeCount } from '../src/index.js';
import { agentWith, echoModel, runner } from './harness.js';

const dirs: TempDir[] = [];
function tempHome(): string {
  const dir = tempDir('mem01session-');
  dirs.push(dir);
  return dir.path;
}
afterEach(() => closeSharedRuntimes());
afterAll(() => {
  for (const d of dirs) d.remove();
});

const blockOf = (input: unknown): string | null => {
  const items = input as Array<{ content?: unknown }>;
  const hit = items.find((i) => typeof i.content === 'string' && i.content.startsWith('<mem01-memory'));
  return (hit?.content as string | undefined) ?? null;
};

describe('no DATABASE_URL, no OPENAI_API_KEY: @mem01/local and one SQLite file', () => {
  it('remembers across conversations: a move supersedes the old city; unrelated questions recall nothing', async () => {
    const home = tempHome();
    const env = { MEM01_HOME: home };
    const lines: string[] = [];
    const logger = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    resetNoticeForTests();
    const model = echoModel();
    const agent = agentWith(model);
    const converse = async (conversation: string, text: string) => {
      const session = memSession(conversation, { userId: 'dana', env, logger });
      try {
        await runner().run(agent, text, { session, ...session.runConfig() });
        await session.flushMemory();
      } finally {
        await session.close();
      }
      return model.calls.at(-1)!.request.input;
    };

    await converse('conv-a', 'I live in NYC and pay $2,400 rent');
    await converse('conv-b', 'I moved to SF');
    const c = blockOf(await converse('conv-c', 'Where do I live now?'));
    expect(c).not.toBeNull();
    expect(c).toMatch(/San Francisco|\bSF\b/);
    expect(c).not.toMatch(/NYC|New York/);
    const sister = await converse('conv-d', "What is my sister's name?");
    // The block is always there (one shape per run), and for the sister it holds no belief.
    expect(blockOf(sister)).toContain('no relevant notes');
    expect(blockOf(sister)).not.toMatch(/\[stored /);

    // one notice, once per process
    expect(lines.filter((l) => l.includes('OPENAI_API_KEY is not set'))).toHaveLength(1);
    expect(sharedRuntimeCount()).toBe(0);

    // one file holds both the transcript and the beliefs; the package closed it, so it can be reopened
    const path = join(home, 'memory.db');
    expect(existsSync(path)).toBe(true);
    const store = openSqliteStore({ path });
    try {
      expect(await store.getItems({ userId: 'dana' }, 'conv-a')).toHaveLength(2);
      const history = await store.history({ userId: 'dana' });
      const city = history.filter((b) => b.attribute === 'home_city');
      expect(city.find((b) => b.status === 'active')?.value).toMatch(/San Francisco|SF/);
      expect(city.find((b) => b.status === 'superseded')?.value).toMatch(/New York|NYC/);
    } finally {
      await store.close();
    }
  });
});

describe('OPENAI_API_KEY set: @mem01/openai', () => {
  it('extracts and embeds through the OpenAI API (a fake server on 127.0.0.1)', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.setResponses((request) => {
        const data = extractionData(request);
        const turn = data.turns.find((t) => t.role === 'user' && t.text.includes('Lisbon'));
        if (!turn) return { ops: [] };
        return {
          ops: [
            {
              op: 'add',
              kind: 'fact',
              subj: 'user',
              attr: 'home_city',
              val: 'Lisbon',
              stmt: 'The user lives in Lisbon.',
              conf: 0.95,
              from: null,
              to: null,
              ev: [{ t: turn.id, q: 'I live in Lisbon' }],
            },
          ],
        };
      });
      const env = {
        MEM01_HOME: tempHome(),
        OPENAI_API_KEY: 'sk-test-fake-key-0123456789',
        OPENAI_BASE_URL: fake.url,
      };
      const model = echoModel();
      const a = memSession('oa-1', { userId: 'ola', env });
      await runner().run(agentWith(model), 'I live in Lisbon', { session: a, ...a.runConfig() });
      await a.flushMemory();
      const b = memSession('oa-2', { userId: 'ola', env });
      expect(sharedRuntimeCount()).toBe(1);
      await runner().run(agentWith(model), 'Which city do I live in?', { session: b, ...b.runConfig() });
      expect(blockOf(model.calls.at(-1)!.request.input)).toContain('The user lives in Lisbon.');
      expect(fake.requestsFor('responses').length).toBeGreaterThan(0);
      expect(fake.requestsFor('embeddings').length).toBeGreaterThan(0);
      expect(fake.requests.every((r) => r.authorized)).toBe(true);
      await a.close();
      await b.close();
    } finally {
      await fake.close();
    }
  });
});

describe('DATABASE_URL set: Postgres', () => {
  // The default schema (`mem01`) is what this test is about, so it gets a database of its own: other checkouts and
  // runs share the server, and one of an older or newer mem01 in the shared database's `mem01` schema would meet it.
  const database = uniquePgName('session_defaults');
  let url: string;
  beforeAll(async () => {
    url = await createPgDatabase(database);
  });
  afterAll(async () => {
    await closeSharedRuntimes();
    // Only this test's own database, whose connections are all this test's.
    await dropPgDatabase(database);
  });

  it('stores transcript and beliefs in Postgres, in the default schema', async () => {
    const env = { DATABASE_URL: url };
    const userId = `pg-user-${Date.now()}`;
    const session = memSession(`pg-conv-${Date.now()}`, {
      userId,
      env,
      logger: quiet,
    });
    try {
      await session.addItems([{ role: 'user', content: 'I live in Berlin' }]);
      await session.flushMemory();
      expect(await session.getItems()).toEqual([{ role: 'user', content: 'I live in Berlin' }]);
      expect(session.lastMemoryError).toBeNull();
      expect((await session.memoryHistory()).map((b) => b.value)).toContain('Berlin');
      const runtime = await session.runtime();
      expect(runtime.description.store).toBe('postgres');
      expect(runtime.description.location).toContain(database);
      expect(runtime.description.location).toContain('mem01');
      await session.clearSession();
      expect((await session.clearMemory()).beliefs).toBeGreaterThan(0);
      expect(await session.memoryHistory({ includeInvalidated: true })).toEqual([]);
    } finally {
      await session.close();
    }
  });
});
