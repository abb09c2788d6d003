// Engine recall latency over 1k / 10k / 100k beliefs of one user in the in-memory store, and reconciliation
// throughput. Figures, not pass/fail. Run: pnpm --filter @mem01/eval bench (after pnpm build).
// It lives in apps/eval because it needs both the memory store and the local embedder.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBelief, MemoryEngine, reconcile } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { createLocalEmbedder } from '@mem01/local';
import { createMemoryStore } from '@mem01/store-memory';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const QUERIES = 300;
const WARMUP = 30;

// A deterministic pseudo-random generator so every run builds the same data.
let seed = 42;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const nouns =
  'coffee tea jazz hiking sushi pasta piano guitar tennis soccer running cycling paris tokyo berlin rome lisbon oslo dog cat rabbit garden novel poetry chess yoga climbing sailing skiing baking painting pottery photography museum opera theatre podcast football basketball marathon kayak camping fishing astronomy chemistry history biology design python rust golang kotlin swift react docker linux window aisle train plane hotel beach mountain forest river lake island desert city village apartment house rent salary budget car bike scooter bus subway ferry'.split(
    ' ',
  );
const verbs = [
  'likes',
  'prefers',
  'dislikes',
  'loves',
  'wants to try',
  'plans to learn',
  'often mentions',
  'avoids',
];
const kinds = ['preference', 'goal', 'fact', 'event', 'relationship', 'decision', 'identity'];
const statement = () => `The user ${pick(verbs)} ${pick(nouns)} and ${pick(nouns)} in ${pick(nouns)}.`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const embedder = createLocalEmbedder();
const results = {
  package: '@mem01/store-memory',
  measured: 'engine.recall on the in-memory store',
  embedder: embedder.model,
  recall: [],
  reconciliation: {},
};

for (const n of sizes) {
  const store = createMemoryStore({ dimensions: embedder.dimensions });
  const scope = { userId: 'bench-user' };
  const at = new Date('2026-01-01T00:00:00.000Z');
  const batch = 2000;
  for (let i = 0; i < n; i += batch) {
    const beliefs = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      beliefs.push(
        createBelief({
          scope,
          kind: pick(kinds),
          subject: 'user',
          attribute: `attr_${j}`,
          value: pick(nouns),
          statement: statement(),
          confidence: 0.5 + rand() / 2,
          source: 'extracted',
          at: new Date(at.getTime() + j * 1000).toISOString(),
        }),
      );
    }
    const vectors = await embedder.embed(beliefs.map((b) => b.statement));
    await store.importBeliefs(beliefs.map((belief, k) => ({ belief, embedding: vectors[k] })));
  }
  const engine = new MemoryEngine({ store, extractor: new KeyValueExtractor(), embedder });
  const times = [];
  const lexOnly = [];
  const engineLex = new MemoryEngine({ store, extractor: new KeyValueExtractor(), embedder: null });
  for (let q = 0; q < QUERIES + WARMUP; q++) {
    const query = `what does the user think about ${pick(nouns)} or ${pick(nouns)}?`;
    let t0 = performance.now();
    await engine.recall(scope, query);
    const t1 = performance.now() - t0;
    t0 = performance.now();
    await engineLex.recall(scope, query);
    const t2 = performance.now() - t0;
    if (q >= WARMUP) {
      times.push(t1);
      lexOnly.push(t2);
    }
  }
  times.sort((a, b) => a - b);
  lexOnly.sort((a, b) => a - b);
  const row = {
    beliefs: n,
    queries: QUERIES,
    p50_ms: +percentile(times, 50).toFixed(3),
    p95_ms: +percentile(times, 95).toFixed(3),
    lexical_only_p50_ms: +percentile(lexOnly, 50).toFixed(3),
    lexical_only_p95_ms: +percentile(lexOnly, 95).toFixed(3),
  };
  results.recall.push(row);
  console.log(
    `recall @ ${String(n).padStart(6)} beliefs: p50 ${row.p50_ms} ms, p95 ${row.p95_ms} ms (lexical only: p50 ${row.lexical_only_p50_ms}, p95 ${row.lexical_only_p95_ms})${n === 10000 ? '   target p95 ≤ 5 ms' : ''}`,
  );
  await engine.close();
  await engineLex.close();
}

// Reconciliation: the pure planner, and end to end through the pipeline (accept → extract → reconcile → commit).
{
  const scope = { userId: 'u', namespace: '' };
  const now = '2026-01-02T00:00:00.000Z';
  const existing = Array.from({ length: 50 }, (_, i) =>
    createBelief({
      scope,
      kind: 'fact',
      subject: 'user',
      attribute: `a${i}`,
      value: 'old',
      statement: 'x',
      confidence: 0.8,
      source: 'extracted',
      at: now,
    }),
  );
  const activeByKey = new Map(existing.map((b) => [`user\u0000${b.attribute}`, b]));
  const turns = [{ id: 't', sessionId: 's', position: 0, role: 'user', text: 'a1=new', at: now }];
  const ops = Array.from({ length: 10 }, (_, i) => ({
    op: 'add',
    kind: 'fact',
    subject: 'user',
    attribute: `a${i * 3}`,
    value: i % 2 ? 'old' : 'new',
    statement: 's',
    confidence: 0.9,
    evidence: [{ turnId: 't', quote: 'a1=new' }],
  }));
  const N = 20000;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    reconcile(
      ops,
      turns,
      { byId: new Map(), activeByKey },
      {
        scope,
        now,
        pendingBelow: 0.5,
        source: 'extracted',
        actor: 'b',
        maxTextBytes: 4096,
        requireGrounding: true,
      },
    );
  }
  const planMs = performance.now() - t0;
  results.reconciliation.plans_per_s = Math.round(N / (planMs / 1000));
  results.reconciliation.operations_per_s = Math.round((N * ops.length) / (planMs / 1000));

  const store = createMemoryStore({ dimensions: embedder.dimensions });
  const engine = new MemoryEngine({ store, extractor: new KeyValueExtractor(), embedder });
  const TURNS = 2000;
  const t1 = performance.now();
  const inputs = [];
  for (let i = 0; i < TURNS; i++) {
    inputs.push({
      scope: { userId: `user-${i % 20}` },
      sessionId: `s-${i}`,
      position: 0,
      role: 'user',
      text: `k${i % 50}=v${i % 7}; city=c${i % 5}`,
      at: now,
    });
  }
  for (let i = 0; i < inputs.length; i += 10) await engine.accept(inputs.slice(i, i + 10));
  await engine.flush();
  const pipeMs = performance.now() - t1;
  results.reconciliation.pipeline_turns_per_s = Math.round(TURNS / (pipeMs / 1000));
  await engine.close();
  console.log(
    `reconciliation: ${results.reconciliation.plans_per_s} plans/s (${results.reconciliation.operations_per_s} operations/s); pipeline end to end: ${results.reconciliation.pipeline_turns_per_s} turns/s (fake extractor, local embedder, 20 users)`,
  );
}

results.node = process.version;
results.at = new Date().toISOString();
const out = join(root, 'bench/results/engine.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${out}`);
