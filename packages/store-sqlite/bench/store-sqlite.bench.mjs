/**
 * @mem01/store-sqlite benchmark (`pnpm bench`): recall latency at 1k/10k/100k beliefs of one user with 384-dimension
 * local embeddings, with and without sqlite-vec; ingest throughput through the engine with a fake extractor; and
 * transcript append/read compared with the Agents SDK's MemorySession in the same run.
 *
 * Imports the built packages (dist). BENCH_MAX=10000 limits the largest size for a quick run.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBelief, MemoryEngine } from '@mem01/engine';
import { LocalEmbedder } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
import { MemorySession } from '@openai/agents';

const here = dirname(fileURLToPath(import.meta.url));
const resultsPath = join(here, '..', '..', '..', 'bench', 'results', 'store-sqlite.json');
const quiet = { info() {}, warn() {} };
const SIZES = [1_000, 10_000, 100_000].filter((n) => n <= Number(process.env.BENCH_MAX ?? 100_000));
/** Queries per size; fewer at 100k, where the exact-cosine scan is slow by design. */
const queriesFor = (size) => (size >= 100_000 ? 25 : 60);

function rng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(42);
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
const syllables = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tor',
  'vas',
  'quin',
  'del',
  'sha',
  'bru',
  'nek',
  'pol',
  'zar',
  'fi',
  'gum',
];
const VOCAB = Array.from({ length: 3000 }, () => pick(syllables) + pick(syllables) + pick(syllables));
const TOPICS = [
  'likes',
  'owns',
  'visited',
  'prefers',
  'works on',
  'studies',
  'cooks',
  'collects',
  'plays',
  'reads',
];

function statementOf(i) {
  return `The user ${pick(TOPICS)} ${pick(VOCAB)} ${pick(VOCAB)} with ${pick(VOCAB)} item ${i}.`;
}

const round = (x) => Math.round(x * 1000) / 1000;

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: round(q(0.5)), p95: round(q(0.95)), n: s.length };
}

async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const fakeExtractor = {
  name: 'bench-fake',
  async extract(request) {
    return {
      operations: request.turns
        .filter((t) => t.role === 'user')
        .map((t) => ({
          op: 'add',
          kind: 'fact',
          subject: 'user',
          attribute: `note_${t.position}_${t.sessionId}`,
          value: t.text.slice(0, 60),
          statement: `The user said ${t.text.slice(0, 80)}`,
          confidence: 0.9,
          evidence: [{ turnId: t.id, quote: t.text.slice(0, 40) }],
        })),
    };
  },
};

const dir = mkdtempSync(join(tmpdir(), 'mem01-sqlite-bench-'));
const results = {
  package: '@mem01/store-sqlite',
  node: process.version,
  date: new Date().toISOString(),
  cpus: cpus().length,
  loadAverageAtStart: loadavg().map(round),
  targets: { recallP95Ms10k: 10, recallP95Ms100k: 50, append10ItemsMedianMs: 1 },
  recall: [],
  ingest: null,
  transcript: null,
};

try {
  // ------------------------------------------------------------------ recall
  const embedder = new LocalEmbedder({ dimensions: 384 });
  const path = join(dir, 'recall.db');
  const scope = { userId: 'bench-user' };
  const vecStore = openSqliteStore({
    path,
    dimensions: 384,
    logger: quiet,
    synchronous: 'normal',
    searchWorkers: 2,
  });
  if (vecStore.vectorMode !== 'sqlite-vec')
    console.warn('sqlite-vec did not load: the "index" figures use exact search');
  let have = 0;
  const statements = [];
  for (const size of SIZES) {
    const buildStart = performance.now();
    const chunk = 5_000;
    while (have < size) {
      const n = Math.min(chunk, size - have);
      const texts = Array.from({ length: n }, (_, k) => statementOf(have + k));
      const vectors = await embedder.embed(texts);
      const at = new Date().toISOString();
      const records = texts.map((statement, k) => ({
        belief: createBelief({
          scope,
          kind: 'fact',
          subject: 'user',
          attribute: `item_${have + k}`,
          value: statement.split(' ').slice(3, 5).join(' '),
          statement,
          confidence: 0.8,
          source: 'import',
          at,
        }),
        embedding: vectors[k],
      }));
      await vecStore.importBeliefs(records);
      statements.push(...texts);
      have += n;
    }
    vecStore.checkpoint();
    const buildMs = performance.now() - buildStart;
    // Half plain keyword questions, half with words that occur in most statements ("user", "likes").
    const queries = Array.from({ length: queriesFor(size) }, (_, i) => {
      const words = pick(statements).split(' ');
      return i % 2 === 0
        ? `what about ${words[3]} and ${words[5]}?`
        : `does the user like ${words[3]} or ${words[4]}?`;
    });
    const queryVectors = await embedder.embed(queries);
    const exactStore = openSqliteStore({ path, vector: 'exact', logger: quiet });
    // The default store runs searches on worker threads; the same searches on the store's own connection are
    // measured beside it (searchWorkers: 0).
    const inlineStore = openSqliteStore({ path, logger: quiet, searchWorkers: 0 });
    for (const [mode, store, searchWorkers] of [
      ['sqlite-vec', vecStore, 2],
      ['sqlite-vec', inlineStore, 0],
      ['exact', exactStore, 2],
    ]) {
      const engine = new MemoryEngine({ store, extractor: fakeExtractor, embedder });
      const lexical = [];
      const vector = [];
      const both = [];
      const recall = [];
      // Warm-up.
      await store.searchLexical(scope, queries[0], { limit: 50 });
      await store.searchVector(scope, queryVectors[0], { limit: 50 });
      for (let i = 0; i < queries.length; i++) {
        const l = await time(() => store.searchLexical(scope, queries[i], { limit: 50 }));
        const v = await time(() => store.searchVector(scope, queryVectors[i], { limit: 50 }));
        lexical.push(l);
        vector.push(v);
        both.push(l + v);
        recall.push(await time(() => engine.recall(scope, queries[i], { limit: 8 })));
      }
      await engine.close();
      const row = {
        beliefs: size,
        vector: searchWorkers ? mode : `${mode} (in-thread)`,
        searchWorkers,
        lexicalMs: stats(lexical),
        vectorMs: stats(vector),
        lexicalPlusVectorMs: stats(both),
        engineRecallMs: stats(recall),
        buildSeconds: store === vecStore ? round(buildMs / 1000) : undefined,
      };
      results.recall.push(row);
      const target =
        size === 10_000 ? ' (target p95 <= 10 ms)' : size === 100_000 ? ' (target p95 <= 50 ms)' : '';
      console.log(
        `recall ${String(size).padStart(6)} beliefs, ${mode.padEnd(10)} (${searchWorkers ? `${searchWorkers} search workers` : 'in-thread'}): store lexical+vector p50 ${row.lexicalPlusVectorMs.p50} ms, p95 ${row.lexicalPlusVectorMs.p95} ms${target}; ` +
          `lexical p95 ${row.lexicalMs.p95} ms, vector p95 ${row.vectorMs.p95} ms; engine.recall p50 ${row.engineRecallMs.p50} ms, p95 ${row.engineRecallMs.p95} ms`,
      );
    }
    await exactStore.close();
    await inlineStore.close();
  }
  results.recallFileBytes = statSync(path).size;
  await vecStore.close();

  // ------------------------------------------------------------------ ingest
  {
    const store = openSqliteStore({ path: join(dir, 'ingest.db'), logger: quiet });
    const engine = new MemoryEngine({ store, extractor: fakeExtractor, embedder });
    const turns = 400;
    const users = ['i1', 'i2', 'i3', 'i4'];
    const inputs = Array.from({ length: turns }, (_, i) => ({
      scope: { userId: users[i % users.length] },
      sessionId: `sess-${i % users.length}`,
      position: i,
      role: 'user',
      text: `I really enjoy ${pick(VOCAB)} and ${pick(VOCAB)} on weekend ${i}`,
      at: new Date().toISOString(),
    }));
    const ms = await time(async () => {
      for (const input of inputs) await engine.accept([input]);
      await engine.flush();
    });
    await engine.close();
    const backlog = await store.backlog({ now: new Date().toISOString() });
    await store.close();
    results.ingest = {
      turns,
      users: users.length,
      seconds: round(ms / 1000),
      turnsPerSecond: Math.round(turns / (ms / 1000)),
      leftQueued: backlog.queued,
      extractor: 'fake (one belief per turn), LocalEmbedder 384',
    };
    console.log(
      `ingest: ${results.ingest.turnsPerSecond} turns/s (${turns} turns, ${users.length} users, accept one by one + extract + embed + commit)`,
    );
  }

  // ------------------------------------------------------------------ transcript
  {
    const turnItems = (i) => [
      { role: 'user', content: `question ${i}: what should I pack for ${pick(VOCAB)}?` },
      ...Array.from({ length: 8 }, (_, k) => ({
        type: 'function_call_result',
        name: 'lookup',
        callId: `call-${i}-${k}`,
        status: 'completed',
        output: { type: 'text', text: `result ${k} for ${pick(VOCAB)} ${pick(VOCAB)}` },
      })),
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: `Pack light for ${pick(VOCAB)}, turn ${i}.` }],
      },
    ];
    const rounds = 300;
    const measure = async (label, synchronous) => {
      const store = openSqliteStore({
        path: join(dir, `transcript-${label}.db`),
        logger: quiet,
        synchronous,
      });
      const owner = { userId: 't-user' };
      const appends = [];
      for (let i = 0; i < rounds; i++) {
        const items = turnItems(i);
        appends.push(
          await time(() =>
            store.appendItems(owner, 't-session', items, {
              enqueue: [
                { index: 0, role: 'user', text: items[0].content, at: new Date().toISOString() },
                { index: 9, role: 'assistant', text: items[9].content[0].text, at: new Date().toISOString() },
              ],
            }),
          ),
        );
      }
      for (let i = 0; i < 20; i++) {
        await store.appendItems(owner, 't-200', turnItems(i));
      }
      const reads = [];
      for (let i = 0; i < 100; i++) reads.push(await time(() => store.getItems(owner, 't-200')));
      if ((await store.getItems(owner, 't-200')).length !== 200) throw new Error('expected 200 items');
      await store.close();
      return { append: stats(appends), read: stats(reads) };
    };
    const full = await measure('full', 'full');
    const normal = await measure('normal', 'normal');
    const mem = new MemorySession();
    const memAppends = [];
    for (let i = 0; i < rounds; i++) {
      const items = turnItems(i);
      memAppends.push(await time(() => mem.addItems(items)));
    }
    const mem200 = new MemorySession();
    for (let i = 0; i < 20; i++) await mem200.addItems(turnItems(i));
    const memReads = [];
    for (let i = 0; i < 100; i++) memReads.push(await time(() => mem200.getItems()));
    const memAppend = stats(memAppends);
    const memRead = stats(memReads);
    results.transcript = {
      append10ItemsMs: {
        sqliteSyncFull: full.append,
        sqliteSyncNormal: normal.append,
        memorySession: memAppend,
      },
      getItems200Ms: { sqlite: full.read, memorySession: memRead },
      ratios: {
        append10SqliteFullOverMemorySession: round(full.append.p50 / memAppend.p50),
        append10SqliteNormalOverMemorySession: round(normal.append.p50 / memAppend.p50),
        getItems200SqliteOverMemorySession: round(full.read.p50 / memRead.p50),
      },
      note: 'sqlite appends include the outbox enqueue of the user and assistant turns in the same transaction',
    };
    console.log(
      `transcript append 10 items (+2 outbox turns): median ${full.append.p50} ms synchronous=FULL, ${normal.append.p50} ms NORMAL (target <= 1 ms); ` +
        `MemorySession ${memAppend.p50} ms; ratio ${results.transcript.ratios.append10SqliteFullOverMemorySession}x / ${results.transcript.ratios.append10SqliteNormalOverMemorySession}x`,
    );
    console.log(
      `transcript getItems() of 200 items: median ${full.read.p50} ms; MemorySession ${memRead.p50} ms; ratio ${results.transcript.ratios.getItems200SqliteOverMemorySession}x`,
    );
  }

  results.loadAverageAtEnd = loadavg().map(round);
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${resultsPath}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
