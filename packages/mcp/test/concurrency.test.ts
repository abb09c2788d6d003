/**
 * Two `mem01-mcp` processes on one SQLite file, both remembering for one user at once (as two MCP hosts of one
 * person would): nothing is lost, nothing is extracted twice, and one statement sent to both is stored once.
 */
import { join } from 'node:path';
import { openSqliteStore } from '@mem01/store-sqlite';
import { quiet } from '@mem01/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, childEnv, connectStdio, ok, type RememberOut, tempDir } from './helpers.js';

const USER = 'erin';
const THINGS = [
  'color',
  'food',
  'drink',
  'book',
  'movie',
  'band',
  'song',
  'city',
  'sport',
  'season',
  'fruit',
  'game',
];
const VALUES = [
  'teal',
  'ramen',
  'tea',
  'dune',
  'alien',
  'blur',
  'wonderwall',
  'lisbon',
  'tennis',
  'autumn',
  'mango',
  'chess',
];

let home: ReturnType<typeof tempDir>;
let a: Connected;
let b: Connected;

beforeAll(async () => {
  home = tempDir();
  const db = join(home.path, 'shared.db');
  [a, b] = await Promise.all([
    connectStdio(['--user', USER, '--db', db], childEnv(home.path)),
    connectStdio(['--user', USER, '--db', db], childEnv(home.path)),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  home.remove();
});

describe('two servers on one SQLite file', () => {
  it('both remember for one user at once: nothing lost, nothing extracted twice', {
    timeout: 120_000,
  }, async () => {
    const at = new Date().toISOString();
    const shared = 'My favorite tree is oak.';
    const writes = THINGS.map((thing, i) => {
      const server = i % 2 === 0 ? a : b;
      return ok<RememberOut>(server.client, 'add_memory', { text: `My favorite ${thing} is ${VALUES[i]}.` });
    });
    // The same statement reaching both servers (a retry on another host) is stored once.
    const both = [a, b].map((s) => ok<RememberOut>(s.client, 'add_memory', { text: shared, at }));
    const results = await Promise.all([...writes, ...both]);
    expect(results.slice(0, THINGS.length).every((r) => r.accepted)).toBe(true);
    expect(results.slice(THINGS.length).filter((r) => r.accepted)).toHaveLength(1);

    // Each waits until every accepted turn of the user is extracted, by whichever process claimed it.
    const [doneA, doneB] = await Promise.all(
      [a, b].map((s) =>
        ok<RememberOut & { pending: number }>(s.client, 'add_memory', { text: shared, at, wait: true }),
      ),
    );
    expect(doneA?.pending).toBe(0);
    expect(doneB?.pending).toBe(0);

    const store = openSqliteStore({ path: join(home.path, 'shared.db'), logger: quiet });
    try {
      // The beliefs (each statement's turn is kept beside it as an episode).
      const active = (
        await store.list({ userId: USER }, { statuses: ['active', 'pending'], limit: 1000 })
      ).items.filter((b) => b.kind !== 'episode');
      const expected = [...THINGS.map((t, i) => `favorite:${t}=${VALUES[i]}`), 'favorite:tree=oak'].sort();
      expect(active.map((x) => `${x.attribute}=${x.value.toLowerCase()}`).sort()).toEqual(expected);
      // Extracted once: one piece of evidence each, one audit "add" each (and one for its episode), no confirmation
      // of a repeat.
      for (const belief of active) expect(belief.evidence).toHaveLength(1);
      const audit = await store.auditLog({ userId: USER }, { limit: 10_000 });
      expect(audit.filter((e) => e.action === 'add')).toHaveLength(2 * (THINGS.length + 1));
      expect(audit.filter((e) => e.action === 'confirm')).toHaveLength(0);
      const backlog = await store.backlog({ now: new Date().toISOString(), userId: USER });
      expect(backlog).toMatchObject({ queued: 0, claimed: 0, dead: 0 });
    } finally {
      await store.close();
    }
  });
});
