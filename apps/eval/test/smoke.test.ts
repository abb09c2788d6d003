/**
 * The smoke run: the whole CLI path (argument parsing, data slicing, both recall modes, reports) on a 2-conversation
 * slice of the real data, checking that every figure is well-formed and in range.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATA, parseArgs, runCli } from '../src/cli.js';
import type { LocomoReport } from '../src/report.js';
import { checkReport } from './check-report.js';
import { syntheticLocomo } from './synthetic.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-eval-smoke-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('eval:locomo smoke run', () => {
  it.skipIf(!existsSync(DEFAULT_DATA))(
    '2 conversations of the real data, both recall modes',
    async () => {
      const lines: string[] = [];
      const json = join(dir, 'locomo-smoke.json');
      const { report, markdownPath } = await runCli(
        parseArgs([
          '--limit-conversations',
          '2',
          '--limit-sessions',
          '2',
          '--k',
          '10,5',
          '--json',
          json,
          '--no-progress',
        ]),
        { env: {}, out: (l) => lines.push(l) },
      );
      const written = JSON.parse(await readFile(json, 'utf8')) as LocomoReport;
      expect(written).toEqual(JSON.parse(JSON.stringify(report)));
      checkReport(written, { ks: [5, 10], conversations: 2 });
      expect(written.results.map((r) => [r.episodic, r.sessionDefault])).toEqual([
        [true, true],
        [false, false],
      ]);
      expect(written.info.extractor).toMatch(/^local/);
      expect(written.info.sliced).toBe(true);
      // A slice of LoCoMo10: the published figures do not apply to it.
      expect(written.crossCheck.applies).toBe(false);
      expect(written.crossCheck.why).toMatch(/slice/);
      const md = await readFile(markdownPath ?? '', 'utf8');
      expect(md).toContain('| BM25, turn + date (this file) | 5 |');
      expect(md).toContain('| **memSession default (beliefs + episodes)** | 5 |');
      expect(md).toContain('| beliefs only (episodic: false) | 5 |');
      expect(md).not.toContain('(published)');
      expect(lines.join('\n')).toContain('recall@10 excluding adversarial');
      expect(lines.join('\n')).toContain('block recall excluding adversarial at 800 bytes');
    },
    120_000,
  );

  it('any file of the shape: a synthetic file on SQLite, episodic only', async () => {
    const data = join(dir, 'synthetic.json');
    await writeFile(data, JSON.stringify(syntheticLocomo()));
    const json = join(dir, 'synthetic.json.out.json');
    const { report } = await runCli(
      parseArgs([
        '--data',
        data,
        '--store',
        'sqlite',
        '--episodic',
        'on',
        '--k',
        '3',
        '--collapse-covered',
        '--engine-config',
        '{"ranking":{"weights":{"lexical":0.8,"vector":0.2,"recency":0,"confidence":0}}}',
        '--json',
        json,
        '--no-progress',
      ]),
      { env: {}, out: () => undefined },
    );
    checkReport(report, { ks: [3], conversations: 2 });
    expect(report.results).toHaveLength(1);
    expect(report.info.store).toMatch(/^sqlite/);
    expect(report.results[0]?.scores.byCategory['7']?.questions).toBe(1);
    expect(report.results[0]).toMatchObject({
      sessionDefault: false,
      collapseCovered: true,
      engineConfig: { ranking: { weights: { lexical: 0.8 } } },
      system: { config: { ranking: { weights: { lexical: 0.8, vector: 0.2 } } } },
      label: 'beliefs + episodes, engine overrides, collapsed',
    });
  });

  it('the synthetic file on PostgreSQL, in a schema dropped afterwards', async () => {
    const data = join(dir, 'synthetic-pg.json');
    await writeFile(data, JSON.stringify(syntheticLocomo()));
    const { report } = await runCli(
      parseArgs([
        '--data',
        data,
        '--store',
        'postgres',
        '--episodic',
        'both',
        '--json',
        join(dir, 'pg.json'),
        '--no-progress',
      ]),
      { env: {}, out: () => undefined },
    );
    checkReport(report, { ks: [5, 10], conversations: 2 });
    expect(report.info.store).toMatch(/^postgres/);
    const client = new pg.Client({
      connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    });
    await client.connect();
    try {
      const left = await client.query(
        `SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE $1`,
        [`mem01_eval_%_${process.pid}`],
      );
      expect(left.rows).toEqual([]);
    } finally {
      await client.end();
    }
  }, 60_000);

  it('refuses bad arguments and bad data with clear errors', async () => {
    expect(() => parseArgs(['--store', 'redis'])).toThrow(/redis/);
    expect(() => parseArgs(['--k', '5,x'])).toThrow(/integers/);
    expect(() => parseArgs(['--episodic', 'maybe'])).toThrow(/maybe/);
    expect(() => parseArgs(['--engine-config', '[1]'])).toThrow(/JSON object/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"not":"a list"}');
    const json = join(dir, 'never.json');
    await expect(
      runCli(parseArgs(['--data', bad, '--json', json]), { env: {}, out: () => undefined }),
    ).rejects.toThrow(/JSON array/);
    expect(existsSync(json)).toBe(false);
  });
});
