// Engine recall latency, figures, not pass/fail. Run: pnpm --filter @mem01/eval bench (after pnpm build).
// It lives in apps/eval because it needs the stores, the local embedder and mem01session together.
// Parts (BENCH_PARTS, comma-separated, default all):
// - `beliefs`: engine.recall over 1k / 10k / 100k beliefs of one user in the in-memory store (BENCH_SIZES);
// - `reconciliation`: planner and pipeline throughput. These two write bench/results/engine.json;
// - `episodes`: engine.recall at 10k extracted beliefs + 10k episodes of one user, on the in-memory and SQLite
//   stores, the engine opened by mem01session's openMemoryRuntime with only the store injected (so the ranking
//   memSession uses by default is what is measured). Writes bench/results/engine-episodes.json;
// - `long-turns`: engine.recall on haystacks shaped like LongMemEval_S's (about 50 sessions and 250 user turns per
//   user, most turns long: a few hundred bytes to 16 KB, pasted text and lists), in the in-memory store, each question
//   asked of a user once (a cold user, as in the dev60 eval) and then again (warm). Writes
//   bench/results/engine-long-turns.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBelief, MemoryEngine } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { createLocalEmbedder } from '@mem01/local';
import { createMemoryStore } from '@mem01/store-memory';
import { openSqliteStore } from '@mem01/store-sqlite';
import { openMemoryRuntime } from 'mem01session';
// The planner is internal to the engine (no export names it); the bench measures it from the engine's build.
import { reconcile } from '../../../packages/engine/dist/reconcile.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const sizes = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const parts = new Set((process.env.BENCH_PARTS ?? 'beliefs,reconciliation,episodes,long-turns').split(','));
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

for (const n of parts.has('beliefs') ? sizes : []) {
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
if (parts.has('reconciliation')) {
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

if (parts.has('beliefs') || parts.has('reconciliation')) {
  results.node = process.version;
  results.at = new Date().toISOString();
  const out = join(root, 'bench/results/engine.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

if (parts.has('episodes')) await episodesBench();
if (parts.has('long-turns')) await longTurnsBench();

// ---------------------------------------------------------------- 10k beliefs + 10k episodes, one user

/**
 * What one user said over ~2 years: 500 sessions of 20 turns, each a plausible chat message, with the belief an
 * extractor would draw from it (kind, subject, key, value, statement).
 */
function conversationTurns(count) {
  const city =
    'Lisbon Tokyo Berlin Oslo Rome Montreal Nairobi Lima Seoul Porto Kyoto Vienna Dublin Austin Hanoi'.split(
      ' ',
    );
  const relation = [
    'sister',
    'brother',
    'mum',
    'dad',
    'partner',
    'roommate',
    'manager',
    'neighbour',
    'cousin',
    'best friend',
  ];
  const activity =
    'hiking climbing running swimming kayaking cycling pottery yoga salsa baking sailing chess'.split(' ');
  const place = [
    'lake',
    'harbour',
    'market',
    'museum',
    'old bakery',
    'climbing gym',
    'river trail',
    'beach',
    'jazz bar',
  ];
  const dish = 'ramen lasagne curry paella tacos risotto dumplings shakshuka pho falafel'.split(' ');
  const food = [
    'coffee',
    'oat milk',
    'spicy food',
    'sushi',
    'cheese',
    'red wine',
    'dark chocolate',
    'mushrooms',
    'olives',
  ];
  const topic = [
    'Roman history',
    'climate policy',
    'sourdough',
    'chemistry',
    'jazz piano',
    'urban design',
    'astronomy',
  ];
  const project = ['billing migration', 'mobile app', 'onboarding flow', 'data warehouse', 'search rewrite'];
  const day = 'Monday Tuesday Wednesday Thursday Friday Saturday Sunday weekend'.split(' ');
  const month = 'January February March April May June July August September October November December'.split(
    ' ',
  );
  const fact = (kind, subject, attribute, value, statement) => ({
    kind,
    subject,
    attribute,
    value,
    statement,
  });
  const templates = [
    () => {
      const [a, p, c, r] = [pick(activity), pick(place), pick(city), pick(relation)];
      return [
        `I went ${a} at the ${p} near ${c} with my ${r} last ${pick(day)}, and it rained the whole time.`,
        fact(
          'event',
          'user',
          'recent_outing',
          `${a} near ${c}`,
          `The user went ${a} near ${c} with their ${r}.`,
        ),
      ];
    },
    () => {
      const [r, a, m] = [pick(relation), pick(activity), pick(month)];
      return [
        `My ${r} just started ${a} classes, and honestly I might join them in ${m}.`,
        fact('fact', r, 'hobby', a, `The user's ${r} takes ${a} classes.`),
      ];
    },
    () => {
      const [c, m, r, p] = [pick(city), pick(month), pick(relation), pick(place)];
      return [
        `We're thinking about a trip to ${c} in ${m}; my ${r} really wants to see the ${p}.`,
        fact('goal', 'user', 'planned_trip', `${c} in ${m}`, `The user plans a trip to ${c} in ${m}.`),
      ];
    },
    () => {
      const t = pick(topic);
      return [
        `I finally finished that book about ${t}. It changed how I think about ${pick(topic)} a bit.`,
        fact('event', 'user', 'book_read', t, `The user read a book about ${t}.`),
      ];
    },
    () => {
      const [p, m] = [pick(project), pick(month)];
      return [
        `Work has been hectic: the ${p} launch slipped to ${m} and my manager wants a new plan by ${pick(day)}.`,
        fact('fact', 'user', 'work_project', p, `The user's ${p} launch moved to ${m}.`),
      ];
    },
    () => {
      const d = pick(dish);
      return [
        `I cooked ${d} for dinner yesterday and it was way better than the one at the ${pick(place)}.`,
        fact('preference', 'user', 'favourite_dish', d, `The user likes cooking ${d}.`),
      ];
    },
    () => {
      const [r, c] = [pick(relation), pick(city)];
      return [
        `Can you remind me to call my ${r} about the ${c} trip on ${pick(day)}?`,
        fact('goal', 'user', 'todo_call', r, `The user wants to call their ${r} about the ${c} trip.`),
      ];
    },
    () => {
      const [x, y] = [pick(food), pick(food)];
      return [
        `I don't really drink ${x} anymore, I'd rather have ${y} these days.`,
        fact('preference', 'user', 'preferred_food', y, `The user prefers ${y} to ${x}.`),
      ];
    },
    () => {
      const [a, c, m] = [pick(activity), pick(city), pick(month)];
      return [
        `Quick update: I signed up for a ${a} course in ${c}, it starts in ${m} and costs more than I hoped.`,
        fact(
          'decision',
          'user',
          'course',
          `${a} in ${c}`,
          `The user signed up for a ${a} course in ${c} starting in ${m}.`,
        ),
      ];
    },
    () => {
      const [r, c, t] = [pick(relation), pick(city), pick(topic)];
      return [
        `Thanks, that helps. My ${r} says hi, by the way: they're moving to ${c} for a job in ${t}.`,
        fact('relationship', r, 'home_city', c, `The user's ${r} is moving to ${c}.`),
      ];
    },
  ];
  const start = Date.parse('2024-01-06T18:30:00.000Z');
  const turns = [];
  for (let i = 0; i < count; i++) {
    const session = Math.floor(i / 20);
    const at = new Date(start + session * 1.4 * 86_400_000 + (i % 20) * 60_000).toISOString();
    const [text, belief] = pick(templates)();
    turns.push({ sessionId: `chat${session}`, position: (i % 20) * 2, at, text, belief });
  }
  return turns;
}

/** The beliefs an extractor would draw from those turns, each citing its turn (keys made unique so all stay active). */
function extractedBeliefs(scope, turns, count) {
  const out = [];
  for (let j = 0; j < count; j++) {
    const turn = turns[j % turns.length];
    const b = turn.belief;
    out.push(
      createBelief({
        scope,
        kind: b.kind,
        subject: b.subject,
        attribute: `${b.attribute}_${j}`,
        value: b.value,
        statement: b.statement,
        confidence: 0.6 + rand() * 0.4,
        source: 'extracted',
        validFrom: b.kind === 'event' ? turn.at : null,
        evidence: [
          {
            sessionId: turn.sessionId,
            position: turn.position,
            role: 'user',
            quote: turn.text.slice(0, 80),
            at: turn.at,
          },
        ],
        at: turn.at,
      }),
    );
  }
  return out;
}

/**
 * The episodes the engine keeps of those turns: the turn verbatim, on its own key, dated. `maxTextBytes`: the
 * longest text allowed (createBelief's default unless given).
 */
function episodeBeliefs(scope, turns, maxTextBytes = undefined) {
  return turns.map((t) =>
    createBelief(
      {
        scope,
        kind: 'episode',
        subject: 'user',
        attribute: `episode:${t.sessionId}:${t.position}`,
        value: t.text,
        statement: t.text,
        confidence: 1,
        source: 'extracted',
        validFrom: t.at,
        evidence: [{ sessionId: t.sessionId, position: t.position, role: 'user', quote: t.text, at: t.at }],
        at: t.at,
      },
      maxTextBytes,
    ),
  );
}

function userQuestion() {
  const qs = [
    () => `What did I say about the trip to ${pick(['Lisbon', 'Tokyo', 'Oslo', 'Kyoto', 'Lima'])}?`,
    () => `Do I still like ${pick(['coffee', 'sushi', 'red wine', 'spicy food', 'olives'])}?`,
    () => `What is my ${pick(['sister', 'partner', 'manager', 'cousin'])} up to these days?`,
    () => `When did I last go ${pick(['hiking', 'kayaking', 'climbing', 'sailing'])}?`,
    () =>
      `Remind me what happened with the ${pick(['billing migration', 'mobile app', 'search rewrite'])} launch.`,
    () =>
      `Any ideas for dinner tonight? I liked the ${pick(['ramen', 'curry', 'paella', 'dumplings'])} last time.`,
    () => `Which book was I reading about ${pick(['Roman history', 'astronomy', 'jazz piano'])}?`,
  ];
  return pick(qs)();
}

async function episodesBench() {
  const load = [loadavg().map((x) => +x.toFixed(2))];
  const report = {
    benchmark: 'engine.recall at 10k extracted beliefs + 10k episodes of one user (memSession runtime)',
    runtime: 'openMemoryRuntime({ store, env: {} }): offline @mem01/local models, memSession defaults',
    recall: [],
  };
  const scope = { userId: 'bench-user' };
  const BELIEFS = 10_000;
  const EPISODES = 10_000;
  seed = 7;
  const turns = conversationTurns(EPISODES);
  const records = [...episodeBeliefs(scope, turns), ...extractedBeliefs(scope, turns, BELIEFS)];
  const vectors = await embedder.embed(records.map((b) => b.statement));
  const inserts = records.map((belief, k) => ({ belief, embedding: vectors[k] }));
  const queries = Array.from({ length: QUERIES + WARMUP }, userQuestion);
  const dir = mkdtempSync(join(tmpdir(), 'mem01-bench-'));
  try {
    // BENCH_STORES (e.g. `memory`) picks stores; BENCH_ENGINE (JSON engine settings) measures a variant, not the default.
    for (const kind of (process.env.BENCH_STORES ?? 'memory,sqlite').split(',')) {
      const store =
        kind === 'memory'
          ? createMemoryStore({ dimensions: embedder.dimensions })
          : openSqliteStore({ path: join(dir, 'bench.db'), dimensions: embedder.dimensions });
      for (let i = 0; i < inserts.length; i += 2000) await store.importBeliefs(inserts.slice(i, i + 2000));
      const variant = process.env.BENCH_ENGINE ? { engine: JSON.parse(process.env.BENCH_ENGINE) } : {};
      const runtime = await openMemoryRuntime({ store, env: {}, ...variant });
      const { engine } = runtime;
      if (!engine.config.episodic)
        console.warn('note: the runtime default has episodes off; they are not recalled');
      const recallMs = [];
      const contextMs = [];
      let returned = 0;
      let episodes = 0;
      for (let q = 0; q < queries.length; q++) {
        let t0 = performance.now();
        const hits = await engine.recall(scope, queries[q]);
        const t1 = performance.now() - t0;
        t0 = performance.now();
        await engine.context(scope, queries[q], { blockBytes: runtime.blockBytes });
        const t2 = performance.now() - t0;
        if (q >= WARMUP) {
          recallMs.push(t1);
          contextMs.push(t2);
          returned += hits.length;
          episodes += hits.filter((h) => h.belief.kind === 'episode').length;
        }
      }
      recallMs.sort((a, b) => a - b);
      contextMs.sort((a, b) => a - b);
      const row = {
        store: kind,
        capabilities: `${store.capabilities.lexicalIndex}, ${store.capabilities.vectorIndex}`,
        beliefs: BELIEFS,
        episodes: EPISODES,
        queries: QUERIES,
        recallLimit: engine.config.recallLimit,
        episodic: engine.config.episodic,
        recallMs: { p50: +percentile(recallMs, 50).toFixed(3), p95: +percentile(recallMs, 95).toFixed(3) },
        contextMs: { p50: +percentile(contextMs, 50).toFixed(3), p95: +percentile(contextMs, 95).toFixed(3) },
        meanReturned: +(returned / QUERIES).toFixed(2),
        episodeShareOfResults: returned === 0 ? 0 : +(episodes / returned).toFixed(3),
      };
      report.recall.push(row);
      const target = kind === 'memory' ? 5 : 10;
      console.log(
        `recall @ 10k beliefs + 10k episodes, ${kind}: p50 ${row.recallMs.p50} ms, p95 ${row.recallMs.p95} ms (target p95 ≤ ${target} ms); block p95 ${row.contextMs.p95} ms; ${row.meanReturned} results, ${(row.episodeShareOfResults * 100).toFixed(0)}% episodes`,
      );
      await runtime.close();
      await store.close();
      load.push(loadavg().map((x) => +x.toFixed(2)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report.loadAverage = load[0];
  report.loadAverageAfter = load[load.length - 1];
  report.loadAverageNote = '1/5/15-minute load averages before and after: the machine is shared (2 cores)';
  report.cpus = cpus().length;
  report.embedder = embedder.model;
  report.node = process.version;
  report.at = new Date().toISOString();
  const out = join(root, 'bench/results/engine-episodes.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

// ---------------------------------------------------------------- long turns, LongMemEval_S-shaped

/**
 * One long user turn: a request with context, the way users write to an assistant (a question, what they did, a
 * pasted list or paragraph). Lengths follow LongMemEval_S's user turns: most a few hundred bytes, a tail to 16 KB.
 */
function longTurn() {
  const topic = pick([
    'sourdough starter',
    'marathon training plan',
    'kitchen renovation',
    'job interview at a fintech startup',
    'trip to Kyoto in April',
    'vegetable garden',
    'photography course',
    'budget spreadsheet',
    'wedding playlist',
    'python data pipeline',
    'cat adoption',
    'piano practice routine',
    'camping gear list',
    'french lessons',
  ]);
  const sentences = [
    () => `I've been working on my ${topic} for a few weeks now and I'm not sure what to do next.`,
    () =>
      `Last ${pick(['Saturday', 'Tuesday', 'month', 'weekend'])} I spent about ${1 + Math.floor(rand() * 9)} hours on it with my ${pick(['sister', 'partner', 'roommate', 'colleague'])}.`,
    () => `Can you suggest a few ${pick(['ideas', 'resources', 'steps', 'tools'])} for the ${topic}?`,
    () =>
      `For context, I ${pick(['live', 'work', 'study'])} in ${pick(['Lisbon', 'Austin', 'Seoul', 'Dublin', 'Lima'])} and I usually have ${pick(['mornings', 'evenings', 'weekends'])} free.`,
    () =>
      `Here is what I have so far: ${Array.from({ length: 3 + Math.floor(rand() * 6) }, () => `${pick(nouns)} ${pick(nouns)}`).join(', ')}.`,
    () => `The ${pick(nouns)} part went well, but the ${pick(nouns)} was harder than I expected.`,
    () => `My budget is around $${(1 + Math.floor(rand() * 40)) * 50} and I would rather not go over it.`,
    () => `I remember you mentioned ${pick(nouns)} and ${pick(nouns)} last time, which helped.`,
  ];
  const r = rand();
  const bytes = r < 0.6 ? 200 + rand() * 400 : r < 0.9 ? 600 + rand() * 2400 : 3000 + rand() * 13000;
  let text = '';
  while (text.length < bytes) {
    text += `${pick(sentences)()} `;
    if (rand() < 0.15) text += '\n\n';
  }
  return { text: text.trim(), topic };
}

async function longTurnsBench() {
  const loadBefore = loadavg().map((x) => +x.toFixed(2));
  const USERS = Number(process.env.BENCH_LONG_USERS ?? 20);
  const SESSIONS = 50;
  const USER_TURNS = 5;
  seed = 11;
  const store = createMemoryStore({ dimensions: embedder.dimensions });
  const users = [];
  let totalBytes = 0;
  let episodes = 0;
  for (let u = 0; u < USERS; u++) {
    const scope = { userId: `long-${u}` };
    const turns = [];
    for (let s = 0; s < SESSIONS; s++) {
      const at = new Date(Date.UTC(2023, 0, 1) + s * 3 * 86_400_000).toISOString();
      // User turns at even positions; the assistant's (odd positions) are never episodes.
      for (let t = 0; t < USER_TURNS; t++) {
        const { text, topic } = longTurn();
        totalBytes += Buffer.byteLength(text);
        turns.push({ sessionId: `u${u}s${s}`, position: t * 2, at, text, topic });
      }
    }
    // The engine keeps episodes up to its maxTextBytes (16 KB by default), above createBelief's default limit.
    const records = episodeBeliefs(scope, turns, 16_384);
    episodes += records.length;
    const vectors = await embedder.embed(records.map((b) => b.statement));
    await store.importBeliefs(records.map((belief, k) => ({ belief, embedding: vectors[k] })));
    users.push({ scope, turns });
  }
  const runtime = await openMemoryRuntime({ store, env: {} });
  const { engine } = runtime;
  const cold = [];
  const warm = [];
  const context = [];
  // CPU time of the process across the recalls, beside the wall-clock percentiles (the machine is shared).
  const cpu = { cold: 0, warm: 0 };
  for (const { scope, turns } of users) {
    for (let q = 0; q < 15; q++) {
      const turn = pick(turns);
      const question = pick([
        `What did I say about my ${turn.topic}?`,
        `How much was my budget for the ${turn.topic}?`,
        `Who helped me with the ${turn.topic}?`,
      ]);
      let t0 = performance.now();
      const c0 = process.cpuUsage();
      await engine.recall(scope, question);
      (q === 0 ? cold : warm).push(performance.now() - t0);
      const c1 = process.cpuUsage(c0);
      cpu[q === 0 ? 'cold' : 'warm'] += (c1.user + c1.system) / 1000;
      t0 = performance.now();
      await engine.context(scope, question, { blockBytes: runtime.blockBytes });
      context.push(performance.now() - t0);
    }
  }
  await runtime.close();
  await store.close();
  const stats = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return {
      p50: +percentile(sorted, 50).toFixed(3),
      p95: +percentile(sorted, 95).toFixed(3),
      n: sorted.length,
    };
  };
  const report = {
    benchmark:
      'engine.recall on LongMemEval_S-shaped haystacks: long user turns kept as episodes (memSession runtime)',
    runtime:
      'openMemoryRuntime({ store, env: {} }): offline @mem01/local models, memSession defaults, in-memory store',
    users: USERS,
    episodesPerUser: SESSIONS * USER_TURNS,
    meanTurnBytes: Math.round(totalBytes / episodes),
    recall: [
      {
        store: 'memory',
        case: 'first question of a user (cold)',
        episodes: SESSIONS * USER_TURNS,
        recallMs: stats(cold),
        meanCpuMs: +(cpu.cold / cold.length).toFixed(3),
      },
      {
        store: 'memory',
        case: 'later questions (warm)',
        episodes: SESSIONS * USER_TURNS,
        recallMs: stats(warm),
        meanCpuMs: +(cpu.warm / warm.length).toFixed(3),
      },
    ],
    contextMs: stats(context),
    loadAverage: loadBefore,
    loadAverageAfter: loadavg().map((x) => +x.toFixed(2)),
    loadAverageNote: '1/5/15-minute load averages before and after: the machine is shared (2 cores)',
    cpus: cpus().length,
    node: process.version,
    at: new Date().toISOString(),
  };
  for (const row of report.recall) {
    console.log(
      `long turns (${report.meanTurnBytes} bytes mean), ${row.case}: p50 ${row.recallMs.p50} ms, p95 ${row.recallMs.p95} ms, mean CPU ${row.meanCpuMs} ms`,
    );
  }
  const out = join(root, 'bench/results/engine-long-turns.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${out}`);
}
