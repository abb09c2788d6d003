import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { InvalidInputError } from '@mem01/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadData, parseArgs, reportName, runCli } from '../src/cli.js';
import { parseLocomo } from '../src/locomo-data.js';
import { syntheticLocomo, syntheticLongMemEval } from './synthetic.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-eval-lme-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const quiet = { env: {}, out: () => undefined, err: () => undefined };

describe('--data with a gzip-compressed LongMemEval-shaped file', () => {
  it('reads .json.gz as it reads .json, the sha256 taken of the bytes as stored', async () => {
    const json = Buffer.from(JSON.stringify(syntheticLongMemEval()));
    await writeFile(join(dir, 'lme.json'), json);
    await writeFile(join(dir, 'lme.json.gz'), gzipSync(json));
    const plain = await loadData(join(dir, 'lme.json'));
    const packed = await loadData(join(dir, 'lme.json.gz'));
    expect(packed.data).toEqual(plain.data);
    expect(packed.sha256).not.toBe(plain.sha256);
    expect(reportName(packed.data, packed.sha256, 'sqlite')).toBe('longmemeval-sqlite');
    expect(reportName(parseLocomo(syntheticLocomo()), 'x', 'memory')).toBe('locomo-memory');
  });

  it('names what is wrong with a file that is not gzip, not valid gzip, or not JSON once unpacked', async () => {
    await writeFile(join(dir, 'plain.json.gz'), JSON.stringify(syntheticLongMemEval()));
    await expect(loadData(join(dir, 'plain.json.gz'))).rejects.toThrow(/is not gzip-compressed/);
    const cut = gzipSync(Buffer.from(JSON.stringify(syntheticLongMemEval()))).subarray(0, 40);
    await writeFile(join(dir, 'cut.json.gz'), cut);
    await expect(loadData(join(dir, 'cut.json.gz'))).rejects.toThrow(/is not valid gzip/);
    await writeFile(join(dir, 'text.json.gz'), gzipSync(Buffer.from('not json')));
    await expect(loadData(join(dir, 'text.json.gz'))).rejects.toThrow(/is not JSON once unpacked/);
    await expect(loadData(join(dir, 'text.json.gz'))).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('runs both treatments of assistant turns, the memSession one first and alone marked as the default, per-file categories in the report', async () => {
    await writeFile(join(dir, 'run.json.gz'), gzipSync(Buffer.from(JSON.stringify(syntheticLongMemEval()))));
    const { report, markdownPath } = await runCli(
      parseArgs([
        '--data',
        join(dir, 'run.json.gz'),
        '--episodic',
        'on',
        '--assistant-turns',
        'both',
        '--k',
        '1,5',
        '--json',
        join(dir, 'run.json'),
        '--no-progress',
      ]),
      quiet,
    );
    expect(report.results.map((r) => [r.label, r.sessionDefault, r.assistantTurns])).toEqual([
      ['memSession default (beliefs + episodes)', true, 'context'],
      ['beliefs + episodes, assistant turns kept as labelled episodes', false, 'episodes'],
    ]);
    // Both find what the assistant recommended: the default as a reply, the variant as the user's turn.
    expect(report.results[0]?.scores.byCategory['4']?.recall[5]).toBe(1);
    expect(report.results[1]?.scores.byCategory['4']?.recall[5]).toBe(1);
    expect(report.info.wallSeconds).toBeGreaterThan(0);
    for (const r of report.results) expect(r.cpuMs).toBeGreaterThan(0);
    const md = await readFile(markdownPath ?? '', 'utf8');
    expect(md).toMatch(/^# LongMemEval retrieval/);
    expect(md).toMatch(/\| system \| k \| multi-session \| single-session \+ knowledge-update \| all \|/);
    expect(md).not.toMatch(/all but adversarial/);
    expect(md).toContain('## By question type (%)');
    expect(md).toMatch(
      /\| \*\*memSession default \(beliefs \+ episodes\)\*\* \| R@1 100\.0, R@5 100\.0, block 100\.0 \| R@1 100\.0, R@5 100\.0, block 100\.0 \|/,
    );
  });

  it('refuses --assistant-turns on a file whose speakers are both people', async () => {
    await writeFile(join(dir, 'locomo.json'), JSON.stringify(syntheticLocomo()));
    await expect(
      runCli(
        parseArgs(['--data', join(dir, 'locomo.json'), '--assistant-turns', 'episodes', '--json', '-']),
        { ...quiet, writeStdout: () => undefined },
      ),
    ).rejects.toThrow(/--assistant-turns: this file has no assistant turns/);
  });
});
