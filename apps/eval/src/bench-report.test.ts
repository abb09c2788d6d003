import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  collectFigures,
  inputBytesSeries,
  latencySeries,
  readBenchResults,
  writeSummary,
} from './bench-report.js';
import { lineChart } from './svg-plot.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mem01-bench-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const put = (name: string, data: unknown) =>
  writeFile(join(dir, name), typeof data === 'string' ? data : JSON.stringify(data));

describe('bench summary', () => {
  it('says "not run" for every figure when nothing ran, and still writes the plots', async () => {
    const { figures, markdown } = await writeSummary(dir, new Date('2025-01-01T00:00:00Z'));
    expect(figures.length).toBeGreaterThanOrEqual(8);
    expect(figures.every((f) => f.value === null && f.source === 'not run' && f.meets === null)).toBe(true);
    expect(markdown).toContain(
      '| Engine recall, 10k beliefs, in-memory store | p95 ≤ 5 ms | not run | – | not run |',
    );
    expect(await readFile(join(dir, 'summary.md'), 'utf8')).toBe(markdown);
    expect(await readFile(join(dir, 'recall-latency.svg'), 'utf8')).toContain('no data');
  });

  it('puts each figure found in the packages’ results beside its target', async () => {
    await put('engine.json', {
      package: '@mem01/store-memory',
      measured: 'engine.recall on the in-memory store',
      recall: [
        { beliefs: 1000, p50_ms: 0.2, p95_ms: 0.5, lexical_only_p95_ms: 0.1 },
        { beliefs: 10000, p50_ms: 1.5, p95_ms: 3.25, lexical_only_p95_ms: 1 },
        { beliefs: 100000, p50_ms: 12, p95_ms: 20 },
      ],
    });
    await put('store-sqlite.json', {
      results: [
        { beliefs: 10000, vector: 'exact', recallMs: { p50: 40, p95: 150 } },
        { beliefs: 10000, vector: 'sqlite-vec', recallMs: { p50: 4, p95: 12.5 } },
        { beliefs: 100000, vector: 'sqlite-vec', recallMs: { p50: 20, p95: 41, n: 60 } },
      ],
      append: { items: 10, medianMs: 0.4 },
    });
    await put('store-postgres.json', {
      results: [
        { beliefs: 100000, vector: 'exact', recallMs: { p95: 300 } },
        { beliefs: 100000, vector: 'pgvector-hnsw', recallMs: { p95: 18 } },
      ],
    });
    await put('store-postgres-large.json', {
      recall: [
        {
          store: 'pglite-pgvector-hnsw',
          beliefs: 1000000,
          users: 1000,
          perUser: 1000,
          recallMs: { p95: 9.5 },
        },
        { store: 'postgres-exact-cosine', beliefs: 100000, users: 1, recallMs: { p95: 900 } },
        {
          store: 'postgres-exact-cosine',
          beliefs: 1010000,
          users: 1001,
          perUser: 1000,
          recallMs: { p95: 17 },
        },
      ],
    });
    await put('openai.json', {
      results: [
        { name: 'mem01 direct, unbatched', llmCallsPerUserTurn: 1 },
        { name: 'mem01 direct, batches of 4 user turns', llmCallsPerUserTurn: 0.25 },
      ],
    });
    await put('demo.json', {
      strategies: [
        { strategy: 'full-history', perConversation: { bytes: [100, 300, 900] } },
        { strategy: 'memsession', perConversation: { bytes: [100, 150, 160] } },
      ],
    });
    await put('session.json', {
      modelInputBytes: [
        { conversations: 1, memSessionBytes: 600, reusedMemorySessionBytes: 350 },
        { conversations: 40, memSessionBytes: 800, reusedMemorySessionBytes: 8000 },
      ],
    });
    await put('locomo-memory.json', {
      kind: 'locomo',
      info: { store: 'memory (inverted-bm25, exact-cosine)', extractor: 'local' },
      results: [
        {
          label: 'mem01 default (beliefs + episodes)',
          ks: [10],
          scores: { allButAdversarial: { recall: { 10: 0.6612 } }, all: { recall: { 10: 0.65 }, mrr: 0.5 } },
          recall: { p95Ms: 2 },
        },
      ],
    });
    await put('broken.json', '{ not json');
    const files = await readBenchResults(dir);
    expect(files.find((f) => f.name === 'broken')?.data).toBeUndefined();
    const byName = Object.fromEntries(collectFigures(files).map((f) => [f.figure, f]));
    expect(byName['Engine recall, 10k beliefs, in-memory store']).toMatchObject({ value: 3.25, meets: true });
    expect(byName['SQLite recall, 10k beliefs']).toMatchObject({ value: 12.5, meets: false });
    expect(byName['SQLite recall, 100k beliefs']).toMatchObject({ value: 41, meets: true });
    expect(byName['SQLite: append of 10 items, median']).toMatchObject({ value: 0.4, meets: true });
    expect(byName['PostgreSQL recall, 100k beliefs, HNSW']).toMatchObject({ value: 18, meets: true });
    expect(byName['PostgreSQL recall, 1M beliefs across users, HNSW on PGlite']).toMatchObject({
      value: 9.5,
      meets: null,
      source:
        'store-postgres-large.json (recallMs.p95, pglite-pgvector-hnsw; 1,000,000 beliefs, 1,000 users)',
    });
    expect(byName['PostgreSQL recall, 1M beliefs across users, exact-cosine fallback']).toMatchObject({
      value: 17,
      meets: null,
    });
    expect(byName['OpenAI extraction, unbatched']).toMatchObject({ value: 1, meets: true });
    expect(byName['OpenAI extraction, batches of 4']).toMatchObject({ value: 0.25, meets: true });
    const locomo = Object.values(byName).find((f) => f.figure.startsWith('LoCoMo'));
    expect(locomo).toMatchObject({ value: 66.1, meets: true });

    expect(latencySeries(files).map((s) => [s.label, s.points.length])).toEqual([
      ['engine (p95_ms)', 3],
      ['store-sqlite exact (recallMs.p95)', 1],
      ['store-sqlite sqlite-vec (recallMs.p95)', 2],
      ['store-postgres exact (recallMs.p95)', 1],
      ['store-postgres pgvector-hnsw (recallMs.p95)', 1],
      ['store-postgres-large pglite-pgvector-hnsw (recallMs.p95)', 1],
      ['store-postgres-large postgres-exact-cosine (recallMs.p95)', 2],
    ]);
    expect(inputBytesSeries(files).map((s) => s.label)).toEqual([
      'full-history (demo)',
      'memsession (demo)',
      'memSession (session)',
      'reusedMemorySession (session)',
    ]);

    const { markdown } = await writeSummary(dir);
    expect(markdown).toContain('| broken.json | unreadable JSON |');
    expect(markdown).toContain('| LoCoMo: recall@10 excl. adversarial');
    const svg = await readFile(join(dir, 'model-input-bytes.svg'), 'utf8');
    expect(svg.match(/<polyline/g)).toHaveLength(4);
  });

  it('reports a present file without the figure as such, not as not run', async () => {
    await put('store-sqlite.json', { results: [{ beliefs: 1000, p95_ms: 1 }] });
    const f = collectFigures(await readBenchResults(dir)).find(
      (x) => x.figure === 'SQLite recall, 10k beliefs',
    );
    expect(f).toMatchObject({
      value: null,
      source: 'no 10,000-belief row in store-sqlite.json; largest measured: 1,000 beliefs, p95 1 ms (p95_ms)',
    });
  });

  it('puts the MCP server’s protocol overhead (p50) beside its 2 ms target', async () => {
    await put('mcp.json', {
      package: '@mem01/mcp',
      benchmark: 'recall tool over stdio vs in-process engine.recall, SQLite, 10k beliefs of one user',
      beliefs: 10000,
      mcpRecallMs: { p50: 9.5, p95: 14, n: 300 },
      engineRecallMs: { p50: 8.25, p95: 12, n: 300 },
      overheadMs: { p50: 1.25, p95: 2, pairedMedian: 1.2 },
    });
    const { figures, markdown } = await writeSummary(dir);
    const name = 'MCP recall over stdio, 10k beliefs: overhead over engine.recall, p50';
    expect(figures.find((f) => f.figure === name)).toMatchObject({ value: 1.25, unit: 'ms', meets: true });
    expect(markdown).toContain(
      `| ${name} | p50 ≤ 2 ms | 1.25 ms | yes | mcp.json (overheadMs.p50: MCP p50 9.5 ms − engine.recall p50 8.25 ms) |`,
    );
    // The MCP row is not a store's latency series.
    expect(latencySeries(await readBenchResults(dir))).toEqual([]);
    await put('mcp.json', { package: '@mem01/mcp' });
    expect(collectFigures(await readBenchResults(dir)).find((f) => f.figure === name)).toMatchObject({
      value: null,
      source: 'no overheadMs.p50 in mcp.json',
    });
  });
});

describe('lineChart', () => {
  it('draws one polyline per series, escapes labels, and drops points a log axis cannot show', () => {
    const svg = lineChart(
      [
        {
          label: 'a <&> b',
          points: [
            [1, 1],
            [10, 5],
            [0, 3],
          ],
        },
        { label: 'c', points: [[100, 2]] },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y', xLog: true, yLog: true, hLines: [{ y: 5, label: 'target' }] },
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('a &lt;&amp;&gt; b');
    expect(svg.match(/<circle/g)).toHaveLength(3);
    expect(svg).not.toContain('NaN');
  });
});
