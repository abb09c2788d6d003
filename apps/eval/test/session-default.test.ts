/**
 * The headline is memSession's default: the row marked `"sessionDefault": true` runs on exactly the engine settings
 * and models a `memSession` with no options opens, and no row run with an override carries the mark.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore } from '@mem01/store-memory';
import { memSession } from 'mem01session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs, runCli } from '../src/cli.js';
import { isSessionDefault, providerEnv, runtimeOptions, type Variant } from '../src/systems.js';
import { syntheticLocomo } from './synthetic.js';

let dir: string;
let data: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-eval-default-'));
  data = join(dir, 'synthetic.json');
  await writeFile(data, JSON.stringify(syntheticLocomo()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** What a `memSession` with no options runs on (its store aside), as the session itself reports it. */
async function memSessionDefault() {
  const store = createMemoryStore();
  const session = memSession('probe', { userId: 'probe', store, env: {} });
  try {
    const runtime = await session.runtime();
    return {
      config: runtime.engine.config,
      extractor: runtime.description.extractor,
      embedder: runtime.description.embedder,
      budgetBytes: runtime.blockBytes,
    };
  } finally {
    await session.close();
    await store.close();
  }
}

const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(parseArgs(['--data', data, '--k', '3', '--json', join(dir, 'out.json'), '--no-progress', ...args]), {
    env,
    out: () => undefined,
    err: () => undefined,
  });

describe('the sessionDefault mark', () => {
  it('the headline is opened with the store and the model-selecting environment, nothing else', () => {
    const store = createMemoryStore();
    const env = providerEnv({}, 'local');
    const headline: Variant = { episodic: true, clock: 'wall' };
    expect(isSessionDefault(headline)).toBe(true);
    expect(runtimeOptions(headline, store, env)).toStrictEqual({ store, env: {} });
    expect(runtimeOptions({ episodic: false, clock: 'wall' }, store, env)).toStrictEqual({
      store,
      env: {},
      episodic: false,
    });
  });

  it('marks the row that runs exactly what memSession runs by default, puts it first, and only that row', async () => {
    const { report, markdownPath } = await run(['--episodic', 'both']);
    expect(report.results.map((r) => [r.label, r.sessionDefault])).toEqual([
      ['memSession default (beliefs + episodes)', true],
      ['beliefs only (episodic: false)', false],
    ]);
    const [head, beliefs] = report.results;
    const expected = await memSessionDefault();
    // Everything the engine was built with, defaults resolved: any override would show here.
    expect(head?.system.config).toStrictEqual(expected.config);
    expect(head?.system).toMatchObject({
      extractor: expected.extractor,
      embedder: expected.embedder,
      budgetBytes: expected.budgetBytes,
    });
    expect(head?.episodic).toBe(true);
    // Beliefs only is memSession's opt-out and differs in nothing else.
    expect(beliefs?.system.config).toStrictEqual({ ...expected.config, episodic: false });
    const md = await readFile(markdownPath ?? '', 'utf8');
    const rows = md.split('\n').filter((l) => /^\| .* \| 3 \|/.test(l));
    expect(rows[0]).toMatch(/^\| BM25, turn \+ date \(this file\) \| 3 \|/);
    expect(rows[1]).toMatch(/^\| \*\*memSession default \(beliefs \+ episodes\)\*\* \| 3 \|/);
    expect(rows[2]).toMatch(/^\| beliefs only \(episodic: false\) \| 3 \|/);
    const json = JSON.parse(await readFile(join(dir, 'out.json'), 'utf8')) as typeof report;
    expect(json.results.map((r) => r.sessionDefault)).toEqual([true, false]);
  });

  it('MEM01_* tuning in the caller’s environment does not reach the headline, and the report says so', async () => {
    const { report } = await run(['--episodic', 'on'], { MEM01_RECALL_LIMIT: '3', MEM01_EPISODIC: 'off' });
    expect(report.info.ignoredEnv).toEqual(['MEM01_RECALL_LIMIT', 'MEM01_EPISODIC']);
    expect(report.results[0]?.sessionDefault).toBe(true);
    expect(report.results[0]?.system.config).toStrictEqual((await memSessionDefault()).config);
  });

  it.each([
    ['--engine-config', ['--engine-config', '{"recallLimit":5}']],
    ['--clock session', ['--clock', 'session']],
    ['--collapse-covered', ['--collapse-covered']],
    ['--episodic off', ['--episodic', 'off']],
  ])('no row is marked with %s', async (_name, args) => {
    const { report } = await run(args.includes('--episodic') ? args : ['--episodic', 'on', ...args]);
    expect(report.results.length).toBe(1);
    expect(report.results.some((r) => r.sessionDefault)).toBe(false);
  });
});
