/**
 * `--json -`: the JSON report on stdout and nothing else there, so `pnpm -s eval:locomo --json - | jq .` works.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs, runCli } from '../src/cli.js';
import { REPO_ROOT } from '../src/paths.js';
import type { LocomoReport } from '../src/report.js';
import { checkReport } from './check-report.js';
import { syntheticLocomo } from './synthetic.js';

const exec = promisify(execFile);
let dir: string;
let data: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-eval-stdout-'));
  data = join(dir, 'synthetic.json');
  await writeFile(data, JSON.stringify(syntheticLocomo()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pnpm version the repository pins (`packageManager`), as the README's commands use it. */
async function rootPnpmVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    packageManager: string;
  };
  return pkg.packageManager.split('@')[1] ?? '';
}

describe('--json -', () => {
  it('writes the report to stdout and every other line to stderr, and no file', async () => {
    const stdout: string[] = [];
    const outLines: string[] = [];
    const errLines: string[] = [];
    const { report, jsonPath, markdownPath } = await runCli(
      parseArgs(['--data', data, '--k', '3', '--episodic', 'on', '--json', '-', '--no-progress']),
      {
        env: { MEM01_BUDGET_BYTES: '400' },
        out: (l) => outLines.push(l),
        err: (l) => errLines.push(l),
        writeStdout: (t) => stdout.push(t),
      },
    );
    expect(outLines).toEqual([]);
    expect(stdout).toHaveLength(1);
    expect(JSON.parse(stdout.join(''))).toEqual(JSON.parse(JSON.stringify(report)));
    checkReport(report, { ks: [3], conversations: 2 });
    expect([jsonPath, markdownPath]).toEqual(['-', null]);
    expect(errLines.join('\n')).toMatch(/MEM01_BUDGET_BYTES is set but not passed/);
    expect(errLines.join('\n')).toMatch(/recall@10|block recall|vs BM25/);
    expect(await readdir(dir)).toEqual(['synthetic.json']);
  });

  it('`pnpm -s eval:locomo --json - | jq .` works through the root script and a real pipe', async () => {
    const pnpm = `npx -y pnpm@${await rootPnpmVersion()}`;
    const jq = (await exec('bash', ['-c', 'command -v jq']).then(
      () => true,
      () => false,
    ))
      ? 'jq -c .'
      : `node -e "process.stdout.write(JSON.stringify(JSON.parse(require('fs').readFileSync(0, 'utf8'))))"`;
    const r = await exec(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `${pnpm} -s eval:locomo --data '${data}' --k 3 --json - --no-progress | ${jq}`,
      ],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, OPENAI_API_KEY: '', DATABASE_URL: '', NO_COLOR: '1' },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const doc = JSON.parse(r.stdout) as LocomoReport;
    expect(doc.kind).toBe('locomo');
    expect(doc.results.map((x) => x.sessionDefault)).toEqual([true, false]);
    expect(r.stderr).toMatch(/memSession default/);
  }, 300_000);
});

describe('where a report goes without --json', () => {
  it('into the untracked bench/results/local, and into the committed bench/results only with --update-results', async () => {
    const { defaultJsonPath, LOCAL_RESULTS_DIR, RESULTS_DIR } = await import('../src/cli.js');
    expect(parseArgs(['--no-progress']).updateResults).toBe(false);
    expect(parseArgs(['--update-results']).updateResults).toBe(true);
    expect(defaultJsonPath('locomo-memory')).toBe(join(LOCAL_RESULTS_DIR, 'locomo-memory.json'));
    expect(defaultJsonPath('locomo-memory', true)).toBe(join(RESULTS_DIR, 'locomo-memory.json'));
    // git ignores the local folder, so a run leaves the clone clean.
    const { stdout } = await exec('git', ['check-ignore', join(LOCAL_RESULTS_DIR, 'locomo-memory.json')], {
      cwd: REPO_ROOT,
    });
    expect(stdout.trim()).toBe(join(LOCAL_RESULTS_DIR, 'locomo-memory.json'));
    // `pnpm bench` updates the committed reports.
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'apps/eval/package.json'), 'utf8')) as {
      scripts: { bench: string };
    };
    const runs = pkg.scripts.bench.split('&&').filter((c) => c.includes('dist/bin.js'));
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) expect(run).toContain('--update-results');
  });
});
