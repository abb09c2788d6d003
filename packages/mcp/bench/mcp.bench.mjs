/**
 * @mem01/mcp benchmark (imports dist; run `pnpm --filter @mem01/mcp build` first, or `pnpm bench`).
 *
 * `recall` over stdio with 10k beliefs of one user (one SQLite file, 384-d local embeddings): the round trip of
 * the tool call through the MCP SDK's Client and the built `mem01-mcp` bin, beside `engine.recall` in this
 * process on the same file with the same queries, alternating in one loop so both see the same machine. The
 * protocol overhead is the difference of the medians (target ≤ 2 ms at p50). Writes bench/results/mcp.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryEngine } from '@mem01/engine';
import { syntheticBeliefs } from '@mem01/engine/testing';
import { createLocalEmbedder } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const N = Number(process.env.BENCH_BELIEFS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const WARMUP = 30;
const USER = 'bench-user';
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const bin = resolve(here, '../dist/bin.js');
const dir = mkdtempSync(join(tmpdir(), 'mem01-mcp-bench-'));
const db = join(dir, 'memory.db');
const quiet = { info() {}, warn() {} };

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const round = (x) => Math.round(x * 1000) / 1000;
const summary = (xs) => ({ p50: round(pct(xs, 0.5)), p95: round(pct(xs, 0.95)), n: xs.length });

// N beliefs of one user, embedded with the local embedder, imported in one transaction.
{
  const embedder = createLocalEmbedder();
  const store = openSqliteStore({ path: db, dimensions: embedder.dimensions, logger: quiet });
  const records = syntheticBeliefs(N, { userId: USER, sessions: 500, stepMs: 60_000 }).map((belief) => ({
    belief,
  }));
  const vectors = await embedder.embed(records.map((r) => r.belief.statement));
  await store.importBeliefs(records.map((r, i) => ({ ...r, embedding: vectors[i] ?? null })));
  await store.close();
}

const queries = Array.from(
  { length: 50 },
  (_, i) => `what did I say about topic ${(i * 7) % 97} and hobby ${i % 13}?`,
);

// The server as an MCP host runs it: the built bin over stdio, on this file, for this user.
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [bin, '--db', db, '--user', USER],
  env: { PATH: process.env.PATH ?? '', HOME: dir, MEM01_HOME: dir },
  stderr: 'ignore',
});
const client = new Client({ name: 'mem01-mcp-bench', version: '1.0.0' });
await client.connect(transport);
await client.listTools(); // caches the output schemas the client validates structured content against

// The same recall in this process, on the same file, with the same embedder.
const store = openSqliteStore({ path: db, logger: quiet });
const engine = new MemoryEngine({
  store,
  embedder: createLocalEmbedder(),
  extractor: { name: 'none', extract: async () => ({ operations: [] }) },
});
const scope = { userId: USER };

const viaMcp = async (query) => {
  const t = performance.now();
  const r = await client.callTool({ name: 'search_memory', arguments: { query } });
  const ms = performance.now() - t;
  if (r.isError) throw new Error(`recall failed: ${JSON.stringify(r.content)}`);
  return { ms, items: r.structuredContent.items.length };
};
const inProcess = async (query) => {
  const t = performance.now();
  const hits = await engine.recall(scope, query);
  return { ms: performance.now() - t, items: hits.length };
};

for (let i = 0; i < WARMUP; i++) {
  await viaMcp(queries[i % queries.length]);
  await inProcess(queries[i % queries.length]);
}
const mcpMs = [];
const engineMs = [];
const pairedMs = [];
let items = 0;
for (let i = 0; i < SAMPLES; i++) {
  const q = queries[i % queries.length];
  // Alternate which goes first, so neither always runs on a warmer cache.
  let m;
  let e;
  if (i % 2 === 0) {
    m = await viaMcp(q);
    e = await inProcess(q);
  } else {
    e = await inProcess(q);
    m = await viaMcp(q);
  }
  mcpMs.push(m.ms);
  engineMs.push(e.ms);
  pairedMs.push(m.ms - e.ms);
  items += m.items;
}
await client.close();
await engine.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const mcp = summary(mcpMs);
const eng = summary(engineMs);
const results = {
  package: '@mem01/mcp',
  benchmark: 'recall tool over stdio vs in-process engine.recall, SQLite, 10k beliefs of one user',
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  store: 'sqlite (local 384-d embeddings)',
  beliefs: N,
  samples: SAMPLES,
  itemsPerRecall: round(items / SAMPLES),
  mcpRecallMs: mcp,
  engineRecallMs: eng,
  overheadMs: {
    p50: round(mcp.p50 - eng.p50),
    p95: round(mcp.p95 - eng.p95),
    pairedMedian: round(pct(pairedMs, 0.5)),
  },
  target: 'overhead (mcpRecallMs.p50 - engineRecallMs.p50) <= 2 ms',
};
console.log(
  `@mem01/mcp bench: recall, ${N.toLocaleString('en')} beliefs of one user, SQLite, ${SAMPLES} samples`,
);
console.log(`  MCP recall over stdio   p50 ${mcp.p50} ms  p95 ${mcp.p95} ms`);
console.log(`  engine.recall in-proc   p50 ${eng.p50} ms  p95 ${eng.p95} ms`);
console.log(
  `  protocol overhead       p50 ${results.overheadMs.p50} ms  p95 ${results.overheadMs.p95} ms (paired median ${results.overheadMs.pairedMedian} ms; target p50 <= 2 ms)`,
);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'mcp.json'), `${JSON.stringify(results, null, 2)}\n`);
