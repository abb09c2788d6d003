import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  collectFigures,
  devSetTables,
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

/** A LoCoMo report as the eval writes it (the fields the summary reads), headline first. */
function locomoReport(
  store: string,
  o: { r10: number; block: number; behind?: boolean },
): Record<string, unknown> {
  const cats = ['1', '2', '3', '4', '5'];
  const ahead = (k: number) =>
    Object.fromEntries(cats.map((c) => [c, o.behind && c === '1' ? (k === 5 ? -1.5 : 0) : 3.2]));
  const label = 'memSession default (beliefs + episodes)';
  return {
    kind: 'locomo',
    info: { store, extractor: 'local' },
    baseline: {
      label: 'BM25, turn + date (this file)',
      ks: [5, 10],
      scores: {
        allButAdversarial: { recall: { 5: 0.518, 10: 0.587 } },
        all: { recall: { 5: 0.536, 10: 0.606 }, mrr: 0.4 },
      },
    },
    results: [
      {
        label,
        sessionDefault: true,
        ks: [5, 10],
        scores: {
          allButAdversarial: { recall: { 5: o.r10 - 0.05, 10: o.r10 }, blockRecall: o.block },
          all: { recall: { 5: 0.65, 10: 0.7 }, mrr: 0.5 },
        },
        recall: { p95Ms: 2 },
        block: { budgetBytes: 800 },
        ingest: { splitTurns: 0, refusedTurns: 0 },
      },
      {
        label: 'beliefs only (episodic: false)',
        sessionDefault: false,
        ks: [5, 10],
        scores: {
          allButAdversarial: { recall: { 5: 0.1, 10: 0.12 }, blockRecall: 0.08 },
          all: { recall: { 5: 0.1, 10: 0.12 }, mrr: 0.1 },
        },
        recall: { p95Ms: 1 },
        block: { budgetBytes: 800 },
        ingest: { splitTurns: 0, refusedTurns: 0 },
      },
    ],
    versusBaseline: [
      { label, k: 5, byCategory: ahead(5) },
      { label, k: 10, byCategory: ahead(10) },
    ],
  };
}

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
      locomoTurns: [
        {
          name: 'LoCoMo turns, reference local',
          reference: '@mem01/local',
          turns: 200,
          dynamicInputTokensPerTurn: 264,
          outputTokensPerTurn: 13,
        },
        {
          name: 'LoCoMo turns, reference dense',
          reference: 'dense',
          turns: 200,
          dynamicInputTokensPerTurn: 640,
          outputTokensPerTurn: 65,
        },
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
    await put(
      'locomo-memory.json',
      locomoReport('memory (inverted-bm25, exact-cosine)', { r10: 0.7412, block: 0.6134 }),
    );
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
    const tokens = (ref: string, what: string) =>
      byName[`OpenAI extraction, LoCoMo turns, reference ${ref}: ${what} tokens per turn`];
    const perTurnInput = 'per-turn input (without the static instructions + schema prefix)';
    expect(tokens('local', perTurnInput)).toMatchObject({
      value: 264,
      target: '≤ 600 tokens/turn',
      meets: true,
      source: 'openai.json (locomoTurns dynamicInputTokensPerTurn; 200 turns, reference @mem01/local)',
    });
    expect(tokens('local', 'output')).toMatchObject({ value: 13, target: '≤ 100 tokens/turn', meets: true });
    expect(tokens('dense', perTurnInput)).toMatchObject({ value: 640, meets: false });
    expect(tokens('dense', 'output')).toMatchObject({ value: 65, meets: true });
    expect(byName['LoCoMo (memory), memSession default: recall@10 excl. adversarial']).toMatchObject({
      value: 74.1,
      meets: true,
    });
    expect(byName['LoCoMo (memory), memSession default: block recall excl. adversarial']).toMatchObject({
      value: 61.3,
      meets: true,
    });
    expect(byName['LoCoMo (sqlite), memSession default: recall@10 excl. adversarial']).toMatchObject({
      value: null,
      source: 'not run',
    });

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
    expect(markdown).toContain(
      '| LoCoMo (memory), memSession default: recall@10 excl. adversarial | ≥ 72 | 74.1 % | yes |',
    );
    expect(markdown).toContain(
      '| **memSession default (beliefs + episodes)** | memory (inverted-bm25, exact-cosine) | 10 | 74.1 | 70.0 | 61.3 | 0.500 | 2.00 | 0 / 0 |',
    );
    expect(markdown).toContain(
      '| BM25, turn + date (this file) | memory (inverted-bm25, exact-cosine) | 10 | 58.7 |',
    );
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

  it('reports an openai.json without LoCoMo token rows as such', async () => {
    await put('openai.json', { results: [{ name: 'mem01 direct, unbatched', llmCallsPerUserTurn: 1 }] });
    const figures = collectFigures(await readBenchResults(dir)).filter((f) => f.unit === 'tokens/turn');
    expect(figures).toHaveLength(4);
    expect(figures.every((f) => f.value === null && f.source === 'no locomoTurns row in openai.json')).toBe(
      true,
    );
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

describe('bench summary: cold start', () => {
  it('puts each entry point’s own import cost and first recall beside the SDK’s import time', async () => {
    const entry = (importMs: number, firstRecallMs: number) => ({
      importMs: { median: importMs },
      ownImportMs: importMs - 500,
      firstRecallMs: { median: firstRecallMs },
      firstRecallOverSdkMs: firstRecallMs - 500,
    });
    await put('cold-start.json', {
      package: '@mem01/mcp',
      sdkImportMs: { median: 500 },
      entryPoints: { mem01session: entry(580, 760), '@mem01/mcp': entry(420, 900) },
    });
    const { figures, markdown } = await writeSummary(dir);
    const own = 'Cold start, mem01session: own import cost on top of importing @openai/agents, median';
    expect(figures.find((f) => f.figure === own)).toMatchObject({ value: 80, meets: true });
    expect(markdown).toContain(
      `| ${own} | ≤ 150 ms | 80 ms | yes | cold-start.json (import 580 ms − SDK import 500 ms) |`,
    );
    const mcpRecall =
      "Cold start, @mem01/mcp: first recall (SQLite, 1k beliefs, offline) beyond the SDK's import time, median";
    expect(figures.find((f) => f.figure === mcpRecall)).toMatchObject({ value: 400, meets: false });
    expect(figures.find((f) => f.figure.startsWith('Cold start, @mem01/cli: own import'))).toMatchObject({
      value: null,
      source: 'no @mem01/cli entry in cold-start.json',
      meets: null,
    });
  });
});

describe('bench summary: LoCoMo on every store, and recall beside episodes', () => {
  it('shows the memSession default of each store against its targets and the file’s own BM25', async () => {
    await put('locomo-memory.json', locomoReport('memory', { r10: 0.73, block: 0.62 }));
    await put('locomo-sqlite.json', locomoReport('sqlite', { r10: 0.7, block: 0.55, behind: true }));
    // An older report without the mark: reported as such, not taken for the headline.
    const old = locomoReport('postgres', { r10: 0.8, block: 0.7 }) as {
      results: { sessionDefault?: boolean }[];
    };
    for (const r of old.results) delete r.sessionDefault;
    await put('locomo-postgres.json', old);
    const figures = collectFigures(await readBenchResults(dir));
    const byName = Object.fromEntries(figures.map((f) => [f.figure, f]));
    const pairs = "(category, k) pairs above this file's BM25, k = 5, 10";
    expect(byName[`LoCoMo (memory), memSession default: ${pairs}`]).toMatchObject({
      value: 10,
      unit: 'of 10',
      meets: true,
    });
    expect(byName['LoCoMo (sqlite), memSession default: recall@10 excl. adversarial']).toMatchObject({
      value: 70,
      meets: false,
    });
    expect(byName['LoCoMo (sqlite), memSession default: block recall excl. adversarial']).toMatchObject({
      value: 55,
      meets: false,
    });
    expect(byName[`LoCoMo (sqlite), memSession default: ${pairs}`]).toMatchObject({
      value: 8,
      unit: 'of 10',
      meets: false,
      source: 'locomo-sqlite.json; not ahead: multi-hop at k=5 (-1.5), multi-hop at k=10 (+0.0)',
    });
    expect(byName['LoCoMo (postgres), memSession default: recall@10 excl. adversarial']).toMatchObject({
      value: null,
      source: 'no sessionDefault row in locomo-postgres.json (an older report or an override run)',
    });
    const { markdown } = await writeSummary(dir);
    expect(markdown).toContain(`| LoCoMo (sqlite), memSession default: ${pairs} | all | 8 of 10 | no |`);
  });

  it('puts recall at 10k beliefs + 10k episodes beside its targets, per store', async () => {
    await put('engine-episodes.json', {
      benchmark: 'engine.recall at 10k extracted beliefs + 10k episodes of one user',
      loadAverage: [1.5, 2, 2.5],
      recall: [
        { store: 'memory', beliefs: 10000, episodes: 10000, recallMs: { p50: 2.5, p95: 4.5 } },
        { store: 'sqlite', beliefs: 10000, episodes: 10000, recallMs: { p50: 7, p95: 12 } },
      ],
    });
    const figures = collectFigures(await readBenchResults(dir));
    const mem = figures.find(
      (f) => f.figure.startsWith('Engine recall, 10k beliefs + 10k episodes') && /memory/.test(f.figure),
    );
    const sql = figures.find(
      (f) => f.figure.startsWith('Engine recall, 10k beliefs + 10k episodes') && /SQLite/.test(f.figure),
    );
    expect(mem).toMatchObject({ value: 4.5, target: 'p95 ≤ 5 ms', meets: true });
    expect(sql).toMatchObject({ value: 12, target: 'p95 ≤ 10 ms', meets: false });
    expect(sql?.source).toContain('load 1.5/2/2.5');
    // Not a belief-count series of its own: the generic figures are untouched.
    expect(figures.find((f) => f.figure === 'Engine recall, 10k beliefs, in-memory store')?.value).toBeNull();
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

/** A dev60 report as the eval writes it (the fields the summary reads): four categories of its own, no adversarial. */
function dev60Report(store: string, o: { p95: number; wallMs: number }): Record<string, unknown> {
  const names = {
    1: 'multi-session',
    2: 'temporal',
    3: 'preference',
    4: 'single-session + knowledge-update',
  };
  const byCat = (v: Record<string, number>) =>
    Object.fromEntries(Object.entries(v).map(([c, r]) => [c, { recall: { 5: r - 0.1, 10: r } }]));
  const label = 'memSession default (beliefs + episodes)';
  return {
    kind: 'locomo',
    info: { store, extractor: 'local', startedAt: '2026-12-05T08:00:00.000Z' },
    baseline: {
      label: 'BM25, turn + date (this file)',
      ks: [5, 10],
      scores: {
        byCategory: byCat({ 1: 0.733, 2: 0.717, 3: 0.583, 4: 0.9 }),
        all: { recall: { 5: 0.66, 10: 0.789 } },
        categoryNames: names,
      },
    },
    results: [
      {
        label,
        sessionDefault: true,
        ks: [5, 10],
        scores: {
          byCategory: byCat({ 1: 0.8, 2: 0.75, 3: 0.5, 4: 0.95 }),
          all: { recall: { 5: 0.72, 10: 0.82 }, blockRecall: 0.61, mrr: 0.5 },
          categoryNames: names,
        },
        recall: { p95Ms: o.p95 },
        block: { budgetBytes: 800 },
        ingest: { splitTurns: 4, refusedTurns: 0 },
        wallMs: o.wallMs,
        loadAverage: [3, 2, 1],
      },
    ],
    versusBaseline: [
      { label, k: 5, byCategory: { 1: 6.7, 2: 3.3, 3: -8.3, 4: 5 } },
      { label, k: 10, byCategory: { 1: 6.7, 2: 3.3, 3: -8.3, 4: 5 } },
    ],
  };
}

describe('bench summary: the LongMemEval dev60 set beside LoCoMo', () => {
  it('puts the dev60 headline beside its latency targets and its own BM25, with its own category names', async () => {
    await put('longmemeval-dev60-memory.json', dev60Report('memory', { p95: 12.5, wallMs: 390_000 }));
    const figures = collectFigures(await readBenchResults(dir));
    const byName = Object.fromEntries(figures.map((f) => [f.figure, f]));
    const head = 'LongMemEval dev60 (memory), memSession default';
    expect(byName[`${head}: recall@10`]).toMatchObject({ value: 82 });
    expect(byName[`${head}: block recall`]).toMatchObject({ value: 61 });
    expect(byName[`${head}: (category, k) pairs above this file's BM25, k = 5, 10`]).toMatchObject({
      value: 6,
      unit: 'of 8',
      source: expect.stringContaining('not ahead: preference at k=5 (-8.3), preference at k=10 (-8.3)'),
    });
    expect(byName[`${head}: recall p95 (eval-reported)`]).toMatchObject({ value: 12.5, meets: true });
    expect(byName[`${head}: wall time of the row (ingest + questions)`]).toMatchObject({
      value: 6.5,
      meets: false,
    });
    expect(byName['LongMemEval dev60 (sqlite), memSession default: recall@10']).toMatchObject({
      value: null,
      source: 'not run',
    });
  });

  it('shows both sets per category, each store’s default against the BM25 of its own file', async () => {
    await put('locomo-memory.json', locomoReport('memory', { r10: 0.73, block: 0.62 }));
    await put('longmemeval-dev60-memory.json', dev60Report('memory', { p95: 12.5, wallMs: 200_000 }));
    await put('longmemeval-dev60-sqlite.json', dev60Report('sqlite', { p95: 20, wallMs: 250_000 }));
    const tables = devSetTables(await readBenchResults(dir));
    const text = tables.join('\n');
    expect(text).toContain('### LongMemEval_S dev60');
    expect(text).toContain(
      '| run | store | k | multi-session | temporal | preference | single-session + knowledge-update | all |',
    );
    expect(text).toContain(
      '| **memSession default (beliefs + episodes)** | sqlite | 10 | 80.0 (+6.7) | 75.0 (+3.3) | 50.0 (-8.3) | 95.0 (+5.0) | 82.0 (+3.1) |',
    );
    expect(text).toContain('| BM25, turn + date (this file) | – | 10 | 73.3 | 71.7 | 58.3 | 90.0 | 78.9 |');
    // LoCoMo's file has no per-category figures in this fixture: its table still shows its rows.
    expect(text).toContain('### LoCoMo10');
    const { markdown } = await writeSummary(dir);
    expect(markdown).toContain('## Both development sets, per category (recall@k, %)');
  });
});
