/**
 * The runtime as entry points open it: from options and an environment, on real SQLite files and the machine's
 * PostgreSQL (a schema of its own, dropped afterwards). The full runtime (agents, the MCP server) and the admin
 * facade (the CLI, the inspector) resolve the same database, models and settings from the same environment.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, NotFoundError } from '@mem01/engine';
import { type FakeOpenAI, isSummaryRequest, startFakeOpenAI, summaryData } from '@mem01/openai/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { dropPgSchema, quiet, TEST_PG_URL, type TempDir, tempDir, uniquePgName } from '@mem01/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkEnvironment,
  closeSharedRuntimes,
  defaultSqlitePath,
  describeRuntime,
  ENVIRONMENT_VARIABLES,
  openMemoryAdmin,
  openMemoryRuntime,
  pickEnvironment,
  planRuntime,
  resolveRuntime,
  serverSettings,
  sharedRuntimeCount,
  tuningFromEnv,
} from '../src/index.js';

const dirs: TempDir[] = [];
function tempHome(): string {
  const dir = tempDir('mem01-runtime-');
  dirs.push(dir);
  return dir.path;
}
const PG_BASE = TEST_PG_URL;
const SCHEMA = uniquePgName('runtime');
afterAll(async () => {
  await closeSharedRuntimes();
  for (const d of dirs) d.remove();
  await dropPgSchema(SCHEMA);
});

const TUNING = {
  MEM01_BLOCK_BYTES: '640',
  MEM01_RECALL_LIMIT: '5',
  MEM01_PENDING_BELOW: '0.7',
  MEM01_EPISODIC: 'off',
};

describe('openMemoryRuntime', () => {
  it('no DATABASE_URL, no key: the SQLite file in MEM01_HOME, the offline models, the MEM01_* tuning', async () => {
    const home = tempHome();
    const runtime = await openMemoryRuntime({ env: { MEM01_HOME: home, ...TUNING }, logger: quiet });
    try {
      expect(runtime.description).toEqual({
        store: 'sqlite',
        location: `sqlite ${join(home, 'memory.db')}`,
        extractor: 'local-rules',
        summarizer: 'extractive',
        embedder: 'local:mem01-local-hash-v1-384',
        dimensions: 384,
        strict: false,
        blockBytes: 640,
        budgetBytes: 640,
      });
      expect(runtime.blockBytes).toBe(640);
      expect(runtime.engine.config).toMatchObject({
        blockBytes: 640,
        recallLimit: 5,
        pendingBelow: 0.7,
        episodic: false,
      });
      expect(describeRuntime(runtime.description)).toBe(
        `sqlite ${join(home, 'memory.db')} (extractor local-rules, embedder local:mem01-local-hash-v1-384)`,
      );
      expect(existsSync(join(home, 'memory.db'))).toBe(true);
    } finally {
      await runtime.close();
    }
  });

  it('db opens that SQLite file instead of the environment’s', async () => {
    const home = tempHome();
    const file = join(tempHome(), 'chosen.db');
    const runtime = await openMemoryRuntime({ db: file, env: { MEM01_HOME: home }, logger: quiet });
    await runtime.close();
    expect(runtime.description.location).toBe(`sqlite ${file}`);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(home, 'memory.db'))).toBe(false);
  });

  it('OPENAI_API_KEY: the OpenAI models, named with the models the MEM01_* variables choose', async () => {
    const env = {
      MEM01_HOME: tempHome(),
      OPENAI_API_KEY: 'sk-test-not-a-real-key-0123456789',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      MEM01_LLM_MODEL: 'gpt-test-model',
      MEM01_EMBEDDING_MODEL: 'text-embedding-3-large',
    };
    const runtime = await openMemoryRuntime({ env, resume: false, logger: quiet });
    try {
      expect(runtime.description).toMatchObject({
        extractor: 'openai:gpt-test-model',
        summarizer: 'openai:gpt-test-model',
        embedder: 'openai:text-embedding-3-large',
        dimensions: 3072,
      });
      expect(JSON.stringify(runtime.description)).not.toContain('sk-test');
    } finally {
      await runtime.close();
    }
    // `embedder: 'local'` keeps the offline embedder whatever the environment.
    const local = await openMemoryRuntime({
      env,
      embedder: 'local',
      resume: false,
      logger: quiet,
      db: join(tempHome(), 'l.db'),
    });
    await local.close();
    expect(local.description).toMatchObject({ extractor: 'openai:gpt-test-model', dimensions: 384 });
  });

  it('DATABASE_URL: Postgres, described without the password', async () => {
    const u = new URL(PG_BASE);
    u.password = 'not-a-real-password-42';
    const runtime = await openMemoryRuntime({
      env: { DATABASE_URL: u.toString() },
      pgSchema: SCHEMA,
      resume: false,
      logger: quiet,
    });
    try {
      expect(runtime.description.store).toBe('postgres');
      expect(runtime.description.location).toContain(`(schema ${SCHEMA})`);
      expect(runtime.description.location).not.toContain('not-a-real-password-42');
      expect((await runtime.store.info()).dimensions).toBe(384);
    } finally {
      await runtime.close();
    }
  });

  it('refuses contradictory or malformed settings before opening anything', () => {
    const store = createMemoryStore();
    expect(() => resolveRuntime({ store, db: '/tmp/x.db' })).toThrow(
      'store is given, so db must not be: they choose a database to open',
    );
    expect(() => resolveRuntime({ env: { DATABASE_URL: 'mysql://h/d' } })).toThrow(ConfigError);
    expect(() => resolveRuntime({ env: { MEM01_BLOCK_BYTES: 'lots' } })).toThrow(
      'MEM01_BLOCK_BYTES must be a positive integer, got "lots"',
    );
    expect(() => resolveRuntime({ env: {}, embedder: 'openai' })).toThrow(
      'embedder "openai" needs OPENAI_API_KEY',
    );
    expect(() => resolveRuntime({ env: {}, embedder: 'remote' as 'local' })).toThrow(ConfigError);
  });

  it('blockBytes sizes the block (MEM01_BLOCK_BYTES); budgetBytes and MEM01_BUDGET_BYTES, the deprecated names, still do', () => {
    expect(tuningFromEnv({ MEM01_BLOCK_BYTES: '640' })).toEqual({ blockBytes: 640 });
    expect(tuningFromEnv({ MEM01_BUDGET_BYTES: '600' })).toEqual({ blockBytes: 600 });
    expect(() => tuningFromEnv({ MEM01_BLOCK_BYTES: '640', MEM01_BUDGET_BYTES: '600' })).toThrow(
      'MEM01_BLOCK_BYTES and MEM01_BUDGET_BYTES (its deprecated name) are both set, to different values',
    );
    expect(() => tuningFromEnv({ MEM01_BUDGET_BYTES: 'lots' })).toThrow(
      'MEM01_BUDGET_BYTES must be a positive integer, got "lots"',
    );
    const env = { MEM01_HOME: '/tmp/mem01-block-bytes' };
    expect(() => resolveRuntime({ env, blockBytes: 500, budgetBytes: 600 })).toThrow(
      'blockBytes and budgetBytes (its deprecated name) differ: set blockBytes only',
    );
    expect(() => resolveRuntime({ env, engine: { blockBytes: 500, budgetBytes: 600 } })).toThrow(
      'engine.blockBytes and engine.budgetBytes (its deprecated name) differ',
    );
  });

  it('the block size under either name, from options or the environment (the option wins)', async () => {
    const cases: Array<[Parameters<typeof openMemoryRuntime>[0], number]> = [
      [{ blockBytes: 500 }, 500],
      [{ budgetBytes: 500 }, 500],
      [{ engine: { budgetBytes: 450 } }, 450],
      [{ env: { MEM01_BUDGET_BYTES: '700' } }, 700],
      [{ env: { MEM01_BLOCK_BYTES: '700' }, budgetBytes: 500 }, 500],
    ];
    for (const [options, expected] of cases) {
      const runtime = await openMemoryRuntime({
        env: {},
        ...options,
        store: createMemoryStore(),
        resume: false,
        logger: quiet,
      });
      try {
        expect(runtime.blockBytes).toBe(expected);
        expect(runtime.budgetBytes).toBe(expected);
        expect(runtime.engine.config.blockBytes).toBe(expected);
        expect(runtime.description.blockBytes).toBe(expected);
      } finally {
        await runtime.close();
      }
    }
  });

  it('MEM01_PENDING_BELOW sets pendingBelow; MEM01_MIN_CONFIDENCE, its deprecated name, still does', () => {
    expect(tuningFromEnv({ MEM01_PENDING_BELOW: '0.7' })).toEqual({ pendingBelow: 0.7 });
    expect(tuningFromEnv({ MEM01_MIN_CONFIDENCE: '0.6' })).toEqual({ pendingBelow: 0.6 });
    expect(tuningFromEnv({ MEM01_PENDING_BELOW: '0.7', MEM01_MIN_CONFIDENCE: '0.7' })).toEqual({
      pendingBelow: 0.7,
    });
    expect(() => tuningFromEnv({ MEM01_PENDING_BELOW: '0.7', MEM01_MIN_CONFIDENCE: '0.6' })).toThrow(
      'MEM01_PENDING_BELOW and MEM01_MIN_CONFIDENCE (its deprecated name) are both set, to different values',
    );
    expect(() => tuningFromEnv({ MEM01_PENDING_BELOW: 'high' })).toThrow(
      'MEM01_PENDING_BELOW must be a number from 0 to 1, got "high"',
    );
    expect(() => tuningFromEnv({ MEM01_MIN_CONFIDENCE: '2' })).toThrow(
      'MEM01_MIN_CONFIDENCE must be a number from 0 to 1, got "2"',
    );
  });

  it('runtimes of different keys or models are not shared; the key never enters the fingerprint', () => {
    const base = { MEM01_HOME: '/tmp/mem01-shared', OPENAI_API_KEY: 'sk-test-one-0123456789' };
    const a = resolveRuntime({ env: base });
    expect(resolveRuntime({ env: { ...base } }).key).toBe(a.key);
    expect(resolveRuntime({ env: { ...base, OPENAI_API_KEY: 'sk-test-two-0123456789' } }).key).not.toBe(
      a.key,
    );
    expect(resolveRuntime({ env: { ...base, MEM01_LLM_MODEL: 'gpt-other' } }).key).not.toBe(a.key);
    expect(a.key).not.toContain('sk-test');
    expect(sharedRuntimeCount()).toBe(0);
  });
});

describe('openMemoryAdmin: what an operator opens is what the agent’s runtime opens', () => {
  it('the same database, models (named, not loaded, for the extractor) and settings', async () => {
    const home = tempHome();
    const env = { MEM01_HOME: home, ...TUNING };
    const runtime = await openMemoryRuntime({ env, logger: quiet });
    await runtime.close();
    const admin = await openMemoryAdmin({ env, engine: { accessCounts: false } });
    try {
      expect(admin.description).toEqual(runtime.description);
      expect(admin.target).toEqual({ kind: 'sqlite', path: join(home, 'memory.db') });
      const { accessCounts: _a, ...adminConfig } = admin.admin.config;
      const { accessCounts: _b, ...agentConfig } = runtime.engine.config;
      expect(adminConfig).toEqual(agentConfig);
      expect(admin.admin.config.accessCounts).toBe(false);
    } finally {
      await admin.close();
    }
  });

  it('a missing SQLite file is a NotFoundError, and nothing is created', async () => {
    const home = tempHome();
    const err = await openMemoryAdmin({ env: { MEM01_HOME: home } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(existsSync(join(home, 'memory.db'))).toBe(false);
  });
});

describe('the environment, read here only', () => {
  it('the default SQLite file: $MEM01_HOME/memory.db, else ~/.mem01/memory.db', () => {
    expect(defaultSqlitePath({})).toBe(join(homedir(), '.mem01', 'memory.db'));
    expect(defaultSqlitePath({ MEM01_HOME: '/srv/m' })).toBe('/srv/m/memory.db');
    expect(defaultSqlitePath({ MEM01_HOME: ' ' })).toBe(join(homedir(), '.mem01', 'memory.db'));
  });

  it('planRuntime names what openMemoryRuntime opens, and opens nothing', async () => {
    const home = join(tempHome(), 'not-created');
    const env = { MEM01_HOME: home, ...TUNING };
    const plan = await planRuntime({ env });
    expect(existsSync(home)).toBe(false);
    const runtime = await openMemoryRuntime({ env, logger: quiet, resume: false });
    await runtime.close();
    const { provider, llmModel, target, ...description } = plan;
    expect(description).toEqual(runtime.description);
    expect({ provider, llmModel, target }).toEqual({
      provider: 'local',
      llmModel: null,
      target: { kind: 'sqlite', path: join(home, 'memory.db') },
    });
    const openai = await planRuntime({
      env: { OPENAI_API_KEY: 'sk-test-plan-0123456789abcdef', MEM01_LLM_MODEL: 'gpt-plan' },
      db: join(home, 'x.db'),
    });
    expect(openai).toMatchObject({
      provider: 'openai',
      llmModel: 'gpt-plan',
      extractor: 'openai:gpt-plan',
      summarizer: 'openai:gpt-plan',
      dimensions: 1536,
    });
    // An extractor passed in: the engine's own summarizer, whatever the key.
    const given = await planRuntime({
      env: { OPENAI_API_KEY: 'sk-test-plan-0123456789abcdef' },
      extractor: { name: 'mine', extract: async () => ({ operations: [] }) },
      db: join(home, 'y.db'),
    });
    expect(given).toMatchObject({ provider: 'given', extractor: 'mine', summarizer: 'extractive' });
    expect(JSON.stringify(openai)).not.toContain('sk-test');
    await expect(planRuntime({ env: { DATABASE_URL: 'mysql://x' } })).rejects.toThrow(ConfigError);
  });

  it('checkEnvironment checks the key and the URL by their form, masked, and says what would run', async () => {
    const fine = await checkEnvironment({
      OPENAI_API_KEY: 'sk-test-0123456789abcdefghijkl',
      DATABASE_URL: 'postgres://app:hunter2@db.internal:5432/mem',
    });
    expect(fine.ok).toBe(true);
    expect(fine.variables.OPENAI_API_KEY).toEqual({ set: true, valid: true, shown: 'sk-…ijkl' });
    expect(fine.variables.DATABASE_URL).toMatchObject({ set: true, valid: true });
    expect(fine.plan).toMatchObject({
      store: 'postgres',
      provider: 'openai',
      extractor: 'openai:gpt-5.6-sol',
      summarizer: 'openai:gpt-5.6-sol',
    });
    expect((await checkEnvironment({})).plan).toMatchObject({
      extractor: 'local-rules',
      summarizer: 'extractive',
    });
    expect(JSON.stringify(fine)).not.toMatch(/hunter2|0123456789abcdef/);
    const bad = await checkEnvironment({ OPENAI_API_KEY: 'not a key', DATABASE_URL: 'mysql://x' });
    expect(bad.ok).toBe(false);
    expect(bad.variables.OPENAI_API_KEY).toMatchObject({ valid: false, problem: 'contains whitespace' });
    expect(bad.variables.DATABASE_URL).toMatchObject({ valid: false });
    expect(bad.plan).toBeNull();
    expect(bad.problem).toMatch(/DATABASE_URL must be a postgres/);
    expect(JSON.stringify(bad)).not.toContain('not a key');
  });

  it('pickEnvironment keeps the set variables of the groups asked; serverSettings reads the MCP server’s', () => {
    const env = {
      OPENAI_API_KEY: 'sk-x',
      MEM01_LLM_MODEL: '',
      DATABASE_URL: 'postgres://h/db',
      MEM01_RECALL_LIMIT: '3',
      MEM01_USER_ID: ' ana ',
      UNRELATED: 'x',
    };
    expect(pickEnvironment(env, ['providers'])).toEqual({ OPENAI_API_KEY: 'sk-x' });
    expect(pickEnvironment(env, ['tuning', 'store'])).toEqual({
      MEM01_RECALL_LIMIT: '3',
      DATABASE_URL: 'postgres://h/db',
    });
    expect(serverSettings(env)).toEqual({ userId: 'ana', token: undefined, tokenFile: undefined });
    // Every variable the tuning reads is in the list (a new one must be added there too).
    for (const name of Object.keys(TUNING)) expect(ENVIRONMENT_VARIABLES.tuning).toContain(name);
  });

  it('the OpenAI models use the base URL and key of the environment given, not the process’s', async () => {
    const fake: FakeOpenAI = await startFakeOpenAI();
    const before = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = 'sk-process-key-should-not-be-used-0000';
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
    try {
      const runtime = await openMemoryRuntime({
        env: { OPENAI_API_KEY: 'sk-test-given-0123456789', OPENAI_BASE_URL: fake.url },
        db: join(tempHome(), 'given.db'),
        resume: false,
        logger: quiet,
      });
      try {
        await runtime.engine.remember(
          { userId: 'env-user' },
          { kind: 'fact', attribute: 'home_city', value: 'Lisbon', statement: 'The user lives in Lisbon.' },
        );
      } finally {
        await runtime.close();
      }
      expect(fake.requests.map((r) => r.path)).toContain('/v1/embeddings');
    } finally {
      for (const [name, value] of [
        ['OPENAI_API_KEY', before.key],
        ['OPENAI_BASE_URL', before.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await fake.close();
    }
  });
});

describe('conversation summaries: the summarizer goes with the extractor', () => {
  const SCOPE = { userId: 'sum-user' };
  const turns = (sessionId: string) =>
    (
      [
        ['I moved to Lisbon last month and I work as a nurse there.', 'user'],
        ['Lisbon is lovely!', 'assistant'],
        ['My sister Ana visits next week for the Sintra hike.', 'user'],
      ] as const
    ).map(([text, role], position) => ({
      scope: SCOPE,
      sessionId,
      position,
      role,
      text,
      at: `2026-02-01T10:0${position}:00.000Z`,
    }));

  it('OPENAI_API_KEY: the OpenAI summarizer, on the environment’s key, base URL and model (agent and admin alike)', async () => {
    const fake: FakeOpenAI = await startFakeOpenAI({
      responses: (req) => {
        if (!isSummaryRequest(req)) return { ops: [] };
        const user = summaryData(req).turns.filter((t) => t.role === 'user');
        return { summary: 'On 2026-02-01, the user said they moved to Lisbon.', turns: [user[0]!.n] };
      },
    });
    const env = {
      MEM01_HOME: tempHome(),
      OPENAI_API_KEY: 'sk-test-summaries-0123456789',
      OPENAI_BASE_URL: fake.url,
      MEM01_LLM_MODEL: 'gpt-sum',
    };
    try {
      const runtime = await openMemoryRuntime({ env, embedder: 'local', resume: false, logger: quiet });
      try {
        expect(runtime.description).toMatchObject({
          extractor: 'openai:gpt-sum',
          summarizer: 'openai:gpt-sum',
        });
        await runtime.engine.accept(turns('s1'));
        await runtime.engine.flush(SCOPE);
        const summary = await runtime.engine.summarize(SCOPE, 's1');
        expect(summary).toMatchObject({
          kind: 'summary',
          statement: 'On 2026-02-01, the user said they moved to Lisbon.',
        });
        expect(summary!.evidence.map((e) => [e.position, e.quote])).toEqual([
          [0, 'I moved to Lisbon last month and I work as a nurse there.'],
        ]);
      } finally {
        await runtime.close();
      }
      const summaryRequests = fake.requestsFor('responses').filter(isSummaryRequest);
      expect(summaryRequests).toHaveLength(1);
      expect(summaryRequests[0]!.body).toMatchObject({ model: 'gpt-sum' });
      expect(summaryRequests[0]!.authorized).toBe(true);
      expect((await planRuntime({ env, embedder: 'local' })).summarizer).toBe('openai:gpt-sum');

      // The operator's facade writes the summary with the agent's summarizer.
      const admin = await openMemoryAdmin({ env, embedder: 'local' });
      try {
        expect(admin.description.summarizer).toBe('openai:gpt-sum');
        await admin.admin.summarize(SCOPE, 's1');
      } finally {
        await admin.close();
      }
      expect(fake.requestsFor('responses').filter(isSummaryRequest)).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });

  it('no key, or an extractor passed in: the engine’s offline extractive summarizer, and no request', async () => {
    const fake: FakeOpenAI = await startFakeOpenAI();
    try {
      const offline = await openMemoryRuntime({
        env: {},
        store: createMemoryStore(),
        resume: false,
        logger: quiet,
      });
      try {
        expect(offline.description.summarizer).toBe('extractive');
        await offline.engine.accept(turns('s2'));
        await offline.engine.flush(SCOPE);
        const summary = await offline.engine.summarize(SCOPE, 's2');
        expect(summary?.statement).toContain('Lisbon');
      } finally {
        await offline.close();
      }
      const given = await openMemoryRuntime({
        env: { OPENAI_API_KEY: 'sk-test-given-extractor-0123456789', OPENAI_BASE_URL: fake.url },
        store: createMemoryStore(),
        extractor: { name: 'mine', extract: async () => ({ operations: [] }) },
        embedder: 'local',
        resume: false,
        logger: quiet,
      });
      try {
        expect(given.description).toMatchObject({ extractor: 'mine', summarizer: 'extractive' });
        await given.engine.accept(turns('s3'));
        await given.engine.flush(SCOPE);
        expect((await given.engine.summarize(SCOPE, 's3'))?.statement).toContain('Lisbon');
      } finally {
        await given.close();
      }
      expect(fake.requests).toHaveLength(0);
    } finally {
      await fake.close();
    }
  });
});
