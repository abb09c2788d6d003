// Store-level search benchmark for @mem01/store-memory (run against dist: `pnpm --filter @mem01/store-memory bench`).
// Prints p50/p95 of searchLexical, searchVector and getActiveByKeys over 1k, 10k and 100k beliefs of one user,
// plus commit throughput, and writes bench/results/store-memory.json at the repo root.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBelief } from '@mem01/engine';
import { createMemoryStore } from '../dist/index.js';

const DIMS = 384;
const QUERIES = 300;
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const WORDS = (
  'coffee tea city lisbon berlin tokyo sister brother dog cat hiking running chess piano guitar rent salary ' +
  'vegetarian vegan allergy peanut project deadline manager startup bank doctor dentist flight hotel aisle window ' +
  'seat birthday anniversary wedding garden tomato basil novel poetry jazz opera football tennis swimming yoga ' +
  'python rust typescript kotlin laptop phone car bicycle train subway apartment house mortgage loan budget'
).split(' ');

let seed = 42;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
const vector = () => {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = rand() * 2 - 1;
  return v;
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (x) => Math.round(x * 1000) / 1000;

// Wall-clock latency, and CPU time of this process per call: on a shared, loaded machine the wall clock includes
// waiting for a core, the CPU time does not.
async function time(fn) {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < 20; i++) await fn(i); // warm-up
  for (let i = 0; i < QUERIES; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn(i);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return {
    p50: round(pct(wall, 50)),
    p95: round(pct(wall, 95)),
    cpuP50: round(pct(cpu, 50)),
    cpuP95: round(pct(cpu, 95)),
  };
}

const results = [];
for (const n of SIZES) {
  const store = createMemoryStore({ dimensions: DIMS });
  const scope = { userId: 'bench-user' };
  const other = { userId: 'other-user' };
  const at = new Date().toISOString();
  const t0 = performance.now();
  const BATCH = 100;
  for (let i = 0; i < n; i += BATCH) {
    const inserts = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      const statement = `The user mentioned ${pick()} and ${pick()} with ${pick()} ${pick()}.`;
      const belief = createBelief({
        scope,
        kind: 'fact',
        subject: 'user',
        attribute: `attr_${j}`,
        value: pick(),
        statement,
        confidence: 0.9,
        source: 'extracted',
        at,
      });
      inserts.push({ belief, embedding: vector() });
    }
    await store.commit({ scope, inserts, updates: [], audit: [] });
  }
  const insertMs = performance.now() - t0;
  // Another user's beliefs must not slow this user's search.
  await store.commit({
    scope: other,
    inserts: [
      {
        belief: createBelief({
          scope: other,
          kind: 'fact',
          subject: 'user',
          attribute: 'x',
          value: 'coffee',
          statement: 'coffee',
          confidence: 1,
          source: 'manual',
          at,
        }),
      },
    ],
    updates: [],
    audit: [],
  });
  const queries = Array.from(
    { length: QUERIES + 20 },
    () => `where does the user ${pick()} ${pick()} ${pick()}?`,
  );
  const vectors = Array.from({ length: QUERIES + 20 }, vector);
  const lexical = await time((i) => store.searchLexical(scope, queries[i], { limit: 50 }));
  const vectorSearch = await time((i) => store.searchVector(scope, vectors[i], { limit: 50 }));
  const keys = await time((i) =>
    store.getActiveByKeys(scope, [
      { subject: 'user', attribute: `attr_${(i * 7919) % n}` },
      { subject: 'user', attribute: 'nope' },
    ]),
  );
  const row = {
    beliefs: n,
    dimensions: DIMS,
    commitBeliefsPerSecond: Math.round(n / (insertMs / 1000)),
    searchLexicalMs: lexical,
    searchVectorMs: vectorSearch,
    getActiveByKeysMs: keys,
    heapUsedMB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    loadAverage1m: round(os.loadavg()[0]),
  };
  results.push(row);
  console.log(
    `${String(n).padStart(6)} beliefs: lexical p50/p95 ${lexical.p50}/${lexical.p95} ms (cpu ${lexical.cpuP50}/${lexical.cpuP95}) | ` +
      `vector p50/p95 ${vectorSearch.p50}/${vectorSearch.p95} ms (cpu ${vectorSearch.cpuP50}/${vectorSearch.cpuP95}) | ` +
      `keys p95 ${keys.p95} ms | commit ${row.commitBeliefsPerSecond}/s | heap ${row.heapUsedMB} MB | load ${os.loadavg()[0].toFixed(1)}`,
  );
  await store.close();
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const out = join(root, 'bench', 'results', 'store-memory.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ package: '@mem01/store-memory', benchmark: 'store-level search latency (limit 50) and commit throughput, one user', node: process.version, queries: QUERIES, results }, null, 2)}\n`,
);
console.log(`wrote ${out}`);
