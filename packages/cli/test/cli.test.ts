/**
 * Every command against a real SQLite file: a few through the built bin (a real child process), the rest through
 * the command layer in-process with captured output.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Belief, MemoryAdmin, MemoryEngine } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { createLocalEmbedder, createLocalExtractor } from '@mem01/local';
import { openPostgresStore } from '@mem01/store-postgres';
import { openSqliteStore, SQLITE_SCHEMA_VERSION as V } from '@mem01/store-sqlite';
import { dropPgSchema, nodeBinary, quiet, TEST_PG_URL, uniquePgName, withPgClient } from '@mem01/test-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, copyDb, runBin, runInProcess, seedFixture, seedStore, tempDir, USER, XSS } from './helpers.js';

let dir: string;
let seeded: string;
let n = 0;
/** A fresh copy of the seeded database for one test. */
function fresh(): string {
  n++;
  return copyDb(seeded, join(dir, `copy-${n}.db`));
}

const cli = (db: string, ...args: string[]) => runInProcess(['--db', db, ...args]);
/** The one stderr line of a command that opened memory: what it opened, named as the agent's runtime names it. */
const opened = (db: string) =>
  `mem01: sqlite ${db} (extractor local-rules, embedder local:mem01-local-hash-v1-384)\n`;
const json = async <T>(db: string, ...args: string[]): Promise<T> => {
  const r = await cli(db, '--json', ...args);
  expect(r.stderr).toBe(opened(db));
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
};
const allBeliefs = (db: string) => json<Belief[]>(db, 'beliefs', '--user', USER, '--status', 'all');
const byStatement = (beliefs: readonly Belief[], text: string) => {
  const b = beliefs.find((x) => x.statement === text);
  if (!b)
    throw new Error(`no belief ${JSON.stringify(text)} among ${beliefs.map((x) => x.statement).join(' | ')}`);
  return b;
};

beforeAll(async () => {
  dir = tempDir();
  seeded = join(dir, 'seeded.db');
  await seedFixture(seeded);
});

describe('reading', () => {
  it('users: a table through the real bin, and JSON counts that match the beliefs', async () => {
    const db = fresh();
    const r = await runBin(['--db', db, 'users']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(opened(db));
    expect(r.stdout).toMatch(/^USER\s+NAMESPACE\s+ACTIVE\s+PENDING/);
    expect(r.stdout).toMatch(/demo-user/);
    expect(r.stdout).toMatch(/other-user/);
    const users = await json<{ userId: string; counts: Record<string, number> }[]>(db, 'users');
    const demo = users.find((u) => u.userId === USER);
    const beliefs = await allBeliefs(db);
    for (const status of ['active', 'pending', 'superseded'] as const) {
      expect(demo?.counts[status]).toBe(beliefs.filter((b) => b.status === status).length);
    }
    expect(demo?.counts.superseded).toBeGreaterThan(0);
  });

  it('beliefs: active by default, --status filters, never another user', async () => {
    const db = fresh();
    const r = await cli(db, 'beliefs', '--user', USER);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/The user lives in Portland\./);
    expect(r.stdout).not.toMatch(/The user lives in Seattle\./); // superseded
    // The assistant's replies are records too (kind reply), listed for the operator; never beliefs about the user.
    expect(r.stdout).toMatch(/ reply /);
    expect(r.stdout).not.toMatch(/Lisbon/); // the other user's
    const pending = await json<Belief[]>(db, 'beliefs', '--user', USER, '--status', 'pending');
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.every((b) => b.status === 'pending')).toBe(true);
    const superseded = await json<Belief[]>(db, 'beliefs', '--user', USER, '--status', 'superseded,pending');
    expect(new Set(superseded.map((b) => b.status))).toEqual(new Set(['superseded', 'pending']));
    const bad = await cli(db, 'beliefs', '--user', USER, '--status', 'zombie');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--status "zombie"/);
  });

  it('recall --explain: ranked beliefs with every signal and the exact injected block', async () => {
    const db = fresh();
    const r = await runBin(['--db', db, 'recall', '--user', USER, 'where do I live?', '--explain']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/SCORE\s+LEXICAL\s+VECTOR\s+RECENCY\s+CONF\s+KIND/);
    const res = await json<{
      results: { belief: Belief; score: number; injected: boolean; signals: Record<string, number | null> }[];
      block: { text: string; bytes: number };
    }>(db, 'recall', '--user', USER, 'where do I live?', '--explain');
    expect(res.results[0]?.belief.statement).toBe('The user lives in Portland.');
    const top = res.results[0]!;
    expect(top.signals.lexical).toBeGreaterThan(0);
    // The offline embedder is lexical-fuzzy: recall ranks by the lexical index and does not scan its vectors.
    expect(top.signals.vector).toBeNull();
    // The score is the fused total scaled to 0..1 by the configuration's highest total.
    expect(top.score).toBeLessThanOrEqual(1);
    expect(top.signals.total! / top.signals.maxTotal!).toBeCloseTo(top.score, 10);
    expect(res.results.every((x) => x.belief.scope.userId === USER)).toBe(true);
    // The terminal shows the same block as the JSON, byte for byte.
    expect(r.stdout).toContain(res.block.text);
    expect(res.block.text).toMatch(/^<mem01-memory trust="untrusted">/);
    expect(Buffer.byteLength(res.block.text)).toBe(res.block.bytes);
    for (const x of res.results.filter((x) => x.injected))
      expect(res.block.text).toContain(x.belief.statement);
  });

  it('history: the supersession chain of one belief, and everything with the evidence quotes', async () => {
    const db = fresh();
    const seattle = byStatement(await allBeliefs(db), 'The user lives in Seattle.');
    const r = await cli(db, 'history', '--user', USER, '--id', seattle.id);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/superseded by \S+ \("The user lives in Portland\."\)/);
    expect(r.stdout).toMatch(/session conv-01 #0 \(user\): "[^"]*Seattle[^"]*"/);
    expect(r.stdout).toMatch(/session conv-17 #0/);
    const all = await json<{ belief: Belief; timeline: { type: string }[] }[]>(db, 'history', '--user', USER);
    expect(all.length).toBe((await allBeliefs(db)).length);
    const missing = await cli(db, 'history', '--user', USER, '--id', 'no-such-id');
    expect(missing.code).toBe(2);
  });

  it('doctor: schema version, capabilities with the vector mode, backlog and stale leases', async () => {
    const db = fresh();
    const store = openSqliteStore({ path: db, logger: quiet });
    await store.enqueue([
      {
        scope: { userId: USER },
        sessionId: 's-x',
        position: 0,
        role: 'user',
        text: 'I like chess.',
        at: new Date().toISOString(),
      },
    ]);
    const past = new Date(Date.now() - 120_000).toISOString();
    expect(await store.claim({ worker: 'dead-worker', leaseMs: 1000, now: past })).not.toBeNull();
    await store.close();
    const r = await runBin(['--db', db, 'doctor']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`schema version\\s+${V} \\(this mem01 supports ${V}\\)`));
    expect(r.stdout).toMatch(/vector search\s+(index \(sqlite-vec\)|exact \(exact-cosine\))/);
    expect(r.stdout).toMatch(/1 claimed, 0 dead, 1 stale lease/);
    expect(r.stdout).toMatch(/warning: 1 outbox lease\(s\) expired/);
    const report = await json<{ outbox: { staleLeases: number }; capabilities: { vectorIndex: string } }>(
      db,
      'doctor',
    );
    expect(report.outbox.staleLeases).toBe(1);
    expect(report.capabilities.vectorIndex).toBeTruthy();
  });
});

describe('usage', () => {
  it('usage: a user’s counts in the window against the MEM01_* limits, through the real bin and as JSON', async () => {
    const db = fresh();
    // An agent with budgets extracts one turn of the user: its extractor reports one call and its tokens.
    const period = '31622400000';
    const store = openSqliteStore({ path: db, logger: quiet });
    const kv = new KeyValueExtractor();
    const agent = new MemoryEngine({
      store,
      extractor: {
        name: 'metered',
        extract: async (request) => ({
          ...(await kv.extract(request)),
          usage: { llmCalls: 1, inputTokens: 120, outputTokens: 30 },
        }),
      },
      embedder: createLocalEmbedder(),
      config: { budgets: { periodMs: Number(period), llmCallsPerUser: 40 } },
    });
    const scope = { userId: USER };
    await agent.accept([
      {
        scope,
        sessionId: 'u-1',
        position: 0,
        role: 'user',
        text: 'chess_rating=1800',
        at: new Date().toISOString(),
      },
    ]);
    await agent.flush(scope);
    // Result capacity counts beliefs about the user: not the verbatim turns (episodes, the assistant's replies).
    const beliefs = (await agent.list(scope, { limit: 1000 })).items.filter(
      (b) => b.kind !== 'episode' && b.kind !== 'reply',
    );
    const active = beliefs.length;
    const tokens = Math.ceil(beliefs.reduce((n, b) => n + Buffer.byteLength(b.statement), 0) / 4);
    await agent.close();
    await store.close();
    const env = {
      MEM01_BUDGET_PERIOD_MS: period,
      MEM01_LLM_CALLS_PER_USER: '40',
      MEM01_EMBEDDING_CALLS_PER_USER: '1',
      MEM01_MAX_ACTIVE_BELIEFS_PER_USER: '500',
      MEM01_MAX_ACTIVE_TOKENS_PER_USER: '30000',
    };
    const r = await runBin(['--db', db, 'usage', '--user', USER], { env });
    expect(r.stderr).toBe(opened(db));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^budgets of demo-user, window \S+Z to \S+Z/);
    expect(r.stdout).toMatch(/llm calls\s+1\s+40\s*\n/);
    expect(r.stdout).toMatch(/input tokens\s+120\s+-/);
    // The offline embedder reports no usage: its one call for the commit counts as one, spending the limit of 1.
    expect(r.stdout).toMatch(/embedding calls\s+1\s+1\s+spent/);
    expect(r.stdout).toMatch(new RegExp(`active beliefs\\s+${active}\\s+500`));
    expect(r.stdout).toMatch(new RegExp(`active tokens \\(estimated\\)\\s+${tokens}\\s+30000`));
    const usage = JSON.parse(
      (await runBin(['--db', db, '--json', 'usage', '--user', USER], { env })).stdout,
    ) as Record<string, unknown>;
    expect(usage).toMatchObject({
      userId: USER,
      periodMs: Number(period),
      counting: true,
      llmCalls: { used: 1, limit: 40 },
      inputTokens: { used: 120, limit: null },
      outputTokens: { used: 30, limit: null },
      embeddingCalls: { used: 1, limit: 1 },
      embeddingTokens: { used: 0, limit: null },
      activeBeliefs: { used: active, limit: 500 },
      activeTokens: { used: tokens, limit: 30_000 },
    });
    expect(Date.parse(usage.windowEnd as string) - Date.parse(usage.windowStart as string)).toBe(
      Number(period),
    );
    // Another user's counters are theirs: nothing here.
    const other = await runInProcess(['--db', db, '--json', 'usage', '--user', 'other-user'], { env });
    expect(JSON.parse(other.stdout)).toMatchObject({ llmCalls: { used: 0, limit: 40 } });
    // Without budget variables: the counts with no limits, and a note saying where the limits come from.
    const plain = await runInProcess(['--db', db, 'usage', '--user', USER], {
      env: { MEM01_BUDGET_PERIOD_MS: period },
    });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/llm calls\s+1\s+-/);
    expect(plain.stdout).toMatch(/no budget is set here \(MEM01_LLM_CALLS_PER_USER/);
    const bad = await runInProcess(['--db', db, 'usage', '--user', USER], {
      env: { MEM01_LLM_CALLS_PER_USER: 'many' },
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'error [config]: MEM01_LLM_CALLS_PER_USER must be a positive integer, got "many"\n',
    );
    const missing = await runInProcess(['--db', db, 'usage']);
    expect(missing.code).toBe(2);
  });
});

describe('changing', () => {
  it('correct: a receipt, the new belief active and the old one kept as superseded', async () => {
    const db = fresh();
    const old = byStatement(await allBeliefs(db), 'The user lives in Portland.');
    const r = await runBin([
      '--db',
      db,
      'correct',
      '--user',
      USER,
      '--id',
      old.id,
      'The user lives in Vancouver.',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/corrected belief/);
    expect(r.stdout).toMatch(/superseded: "The user lives in Portland\." \(kept in history\)/);
    const after = await allBeliefs(db);
    const fixed = byStatement(after, 'The user lives in Vancouver.');
    expect(fixed).toMatchObject({
      status: 'active',
      source: 'correction',
      confidence: 1,
      supersedes: old.id,
    });
    expect(after.find((b) => b.id === old.id)).toMatchObject({
      status: 'superseded',
      supersededBy: fixed.id,
    });
  });

  it('forget: a receipt, the content gone from recall and history, a tombstone kept', async () => {
    const db = fresh();
    const target = byStatement(await allBeliefs(db), 'The user is allergic to peanuts.');
    const r = await cli(db, 'forget', '--user', USER, '--id', target.id);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/removed: "The user is allergic to peanuts\.", its value, 1 evidence quote/);
    const recall = await json<{ results: { belief: Belief }[]; block: { text: string } }>(
      db,
      'recall',
      '--user',
      USER,
      'peanuts allergy',
    );
    expect(recall.results.map((x) => x.belief.id)).not.toContain(target.id);
    expect(recall.block.text).not.toMatch(/peanut/i);
    const history = await cli(db, 'history', '--user', USER);
    expect(history.stdout).not.toMatch(/peanut/i);
    const tomb = (await allBeliefs(db)).find((b) => b.id === target.id);
    expect(tomb).toMatchObject({ status: 'forgotten', statement: '', value: '', evidence: [] });
    const again = await cli(db, 'forget', '--user', USER, '--id', target.id);
    expect(again.stdout).toMatch(/already forgotten/);
  });

  it('approve and reject pending beliefs', async () => {
    const db = fresh();
    const [pending] = await json<Belief[]>(db, 'beliefs', '--user', USER, '--status', 'pending');
    expect(pending).toBeDefined();
    const approved = await cli(db, 'approve', '--user', USER, '--id', pending!.id);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/approved belief .*now active/);
    expect((await allBeliefs(db)).find((b) => b.id === pending!.id)?.status).toBe('active');
    // Approving again is refused: it is not pending any more.
    const twice = await cli(db, 'approve', '--user', USER, '--id', pending!.id);
    expect(twice.code).toBe(2);
    expect(twice.stderr.startsWith(opened(db))).toBe(true);
    expect(twice.stderr.slice(opened(db).length)).toMatch(
      /^error \[invalid_input\]: .*only pending beliefs can be approved/,
    );

    const db2 = fresh();
    const rejected = await cli(db2, 'reject', '--user', USER, '--id', pending!.id);
    expect(rejected.code).toBe(0);
    expect((await allBeliefs(db2)).find((b) => b.id === pending!.id)?.status).toBe('retracted');
  });

  it('erase: refuses without --yes off a terminal, asks on one, and prints a receipt', async () => {
    const db = fresh();
    const refused = await runBin(['--db', db, 'erase', '--user', USER]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pass --yes/);
    expect((await allBeliefs(db)).length).toBeGreaterThan(0);

    const wrong = await runInProcess(['--db', db, 'erase', '--user', USER], {
      tty: true,
      stdinText: 'nope\n',
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/Type the user id to confirm/);
    expect((await allBeliefs(db)).length).toBeGreaterThan(0);

    const before = (await allBeliefs(db)).length;
    const ok = await runInProcess(['--db', db, 'erase', '--user', USER], {
      tty: true,
      stdinText: `${USER}\n`,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`beliefs:          ${before}`);
    expect(ok.stdout).toMatch(/transcript items: \d+/);
    expect(await allBeliefs(db)).toEqual([]);
    const users = await json<{ userId: string }[]>(db, 'users');
    expect(users.map((u) => u.userId)).toEqual(['other-user']);

    const db2 = fresh();
    const yes = await runBin(['--db', db2, 'erase', '--user', 'other-user', '--yes']);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toMatch(/erased user other-user/);
  });

  it('erase --all: every user, with a receipt; asks for "erase all" on a terminal, refuses off one without --yes', async () => {
    const db = fresh();
    const both = await runBin(['--db', db, 'erase', '--user', USER, '--all', '--yes']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exactly one of --user <id> or --all/);
    const neither = await runBin(['--db', db, 'erase', '--yes']);
    expect(neither.code).toBe(2);
    const refused = await runBin(['--db', db, 'erase', '--all']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/pass --yes/);
    const wrong = await runInProcess(['--db', db, 'erase', '--all'], { tty: true, stdinText: `${USER}\n` });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/Type "erase all" to confirm/);
    const users = await json<{ userId: string }[]>(db, 'users');
    expect(users.map((u) => u.userId).sort()).toEqual(['other-user', USER].sort());
    const before =
      (await allBeliefs(db)).length +
      (await json<Belief[]>(db, 'beliefs', '--user', 'other-user', '--status', 'all')).length;

    const ok = await runInProcess(['--db', db, 'erase', '--all'], { tty: true, stdinText: 'erase all\n' });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('erased every user (2)');
    expect(ok.stdout).toContain(`beliefs:          ${before}`);
    expect(await allBeliefs(db)).toEqual([]);
    expect(await json<unknown[]>(db, 'users')).toEqual([]);

    const db2 = fresh();
    const receipt = await json<{ action: string; all: boolean; removed: { users: number; beliefs: number } }>(
      db2,
      'erase',
      '--all',
      '--yes',
    );
    expect(receipt).toMatchObject({ action: 'erase', all: true, removed: { users: 2 } });
    expect(receipt.removed.beliefs).toBeGreaterThan(0);
    expect(await allBeliefs(db2)).toEqual([]);
  });
});

/** One conversation written through the engine on the file, as an agent writes it: the user's turns and the replies. */
async function writeConversation(
  db: string,
  userId: string,
  sessionId: string,
  turns: readonly (readonly ['user' | 'assistant', string, string])[],
  first = 0,
): Promise<void> {
  const store = openSqliteStore({ path: db, logger: quiet });
  const agent = new MemoryEngine({
    store,
    extractor: createLocalExtractor(),
    embedder: createLocalEmbedder(),
  });
  try {
    const scope = { userId };
    await agent.accept(
      turns.map(([role, text, at], i) => ({ scope, sessionId, position: first + i, role, text, at })),
    );
    await agent.flush(scope);
  } finally {
    await agent.close();
    await store.close();
  }
}

const TRIP: readonly (readonly ['user' | 'assistant', string, string])[] = [
  [
    'user',
    'I am planning a trip to Japan in April with my sister Lena. We want to see the temples and gardens of Kyoto.',
    '2026-03-02T09:00:00.000Z',
  ],
  [
    'assistant',
    'Kyoto in April is lovely for the cherry blossoms. How many days do you have?',
    '2026-03-02T09:01:00.000Z',
  ],
  [
    'user',
    'We have ten days in Japan, and Lena wants to spend three of them hiking near Mount Fuji.',
    '2026-03-02T09:05:00.000Z',
  ],
  ['user', 'Can you remind me what we planned for Kyoto?', '2026-03-03T08:00:00.000Z'],
];

interface SummarizeReceipt {
  action: string;
  sessionId: string;
  outcome: 'added' | 'unchanged' | 'superseded';
  superseded?: string;
  summary: Belief;
}

describe('conversation summaries', () => {
  it('summarize: a dated summary of one conversation (real bin and --json); beliefs --kind summary --session lists it', async () => {
    const db = fresh();
    await writeConversation(db, USER, 'trip-1', TRIP);

    const r = await runBin(['--db', db, 'summarize', '--user', USER, 'trip-1']);
    expect(r.stderr).toBe(opened(db));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^summarized conversation trip-1 of user demo-user: new summary \S+\n/);
    expect(r.stdout).toMatch(
      / {2}kind: summary, conversation date 2026-03-02 to 2026-03-03, drawn from 2 turn\(s\)\n/,
    );
    expect(r.stdout).toMatch(/ {2}\[conversation 2026-03-02 to 2026-03-03\] .*Kyoto/);
    expect(r.stdout).not.toMatch(/remind me/); // a question says nothing to summarize

    const [summary, ...others] = await json<Belief[]>(
      db,
      'beliefs',
      '--user',
      USER,
      '--kind',
      'summary',
      '--session',
      'trip-1',
    );
    expect(others).toEqual([]);
    expect(summary).toMatchObject({
      kind: 'summary',
      status: 'active',
      subject: 'conversation',
      // `trip-1` is not a canonical key: its hash keeps it apart from a conversation `trip_1`.
      attribute: expect.stringMatching(/^summary:trip_1~[0-9a-f]{16}$/),
      validFrom: '2026-03-02T09:00:00.000Z',
      validTo: '2026-03-03T08:00:00.000Z',
      scope: { userId: USER },
    });
    expect(summary!.statement).toMatch(/Kyoto/);
    expect(summary!.value).toBe(summary!.statement);
    expect(summary!.evidence.length).toBeGreaterThan(0);
    for (const e of summary!.evidence) {
      expect(e).toMatchObject({ sessionId: 'trip-1', role: 'user' });
      expect([0, 2]).toContain(e.position);
    }
    expect(r.stdout).toContain(`new summary ${summary!.id}\n`);
    expect(r.stdout).toContain(summary!.statement);

    // The table: its kind, and the conversation's date beside the text, as the injected block labels it.
    const table = await cli(db, 'beliefs', '--user', USER, '--kind', 'summary', '--session', 'trip-1');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+KIND\s+KEY\s+CONF\s+STORED\s+STATEMENT$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${summary!.id}\\s+active\\s+summary\\s+conversation\\.summary:trip_1~[0-9a-f]+…?\\s+1\\.00\\s+\\S+ \\S+\\s+\\[conversation 2026-03-02 to 2026-03-03\\] `,
      ),
    );

    // --kind alone: the user's summaries (only this one); --session alone: everything of the conversation.
    expect(
      (await json<Belief[]>(db, 'beliefs', '--user', USER, '--kind', 'summary')).map((b) => b.id),
    ).toEqual([summary!.id]);
    const conversation = await json<Belief[]>(db, 'beliefs', '--user', USER, '--session', 'trip-1');
    expect(conversation.map((b) => b.kind)).toEqual(expect.arrayContaining(['summary', 'episode', 'reply']));
    expect(conversation.every((b) => b.evidence.some((e) => e.sessionId === 'trip-1'))).toBe(true);
    // Several kinds: repeated, space- or comma-separated.
    const verbatim = await json<Belief[]>(
      db,
      'beliefs',
      '--user',
      USER,
      '--session',
      'trip-1',
      '--kind',
      'episode,reply',
      '--kind',
      'summary',
    );
    expect(new Set(verbatim.map((b) => b.kind))).toEqual(new Set(['episode', 'reply', 'summary']));
    const none = await cli(db, 'beliefs', '--user', USER, '--kind', 'summary', '--session', 'conv-01');
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('no active summary beliefs in conversation conv-01 for user demo-user\n');
  });

  it('summarize again: unchanged confirms the summary; a longer conversation supersedes it (kept in history)', async () => {
    const db = fresh();
    await writeConversation(db, USER, 'trip-1', TRIP);
    const first = await json<SummarizeReceipt>(db, 'summarize', '--user', USER, 'trip-1');
    expect(first).toMatchObject({ action: 'summarize', sessionId: 'trip-1', outcome: 'added' });
    expect(first.summary.kind).toBe('summary');
    const again = await json<SummarizeReceipt>(db, 'summarize', '--user', USER, 'trip-1');
    expect(again.outcome).toBe('unchanged');
    expect(again.summary.id).toBe(first.summary.id);
    const same = await cli(db, 'summarize', '--user', USER, 'trip-1');
    expect(same.stdout).toMatch(new RegExp(`unchanged, summary ${first.summary.id} confirmed`));

    await writeConversation(
      db,
      USER,
      'trip-1',
      [
        [
          'user',
          'We booked a ryokan in Hakone with an outdoor bath for the last two nights.',
          '2026-03-04T19:00:00.000Z',
        ],
      ],
      TRIP.length,
    );
    const later = await json<SummarizeReceipt>(db, 'summarize', '--user', USER, 'trip-1');
    expect(later).toMatchObject({ outcome: 'superseded', superseded: first.summary.id });
    expect(later.summary.statement).toMatch(/ryokan/);
    expect(later.summary.validTo).toBe('2026-03-04T19:00:00.000Z');
    const all = await json<Belief[]>(
      db,
      'beliefs',
      '--user',
      USER,
      '--kind',
      'summary',
      '--session',
      'trip-1',
      '--status',
      'all',
    );
    expect(all.map((b) => [b.id, b.status]).sort()).toEqual(
      [
        [first.summary.id, 'superseded'],
        [later.summary.id, 'active'],
      ].sort(),
    );
  });

  it('nothing to summarize: a clear message and exit code 1, for questions only, an unknown conversation and another user’s', async () => {
    const db = fresh();
    await writeConversation(db, USER, 'trip-1', TRIP);
    await writeConversation(db, USER, 'questions', [
      ['user', 'Where do I live?', '2026-03-05T10:00:00.000Z'],
      ['user', 'What is my rent?', '2026-03-05T10:01:00.000Z'],
    ]);
    for (const [user, session] of [
      [USER, 'questions'],
      [USER, 'no-such-conversation'],
      ['other-user', 'trip-1'], // demo-user's conversation: another user has none of it
    ] as const) {
      const r = await cli(db, 'summarize', '--user', user, session);
      expect(r.code, `${user} ${session}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `${opened(db)}error [nothing_to_summarize]: conversation ${session} of user ${user} has nothing left to summarize (no remembered turn, or only questions)\n`,
      );
      const listed = await json<Belief[]>(
        db,
        'beliefs',
        '--user',
        user,
        '--kind',
        'summary',
        '--status',
        'all',
      );
      expect(listed).toEqual([]);
    }
    // The other user sees nothing of demo-user's conversation, summarized or not.
    expect((await cli(db, 'summarize', '--user', USER, 'trip-1')).code).toBe(0);
    expect(await json<Belief[]>(db, 'beliefs', '--user', 'other-user', '--session', 'trip-1')).toEqual([]);
    expect(
      await json<Belief[]>(db, 'beliefs', '--user', 'other-user', '--kind', 'summary', '--status', 'all'),
    ).toEqual([]);
    // In another namespace the conversation is not there either.
    const ns = await runInProcess([
      '--db',
      db,
      '--namespace',
      'elsewhere',
      'summarize',
      '--user',
      USER,
      'trip-1',
    ]);
    expect(ns.code).toBe(1);
    expect(ns.stderr).toMatch(
      /error \[nothing_to_summarize\]: conversation trip-1 of user demo-user in namespace elsewhere has nothing left/,
    );
  });

  it('a bad --kind, a blank --session or a missing conversation: usage errors with [usage], exit code 2', async () => {
    const db = fresh();
    const bad = await cli(db, 'beliefs', '--user', USER, '--kind', 'summary,zombie');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      'error [usage]: --kind "zombie" is not one of identity, preference, goal, decision, fact, relationship, event, episode, reply, summary, note\n',
    );
    const blank = await cli(db, 'beliefs', '--user', USER, '--session', ' ');
    expect(blank.code).toBe(2);
    expect(blank.stderr).toBe('error [usage]: --session needs a conversation (session) id\n');
    const noSession = await cli(db, 'summarize', '--user', USER);
    expect(noSession.code).toBe(2);
    expect(noSession.stderr).toMatch(/^error \[usage\]: missing required argument 'session'/);
    const blankSession = await cli(db, 'summarize', '--user', USER, '');
    expect(blankSession.code).toBe(2);
    expect(blankSession.stderr).toBe('error [usage]: summarize needs a conversation (session) id\n');
    const noUser = await cli(db, 'summarize', 'trip-1');
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toMatch(/^error \[usage\]: required option '-u, --user <id>' not specified/);
    const help = await cli(db, 'summarize', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: mem01 summarize \[options\] <session>/);
  });
});

describe('export and import', () => {
  it('what an ended capture grant captured is left out of beliefs and export; history still shows it', async () => {
    const db = fresh();
    const store = openSqliteStore({ path: db, logger: quiet });
    const admin = new MemoryAdmin({ store });
    const scope = { userId: USER };
    const grant = await admin.grantCapture(scope, { intent: 'Remember your trips', policyId: 'trips-v1' });
    const trip = await admin.remember(scope, { kind: 'fact', attribute: 'next_trip', value: 'Reykjavik' });
    expect(trip.grantId).toBe(grant.id);
    await admin.revokeCapture(scope, { id: grant.id });
    await admin.close();
    await store.close();
    expect((await allBeliefs(db)).map((b) => b.id)).not.toContain(trip.id);
    const file = join(dir, `grant-export-${n}.jsonl`);
    expect((await cli(db, 'export', '--user', USER, '--output', file)).code).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toContain('Reykjavik');
    const history = await json<{ belief: Belief }[]>(db, 'history', '--user', USER);
    expect(history.map((e) => [e.belief.value, e.belief.grantId]).filter(([, g]) => g !== undefined)).toEqual(
      [['Reykjavik', grant.id]],
    );
  });

  it('round trip on the demo fixture is lossless (lifecycle, provenance, embeddings) and idempotent', async () => {
    const src = fresh();
    // Give the export a correction, a forgotten tombstone and a retracted belief too.
    const beliefs = await allBeliefs(src);
    await cli(
      src,
      'correct',
      '--user',
      USER,
      '--id',
      byStatement(beliefs, 'The user likes jazz music.').id,
      'The user likes blues.',
    );
    await cli(src, 'forget', '--user', USER, '--id', byStatement(beliefs, 'The user has a dog.').id);
    const file = join(dir, 'export.jsonl');
    const exp = await runBin(['--db', src, 'export', '--user', USER, '--output', file]);
    expect(exp.code).toBe(0);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const header = JSON.parse(lines[0]!);
    expect(header).toMatchObject({
      format: 'mem01-export',
      version: 1,
      scope: { userId: USER, namespace: null },
    });
    expect(header.beliefs).toBe(lines.length - 1);
    expect(header.embedding.dimensions).toBe(384);
    const piped = await runBin(['--db', src, 'export', '--user', USER]);
    expect(piped.stdout.split('\n').slice(1).join('\n')).toBe(lines.slice(1).join('\n') + '\n');

    const dst = join(dir, 'imported.db');
    const imp = await runBin(['--db', dst, 'import', file]);
    expect(imp.code).toBe(0);
    expect(imp.stderr).toBe(opened(dst)); // no progress bar off a terminal
    expect(imp.stdout).toMatch(new RegExp(`${header.beliefs} belief\\(s\\) added, 0 already present`));
    const before = await allBeliefs(src);
    expect(await allBeliefs(dst)).toEqual(before);
    const histSrc = await json<unknown>(src, 'history', '--user', USER);
    expect(await json<unknown>(dst, 'history', '--user', USER)).toEqual(
      // Audit records are not exported; the lifecycle and the evidence are.
      (histSrc as { belief: Belief; timeline: { type: string }[] }[]).map((e) => ({
        ...e,
        timeline: e.timeline.filter((t) => t.type !== 'audit'),
      })),
    );
    // The embeddings came along: vector scores are the same in both files.
    // The embeddings travel with the beliefs, bit for bit.
    const embeddings = async (db: string) => {
      const store = openSqliteStore({ path: db, logger: quiet });
      try {
        const ids = (await store.history({ userId: USER })).map((b) => b.id);
        return [...(await store.getEmbeddings({ userId: USER }, ids)).entries()]
          .map(([id, v]) => [id, Array.from(v)] as const)
          .sort(([x], [y]) => (x < y ? -1 : 1));
      } finally {
        await store.close();
      }
    };
    const dstStore = openSqliteStore({ path: dst, logger: quiet });
    expect((await dstStore.info()).dimensions).toBe(384);
    await dstStore.close();
    const [a, b] = [await embeddings(src), await embeddings(dst)];
    expect(b.length).toBeGreaterThan(0);
    expect(b).toEqual(a);

    const again = await cli(dst, 'import', file);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`0 belief\\(s\\) added, ${header.beliefs} already present`));
    expect(await allBeliefs(dst)).toEqual(before);
  });

  it('a malformed line: a clear error with its line number, and nothing imported', async () => {
    const src = fresh();
    const file = join(dir, 'good.jsonl');
    expect((await cli(src, 'export', '--user', USER, '--output', file)).code).toBe(0);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const broken = [...lines];
    broken[4] = broken[4]!.replace('"status":"', '"status":"zzz');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, `${broken.join('\n')}\n`);
    const dst = join(dir, 'never.db');
    const r = await runBin(['--db', dst, 'import', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error \[invalid_export\]: line 5: belief\.status: unknown status "zzz\w+"; nothing was imported\n$/,
    );
    expect((await cli(dst, 'users')).code).toBe(1); // the file was never created

    // The engine's import checks name the line too: a field it does not know, a belief of another user, an id twice.
    const cases: [string[], RegExp][] = [
      [
        lines.map((l, i) => (i === 3 ? l.replace('"status":', '"colour":"red","status":') : l)),
        /line 4: belief\.colour: is not a known field/,
      ],
      [
        lines.map((l, i) => (i === 2 ? l.replace(`"userId":"${USER}"`, '"userId":"someone-else"') : l)),
        /line 3: belief\.scope\.userId: "someone-else" is not the import's user/,
      ],
      [
        [lines[0]!, ...lines.slice(1, -1), lines[1]!],
        new RegExp(`line ${lines.length}: belief\\.id: repeats the id of record 0`),
      ],
    ];
    for (const [content, message] of cases) {
      writeFileSync(bad, `${content.join('\n')}\n`);
      const r0 = await runInProcess(['--db', dst, 'import', bad]);
      expect(r0.code).toBe(1);
      expect(r0.stderr).toMatch(message);
    }
    expect((await cli(dst, 'users')).code).toBe(1);

    // A later bad line (not JSON) after many good ones: still nothing half-imported.
    const half = [...lines];
    half[lines.length - 1] = '{"type":"belief","belief":';
    writeFileSync(bad, `${half.join('\n')}\n`);
    const dst2 = fresh();
    await runInProcess(['--db', dst2, 'erase', '--user', USER, '--yes']);
    const r2 = await cli(dst2, 'import', bad);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(new RegExp(`line ${lines.length}: not valid JSON`));
    expect(await allBeliefs(dst2)).toEqual([]);

    // A truncated file is detected by the header's count.
    writeFileSync(bad, `${lines.slice(0, -3).join('\n')}\n`);
    const r3 = await cli(dst2, 'import', bad);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/announces \d+ beliefs but the file has \d+/);
    expect(await allBeliefs(dst2)).toEqual([]);
  });

  it('escapes nothing away: a script-tag statement survives the round trip as text', async () => {
    const src = fresh();
    const file = join(dir, 'xss.jsonl');
    await cli(src, 'export', '--user', USER, '--output', file);
    const dst = join(dir, 'xss.db');
    await cli(dst, 'import', file);
    expect((await allBeliefs(dst)).some((b) => b.statement === XSS)).toBe(true);
  });
});

describe('on a terminal, and serving', () => {
  it('import shows a progress bar on a TTY', async () => {
    const src = fresh();
    const file = join(dir, 'tty.jsonl');
    await cli(src, 'export', '--user', USER, '--output', file);
    const dst = join(dir, 'tty.db');
    const r = await runInProcess(['--db', dst, 'import', file], { tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/checking \[.*\] \d+\/\d+ lines/);
    expect(r.stderr).toMatch(/writing {2}\[.*\] \d+\/\d+ beliefs/);
  });

  it('mem01 inspect (the real bin) prints a 127.0.0.1 URL with a token, and requires it', async () => {
    const db = fresh();
    const child = spawn(nodeBinary(), [BIN, '--db', db, 'inspect'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          out += c;
          const m = out.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/);
          if (m) resolve(m[0]);
        });
        child.once('exit', (code) => reject(new Error(`inspect exited with ${code}`)));
      });
      const u = new URL(url);
      expect((await fetch(`${u.origin}/`)).status).toBe(401);
      const ok = await fetch(url, { redirect: 'manual' });
      expect(ok.status).toBe(303);
      const cookie = ok.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
      const page = await fetch(`${u.origin}/user?u=${USER}`, { headers: { cookie: cookie.split(';')[0]! } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
      const html = await page.text();
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).not.toContain(XSS);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
    expect(child.exitCode).toBe(0);
  });
});

describe('the agent’s environment', () => {
  it('MEM01_* tuning sets the block recall renders; doctor shows the settings and models', async () => {
    const db = fresh();
    const env = { MEM01_BLOCK_BYTES: '300', MEM01_RECALL_LIMIT: '3', MEM01_PENDING_BELOW: '0.8' };
    const r = await runInProcess(['--db', db, '--json', 'recall', '--user', USER, 'where do I live?'], {
      env,
    });
    expect(r.code).toBe(0);
    const { block, results } = JSON.parse(r.stdout) as { block: { bytes: number }; results: unknown[] };
    expect(block.bytes).toBeLessThanOrEqual(300);
    expect(results.length).toBeLessThanOrEqual(3);
    const doctor = await runInProcess(['--db', db, '--json', 'doctor'], { env });
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      store: `sqlite ${db}`,
      extractor: 'local-rules',
      embedder: { name: 'local:mem01-local-hash-v1-384', dimensions: 384 },
      settings: { blockBytes: 300, budgetBytes: 300, recallLimit: 3, pendingBelow: 0.8 },
    });
    // recall --block-bytes sizes one block; --budget, its deprecated name, still does.
    for (const flag of ['--block-bytes', '--budget']) {
      const sized = await runInProcess([
        '--db',
        db,
        '--json',
        'recall',
        '--user',
        USER,
        'where do I live?',
        flag,
        '200',
      ]);
      expect(sized.code, flag).toBe(0);
      expect((JSON.parse(sized.stdout) as { block: { bytes: number } }).block.bytes).toBeLessThanOrEqual(200);
    }
    const both = await runInProcess([
      '--db',
      db,
      'recall',
      '--user',
      USER,
      'x',
      '--block-bytes',
      '200',
      '--budget',
      '300',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--block-bytes and --budget \(its deprecated name\) differ/);
    const bad = await runInProcess(['--db', db, 'users'], { env: { MEM01_RECALL_LIMIT: 'many' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('error [config]: MEM01_RECALL_LIMIT must be a positive integer, got "many"\n');
  });

  it('with OPENAI_API_KEY the embedder is OpenAI’s, as for the agent; --embedder local reads data embedded offline', async () => {
    const db = fresh();
    const env = {
      OPENAI_API_KEY: 'sk-test-not-a-real-key-0123456789',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    };
    const mismatch = await runInProcess(['--db', db, 'recall', '--user', USER, 'where do I live?'], { env });
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toMatch(
      /^error \[dimension_mismatch\]: sqlite .* holds 384-dimension embeddings but the openai:text-embedding-3-small embedder makes 1536/,
    );
    expect(mismatch.stderr).not.toContain('sk-test');
    const local = await runInProcess(
      ['--db', db, '--embedder', 'local', 'recall', '--user', USER, 'where do I live?'],
      {
        env,
      },
    );
    expect(local.code).toBe(0);
    expect(local.stdout).toMatch(/The user lives in Portland\./);
    expect(local.stderr).toMatch(
      /^mem01: sqlite .* \(extractor openai:\S+, embedder local:mem01-local-hash-v1-384\)\n$/,
    );
  });
});

describe('on PostgreSQL', () => {
  it('reads the same commands from a real Postgres and exports into SQLite losslessly', async () => {
    const url = TEST_PG_URL;
    // A schema of its own: other checkouts' runs share the server, and a fixed name would let one run's erase
    // delete what another run just seeded.
    const schema = uniquePgName('cli');
    const pgArgs = ['--db', url, '--pg-schema', schema];
    const store = await openPostgresStore({ connectionString: url, schema, dimensions: 384, logger: quiet });
    try {
      await seedStore(store);
    } finally {
      await store.close();
    }
    try {
      const users = await runInProcess([...pgArgs, '--json', 'users']);
      expect(users.code).toBe(0);
      expect(JSON.parse(users.stdout).map((u: { userId: string }) => u.userId)).toEqual([USER, 'other-user']);
      const recall = await runInProcess([
        ...pgArgs,
        'recall',
        '--user',
        USER,
        'where do I live?',
        '--explain',
      ]);
      expect(recall.stdout).toMatch(/1 +\d\.\d{3} .*The user lives in Portland\./);
      const file = join(dir, 'pg.jsonl');
      expect((await runInProcess([...pgArgs, 'export', '--user', USER, '--output', file])).code).toBe(0);
      const dst = join(dir, 'from-pg.db');
      expect((await cli(dst, 'import', file)).code).toBe(0);
      const pgBeliefs = JSON.parse(
        (await runInProcess([...pgArgs, '--json', 'beliefs', '--user', USER, '--status', 'all'])).stdout,
      );
      expect(await allBeliefs(dst)).toEqual(pgBeliefs);
      const doctor = await runInProcess([...pgArgs, 'doctor']);
      expect(doctor.stdout).toMatch(/lexical index\s+tsvector-gin/);
    } finally {
      const erase = await runInProcess([...pgArgs, 'erase', '--user', USER, '--yes']);
      expect(erase.code).toBe(0);
      await dropPgSchema(schema);
    }
  });
});

describe('read-only commands create nothing', () => {
  it('a mistyped --pg-schema is reported, and no schema is created', async () => {
    const url = TEST_PG_URL;
    const typo = `mem01_typo_${Date.now().toString(36)}`;
    for (const args of [
      ['users'],
      ['beliefs', '--user', USER],
      ['recall', '--user', USER, 'city'],
      ['doctor'],
    ]) {
      const r = await runInProcess(['--db', url, '--pg-schema', typo, ...args]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`no mem01 schema "${typo}"`));
    }
    const found = await withPgClient((c) =>
      c.query('select 1 from information_schema.schemata where schema_name = $1', [typo]),
    );
    expect(found.rowCount).toBe(0);
  });
});

describe('migrate, usage and errors', () => {
  it('migrate creates a file at the current schema and then reports it up to date', async () => {
    const db = join(dir, 'new.db');
    const r = await runBin(['--db', db, 'migrate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`created sqlite .*new\\.db at schema version ${V} \\(this mem01 supports ${V}\\)`),
    );
    expect(r.stdout).toMatch(/applied 1: /);
    const again = await cli(db, 'migrate');
    expect(again.stdout).toMatch(new RegExp(`schema version ${V}, already up to date`));
    expect(await json<unknown[]>(db, 'users')).toEqual([]);
  });

  it('exit codes: 2 for usage errors, 1 for runtime errors, with one-line messages', async () => {
    const db = fresh();
    const unknown = await cli(db, 'frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error \[usage\]: unknown command 'frobnicate'/);
    const noUser = await cli(db, 'beliefs');
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toMatch(/^error \[usage\]: required option '-u, --user <id>' not specified/);
    const badFlag = await cli(db, 'users', '--bogus');
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/^error \[usage\]: unknown option '--bogus'\n/);
    const notFound = await cli(db, 'forget', '--user', USER, '--id', 'no-such-belief');
    expect(notFound.code).toBe(1);
    expect(notFound.stderr.slice(opened(db).length)).toMatch(/^error \[not_found\]: .*\n$/);
    expect(notFound.stderr.startsWith(opened(db))).toBe(true);
    const otherUsers = byStatement(await allBeliefs(db), 'The user is a nurse.');
    const crossUser = await cli(db, 'forget', '--user', 'other-user', '--id', otherUsers.id);
    expect(crossUser.code).toBe(1);
    expect((await allBeliefs(db)).find((b) => b.id === otherUsers.id)?.status).toBe('active');
    const missingFile = await cli(join(dir, 'absent.db'), 'users');
    expect(missingFile.code).toBe(1);
    expect(missingFile.stderr).toMatch(/no mem01 database at .*absent\.db/);
    const help = await cli(db, '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: mem01/);
  });

  it('never prints a database password', async () => {
    const r = await runBin(['doctor'], {
      env: { DATABASE_URL: 'postgres://mem01:hunter2-secret@127.0.0.1:1/test?connect_timeout=2' },
    });
    expect(r.code).toBe(1);
    // Warnings while it retries briefly, then one error line.
    expect(r.stderr).toMatch(/^error \[store\]/m);
    expect(r.stdout + r.stderr).not.toContain('hunter2-secret');
  });
});
