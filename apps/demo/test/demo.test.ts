import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { quotingResponder, startFakeOpenAI } from '@mem01/openai/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { artifactText } from '../src/artifact.js';
import { loadFixture, REPO_ROOT } from '../src/fixture.js';
import { runScaling, type ScalingResult, scalingArtifact } from '../src/scaling.js';
import { runStory, type StoryStep } from '../src/story.js';

const run = promisify(execFile);
const BIN = join(REPO_ROOT, 'apps/demo/dist/bin.js');
const ARTIFACT = join(REPO_ROOT, 'apps/demo/artifacts/prepared-input-scaling.json');

/** The pnpm version the repository pins (`packageManager`), as the README's commands use it. */
function rootPnpmVersion(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { packageManager: string };
  return pkg.packageManager.split('@')[1]!;
}

/** Runs the built bin with a clean environment (no key, no database, MEM01_HOME in a temp folder). */
async function demo(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const home = mkdtempSync(join(tmpdir(), 'mem01-demo-home-'));
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      cwd: cwd ?? home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        MEM01_HOME: join(home, '.mem01'),
        NO_COLOR: '1',
        ...env,
      },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('prepared-input scaling (120 Runner runs)', () => {
  let result: ScalingResult;
  beforeAll(async () => {
    result = await runScaling(loadFixture());
  }, 120_000);

  it('gives the item counts the design implies', () => {
    const at = (strategy: string, k: number) =>
      result.results.find((r) => r.strategy === strategy)!.items[k - 1];
    expect(result.runs).toBe(120);
    expect([1, 10, 40].map((k) => at('fresh_stock', k))).toEqual([1, 1, 1]);
    expect([1, 10, 40].map((k) => at('reused_stock', k))).toEqual([1, 19, 79]);
    expect([1, 10, 40].map((k) => at('memsession', k))).toEqual([2, 2, 2]);
  });

  it('keeps the memory item within the 800-byte budget, and the input bounded', () => {
    const mem = result.results.find((r) => r.strategy === 'memsession')!;
    expect(mem.memoryBytes.every((b) => b > 0 && b <= 800)).toBe(true);
    const reused = result.results.find((r) => r.strategy === 'reused_stock')!;
    // The reused session grows with every conversation; memSession stays bounded by the budget.
    expect(reused.bytes[39]!).toBeGreaterThan(reused.bytes[0]! * 20);
    expect(Math.max(...mem.bytes)).toBeLessThan(mem.bytes[0]! + 800);
  });

  it('regenerates the checked-in artifact byte for byte', () => {
    const text = artifactText(scalingArtifact(result, 'fixtures/conversations.json'));
    expect(text).toBe(readFileSync(ARTIFACT, 'utf8'));
    const artifact = JSON.parse(text);
    expect(artifact.measurement).toBe('offline_prepared_model_input');
    expect(artifact.estimator).toBe('utf8_bytes_upper_bound');
    expect(artifact.model.kind).toBe('local fake');
    expect(artifact.runtime.kind).toBe('local fake');
    expect(artifact.billedTokens).toBeNull();
  });
});

describe('the lifecycle story', () => {
  let steps: StoryStep[];
  beforeAll(async () => {
    steps = await runStory();
  }, 60_000);

  it('recalls nothing before anything was said', () => {
    expect(steps[0]!.recalled).toEqual([]);
    expect(steps[0]!.recalledBlock).toContain('no relevant notes');
  });

  it('supersedes NYC with SF, keeping the history with storedAt', () => {
    const after2 = steps[1]!.beliefs;
    const nyc = after2.find((b) => b.attribute === 'home_city' && /NYC|New York/i.test(b.value))!;
    const sf = after2.find((b) => b.attribute === 'home_city' && /SF|San Francisco/i.test(b.value))!;
    expect(nyc.status).toBe('superseded');
    expect(nyc.supersededBy).toBe(sf.id);
    expect(sf.status).toBe('active');
    expect(sf.supersedes).toBe(nyc.id);
    expect(Date.parse(nyc.storedAt)).toBeLessThanOrEqual(Date.parse(sf.storedAt));
    expect(after2.find((b) => b.attribute === 'rent_amount')?.status).toBe('active');
  });

  it('recalls SF and the rent, not NYC, for "where do I live and what is my rent?"', () => {
    const block = steps[2]!.recalledBlock;
    expect(block).toMatch(/SF|San Francisco/);
    expect(block).toContain('2,400');
    expect(block).not.toMatch(/NYC|New York/);
  });

  it("recalls nothing for the sister's name", () => {
    expect(steps[3]!.recalled).toEqual([]);
  });
});

describe('the bin', () => {
  it('rejects bad flags with a clear error and a non-zero exit', async () => {
    const r = await demo(['--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--bogus'/);
    expect(r.stderr).toMatch(/--help/);
  });

  it('`pnpm -s demo --json | jq .` works: with --json, stdout carries only the JSON', async () => {
    // Exactly the newcomer's command, through the root script (which builds first) and a real pipe. jq when the
    // machine has it; otherwise Node parses and re-prints the document the same way.
    const pnpm = `npx -y pnpm@${rootPnpmVersion()}`;
    const jq = (await run('bash', ['-c', 'command -v jq']).then(
      () => true,
      () => false,
    ))
      ? 'jq -c .'
      : `node -e "process.stdout.write(JSON.stringify(JSON.parse(require('fs').readFileSync(0, 'utf8'))))"`;
    const home = mkdtempSync(join(tmpdir(), 'mem01-demo-pipe-'));
    const r = await run('bash', ['-o', 'pipefail', '-c', `${pnpm} -s demo --json | ${jq}`], {
      cwd: REPO_ROOT,
      env: {
        // HOME stays the caller's: npx and pnpm read their registry settings (proxy, CA file) from it.
        ...process.env,
        MEM01_HOME: join(home, '.mem01'),
        NO_COLOR: '1',
        OPENAI_API_KEY: '',
        DATABASE_URL: '',
      },
      maxBuffer: 64 * 1024 * 1024,
    });
    const doc = JSON.parse(r.stdout) as { scaling?: unknown; story?: unknown };
    expect(Object.keys(doc).sort()).toEqual(['scaling', 'story']);
  }, 240_000);

  it('--check without settings: offline, SQLite, no network', async () => {
    const r = await demo(['--check']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/OPENAI_API_KEY:\s+not set/);
    expect(r.stdout).toMatch(/@mem01\/local/);
    expect(r.stdout).toMatch(/summarizer @mem01\/engine \(offline, extractive\)/);
    expect(r.stdout).toMatch(/sqlite/);
  });

  it('--check with settings from .env: validates by form and shows no secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mem01-check-'));
    const key = 'sk-test-0123456789abcdefghijklmnopqrstuv';
    writeFileSync(
      join(dir, '.env'),
      `OPENAI_API_KEY=${key}\nDATABASE_URL=postgres://app:hunter2@db.internal:5432/mem\n`,
    );
    const r = await demo(['--check', '--json'], {}, dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.openai).toMatchObject({ set: true, valid: true });
    expect(out.database).toMatchObject({ set: true, valid: true });
    expect(out.wouldRun.store).toMatch(/postgres/);
    expect(out.wouldRun.summarizer).toMatch(/^@mem01\/openai \(.+\)$/);
    expect(out.runtime.summarizer).toMatch(/^openai:/);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain('hunter2');
    // A variable already set wins over .env.
    const r2 = await demo(['--check', '--json'], { DATABASE_URL: 'mysql://x' }, dir);
    expect(r2.code).toBe(1);
    expect(JSON.parse(r2.stdout).database).toMatchObject({ valid: false });
  });

  it('--check flags a malformed key', async () => {
    const r = await demo(['--check'], { OPENAI_API_KEY: 'not-a-key' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/INVALID/);
    expect(r.stdout).not.toContain('not-a-key');
  });

  it('--live needs a key', async () => {
    const r = await demo(['--live']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
  });

  it('--live runs the story against a local fake OpenAI server, secret-safe', async () => {
    // Extraction calls (a JSON-schema format) get grounded operations; the agent's own calls get plain text.
    const extract = quotingResponder();
    const fake = await startFakeOpenAI({
      responses: (request) => {
        const format = (request.body as { text?: { format?: { type?: string } } } | null)?.text?.format?.type;
        return format === 'json_schema' ? extract(request) : 'Noted.';
      },
    });
    const key = 'sk-test-live0123456789abcdefghijklmnop';
    try {
      const r = await demo(['--live'], {
        OPENAI_API_KEY: key,
        OPENAI_BASE_URL: fake.url,
        MEM01_EMBEDDING_MODEL: 'text-embedding-3-small',
        MEM01_LLM_MODEL: 'gpt-test-extraction',
      });
      expect(r.stderr).not.toContain(key);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.mode).toBe('live');
      // Memory is what @mem01/runtime opens from this environment: its SQLite file (beside MEM01_HOME's default)
      // and its extraction model, which the agent uses too unless --model names another.
      expect(out.model).toBe('gpt-test-extraction');
      expect(out.store).toMatch(/^sqlite \(.*demo-live-1536d\.db\)$/);
      expect(out.steps).toHaveLength(4);
      expect(out.note).toMatch(/model observations/);
      expect(out.steps[0].modelObservation).toBe('Noted.');
      // The lifecycle observed in the store: the first turn became an active belief, with its storedAt.
      expect(out.steps[0].beliefs.length).toBeGreaterThan(0);
      expect(out.steps[0].beliefs[0]).toMatchObject({ status: 'active' });
      expect(out.steps[0].beliefs[0].storedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(out.steps[3].recalledBlock).toContain('mem01-memory');
      expect(r.stdout).not.toContain(key);
      expect(fake.requests.some((q: { path: string }) => q.path.includes('/responses'))).toBe(true);
      const bodies = fake.requests.map(
        (q: { body: unknown }) => (q.body as { model?: string } | null)?.model,
      );
      expect(bodies).toContain('gpt-test-extraction');
      const chosen = await demo(['--live', '--model', 'gpt-agent-x'], {
        OPENAI_API_KEY: key,
        OPENAI_BASE_URL: fake.url,
      });
      expect(chosen.code, chosen.stderr).toBe(0);
      expect(JSON.parse(chosen.stdout).model).toBe('gpt-agent-x');
      expect(
        fake.requests.map((q: { body: unknown }) => (q.body as { model?: string } | null)?.model),
      ).toContain('gpt-agent-x');
    } finally {
      await fake.close();
    }
  }, 60_000);
});
