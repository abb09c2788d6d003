/**
 * The OPENAI path: with a key in the environment the same command extracts and embeds through @mem01/openai. Run
 * against the package's fake server over real HTTP on a 1-conversation, 2-session slice.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractionData, type FakeOpenAI, startFakeOpenAI } from '@mem01/openai/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATA, parseArgs, runCli } from '../src/cli.js';
import { checkReport } from './check-report.js';
import { syntheticLocomo } from './synthetic.js';

let fake: FakeOpenAI;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-eval-openai-'));
  // A scripted "model": one grounded fact per user turn, quoting the turn's first words.
  fake = await startFakeOpenAI({
    responses: (request) => {
      const data = extractionData(request);
      return {
        ops: data.turns
          .filter((t) => t.role === 'user')
          .map((t) => ({
            op: 'add',
            kind: 'fact',
            subj: 'user',
            attr: `said_${t.id}_${t.at.slice(0, 10)}_${t.text.length}`,
            val: t.text.slice(0, 60),
            stmt: t.text,
            conf: 0.9,
            from: null,
            to: null,
            ev: [{ t: t.id, q: t.text.slice(0, 30) }],
          })),
      };
    },
  });
});
afterAll(async () => {
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('eval:locomo with OPENAI_API_KEY', () => {
  const env = () => ({ OPENAI_API_KEY: 'sk-test-not-a-real-key', OPENAI_BASE_URL: fake.url });

  it('uses the OpenAI extractor and embedder, and beliefs keep their dialogue ids', async () => {
    const data = existsSync(DEFAULT_DATA) ? DEFAULT_DATA : join(dir, 'synthetic.json');
    if (!existsSync(DEFAULT_DATA)) await writeFile(data, JSON.stringify(syntheticLocomo()));
    const json = join(dir, 'locomo-openai.json');
    const { report } = await runCli(
      parseArgs([
        '--data',
        data,
        '--limit-conversations',
        '1',
        '--limit-sessions',
        '2',
        '--json',
        json,
        '--no-progress',
      ]),
      { env: env(), out: () => undefined },
    );
    checkReport(report, { ks: [5, 10], conversations: 1 });
    expect(report.info.extractor).toMatch(/^openai/);
    expect(report.info.embedder).toMatch(/^openai:/);
    const responses = fake.requestsFor('responses');
    expect(responses.length).toBeGreaterThan(0);
    expect(responses.every((r) => r.authorized)).toBe(true);
    expect(fake.requestsFor('embeddings').length).toBeGreaterThan(0);
    // Every extraction call is accounted for by the runs, and no more than one per turn.
    const llmCalls = report.results.reduce((n, r) => n + r.ingest.llmCalls, 0);
    expect(llmCalls).toBe(responses.length);
    for (const r of report.results) expect(r.ingest.llmCalls).toBeLessThanOrEqual(r.ingest.turns);
    // The scripted model writes one belief per turn, grounded in it: beliefs alone find evidence.
    const beliefs = report.results.find((r) => !r.episodic);
    expect(beliefs?.ingest.activeMemories).toBe(beliefs?.ingest.turns);
    expect(beliefs?.scores.all.recall[10]).toBeGreaterThan(0);
    // The key never reaches the report.
    expect(JSON.stringify(report)).not.toContain('sk-test-not-a-real-key');
  });
});
