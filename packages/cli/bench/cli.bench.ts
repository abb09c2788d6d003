/**
 * CLI benchmark: export and import throughput on a SQLite file of synthetic beliefs with 384-d embeddings, and
 * the inspector's page latency. Run after `pnpm build`: `pnpm --filter @mem01/cli bench`.
 * Prints figures and writes bench/results/cli.json at the repo root.
 */
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { MemoryEngine } from '@mem01/engine';
import type { BeliefInsert } from '@mem01/engine/binding-kit';
import { syntheticBeliefs } from '@mem01/engine/testing';
import { createLocalEmbedder } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
import { run, startInspector } from '../dist/index.js';

const N = Number(process.env.BENCH_BELIEFS ?? 5000);
const ROUNDS = 3;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'mem01-cli-bench-'));
const quiet = { info() {}, warn() {} };

function io(stdout: NodeJS.WritableStream & { isTTY?: boolean }) {
  const sink = new PassThrough();
  sink.resume();
  return { stdout, stderr: sink, stdin: Object.assign(new PassThrough(), { isTTY: false }), env: {} };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

// A source file with N beliefs of one user (a tenth of them superseded chains), embedded with the local embedder.
const src = join(dir, 'src.db');
{
  const embedder = createLocalEmbedder();
  const store = openSqliteStore({ path: src, dimensions: 384, logger: quiet });
  const records: BeliefInsert[] = syntheticBeliefs(N, { userId: 'bench-user' }).map((belief) => ({ belief }));
  const vectors = await embedder.embed(records.map((r) => r.belief.statement));
  await store.importBeliefs(records.map((r, i) => ({ ...r, embedding: vectors[i] ?? null })));
  await store.close();
}

const exportMs: number[] = [];
const importMs: number[] = [];
const reimportMs: number[] = [];
let bytes = 0;
for (let r = 0; r < ROUNDS; r++) {
  const file = join(dir, `export-${r}.jsonl`);
  const out = createWriteStream(file);
  let t = performance.now();
  const code = await run(['--db', src, 'export', '--user', 'bench-user'], io(out));
  await new Promise<void>((res) => out.end(res));
  exportMs.push(performance.now() - t);
  if (code !== 0) throw new Error(`export failed (${code})`);
  bytes = statSync(file).size;
  const dst = join(dir, `dst-${r}.db`);
  t = performance.now();
  if ((await run(['--db', dst, 'import', file], io(new PassThrough()))) !== 0)
    throw new Error('import failed');
  importMs.push(performance.now() - t);
  t = performance.now();
  if ((await run(['--db', dst, 'import', file], io(new PassThrough()))) !== 0)
    throw new Error('re-import failed');
  reimportMs.push(performance.now() - t);
}

// The inspector: the user page (all N active beliefs) and a recall playground query.
const store = openSqliteStore({ path: src, logger: quiet });
const engine = new MemoryEngine({
  store,
  embedder: createLocalEmbedder(),
  extractor: { name: 'none', extract: async () => ({ operations: [] }) },
});
const ins = await startInspector({ engine, store });
const cookie = `mem01_inspect=${ins.token}`;
const timed = async (path: string, n: number) => {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${ins.origin}${path}`, { headers: { cookie } });
    await res.text();
    ms.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  }
  return ms;
};
const userPage = await timed('/user?u=bench-user', 20);
const recall = await timed('/recall?u=bench-user&q=topic%2042%20hobby', 30);
await ins.close();
await engine.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const results = {
  beliefs: N,
  dimensions: 384,
  exportFileBytes: bytes,
  exportMsMedian: median(exportMs),
  exportBeliefsPerSec: Math.round(N / (median(exportMs) / 1000)),
  importMsMedian: median(importMs),
  importBeliefsPerSec: Math.round(N / (median(importMs) / 1000)),
  reimportNoopMsMedian: median(reimportMs),
  inspectUserPageMs: { p50: pct(userPage, 0.5), p95: pct(userPage, 0.95), beliefsOnPage: N },
  inspectRecallMs: { p50: pct(recall, 0.5), p95: pct(recall, 0.95) },
  rounds: ROUNDS,
};
const fmt = (x: number) => x.toFixed(1);
console.log(`mem01 CLI bench: ${N} beliefs, 384-d embeddings, SQLite`);
console.log(
  `  export   median ${fmt(results.exportMsMedian)} ms (${results.exportBeliefsPerSec}/s, ${(bytes / 1e6).toFixed(1)} MB)`,
);
console.log(
  `  import   median ${fmt(results.importMsMedian)} ms (${results.importBeliefsPerSec}/s); re-import (no-op) ${fmt(results.reimportNoopMsMedian)} ms`,
);
console.log(
  `  inspect  user page (${N} beliefs, newest 500 shown) p50 ${fmt(results.inspectUserPageMs.p50)} ms p95 ${fmt(results.inspectUserPageMs.p95)} ms`,
);
console.log(
  `  inspect  recall playground p50 ${fmt(results.inspectRecallMs.p50)} ms p95 ${fmt(results.inspectRecallMs.p95)} ms`,
);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'cli.json'), `${JSON.stringify(results, null, 2)}\n`);
