// Ingestion cost benchmark: feeds the demo fixture through the fake OpenAI server and counts, per ingested user
// turn, LLM calls, input/output tokens (the fake counts chars/4 of what it received and sent) and embedding
// requests, for mem01 unbatched, mem01 batched by 4 user turns, and a simulated two-calls-per-add pattern
// (extract facts, then decide updates); then tokens per turn on LoCoMo turns through the engine (bench/locomo-turns.mjs;
// MEM01_LOCOMO names the data file, MEM01_LOCOMO_TURNS the number of turns, default 200).
// Usage: node bench/ingest.bench.mjs [fixture.json]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import {
  createOpenAIEmbedder,
  createOpenAIExtractor,
  EXTRACTION_INSTRUCTIONS,
  extractionTextFormat,
} from '../dist/index.js';
import { quotingResponder, startFakeOpenAI } from '../dist/testing/index.js';
import { LOCOMO_TARGETS, runLocomoTurns } from './locomo-turns.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const notes = [];

// ---------------------------------------------------------------- fixture
const BUILT_IN = [
  ['Hi! My name is Maya Chen and I live in Seattle.', 'Nice to meet you, Maya.'],
  ['I work as a nurse at Harborview hospital.', 'That sounds demanding.'],
  ['I pay $1,900 rent for my apartment.', 'Seattle rents are high.'],
  ['I am vegetarian, no meat at all.', 'Noted, I will suggest vegetarian recipes.'],
  ['My sister Ana lives in Portland.', 'Do you visit her often?'],
  ['I moved to Tacoma last week.', 'How is the new place?'],
  ['I prefer aisle seats on flights.', 'Good to know for bookings.'],
  ['My goal is to run a marathon this year.', 'Great goal!'],
];
const fixturePath =
  process.argv[2] ?? process.env.MEM01_FIXTURE ?? join(repoRoot, 'fixtures/conversations.json');
let conversations;
let fixtureName;
if (existsSync(fixturePath)) {
  const doc = JSON.parse(readFileSync(fixturePath, 'utf8'));
  const list = Array.isArray(doc) ? doc : doc.conversations;
  conversations = list.map((c, i) => ({
    user: c.user,
    assistant: c.assistant,
    at: c.at ?? new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
  }));
  fixtureName = fixturePath.startsWith(repoRoot) ? fixturePath.slice(repoRoot.length + 1) : fixturePath;
} else {
  conversations = BUILT_IN.map(([user, assistant], i) => ({
    user,
    assistant,
    at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
  }));
  fixtureName = 'built-in (8 conversations)';
  notes.push(`fixture ${fixturePath} not found; used the built-in list of 8 conversations`);
}
const userTurns = conversations.length;

// ---------------------------------------------------------------- a deterministic stand-in model
// quotingResponder answers like a frugal model would: one operation per user turn, quoting the turn, confirming or
// superseding a candidate with the same attribute. Output sizes are realistic in shape, not in exact length.
const mem01Responder = quotingResponder();
function firstClause(text) {
  const clause = text.split(/[.!?;]/).find((s) => s.trim().split(/\s+/).length >= 3) ?? text;
  return clause.trim().split(/\s+/).slice(0, 12).join(' ');
}

const fake = await startFakeOpenAI({
  embeddingDimensions: 256,
  responses: (request) => {
    const body = request.body;
    if (body?.text?.format?.name === 'belief_operations') return mem01Responder(request);
    // Baseline calls: echo a facts list or an update decision of similar size.
    const marker = body?.metadata?.step;
    if (marker === 'facts') {
      const text = String(body.input ?? '');
      return { facts: [firstClause(text.split('\n').pop() ?? '')] };
    }
    return { memory: [{ id: '0', text: 'updated fact', event: 'ADD' }] };
  },
});

function countsSince(start) {
  const reqs = fake.requests.slice(start);
  const responses = reqs.filter((r) => r.endpoint === 'responses');
  return { responses, embeddings: reqs.filter((r) => r.endpoint === 'embeddings').length };
}

function pct(values, p) {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

// The static prefix (instructions + schema) is identical in every call: the provider's prompt cache bills it at a
// discount after the first call. What remains is the per-turn ("dynamic") part.
const MEM01_STATIC = Math.ceil(
  (EXTRACTION_INSTRUCTIONS.length + JSON.stringify(extractionTextFormat()).length) / 4,
);
const BASELINE_STATIC = Math.ceil(EXTRACTION_INSTRUCTIONS.length / 4);

function summarize(name, start, outputTokens, extra = {}, staticPerCall = MEM01_STATIC) {
  const { responses, embeddings } = countsSince(start);
  const input = responses.map((r) => r.inputTokens);
  const inputTokens = input.reduce((a, b) => a + b, 0);
  return {
    name,
    userTurns,
    llmCalls: responses.length,
    llmCallsPerUserTurn: round(responses.length / userTurns),
    inputTokensPerUserTurn: Math.round(inputTokens / userTurns),
    staticPrefixTokensPerCall: staticPerCall,
    dynamicInputTokensPerUserTurn: Math.round((inputTokens - staticPerCall * responses.length) / userTurns),
    outputTokensPerUserTurn: Math.round(outputTokens / userTurns),
    inputTokensPerCall: { p50: pct(input, 50), p95: pct(input, 95) },
    embeddingCalls: embeddings,
    embeddingCallsPerUserTurn: round(embeddings / userTurns),
    ...extra,
  };
}
const round = (x) => Math.round(x * 1000) / 1000;

/** The OpenAI extractor and embedder on the fake server; `usage.outputTokens` sums what the extractor reports. */
function fakeProviders(turnsPerBatch) {
  const usage = { outputTokens: 0 };
  const extractor = createOpenAIExtractor({
    apiKey: 'sk-bench-not-a-real-key-000000',
    baseURL: fake.url,
    batchChars: turnsPerBatch > 1 ? 6000 : 0,
    onUsage: (e) => {
      usage.outputTokens += e.usage.outputTokens ?? 0;
    },
  });
  const embedder = createOpenAIEmbedder({
    apiKey: 'sk-bench-not-a-real-key-000000',
    baseURL: fake.url,
    dimensions: 256,
  });
  return { extractor, embedder, usage };
}

// ---------------------------------------------------------------- mem01, extractor driven directly
async function direct(turnsPerBatch) {
  const start = fake.requests.length;
  const { extractor, embedder, usage } = fakeProviders(turnsPerBatch);
  /** @type {{id:string, kind:string, subject:string, attribute:string, value:string, statement:string, confidence:number, storedAt:string, vector: Float32Array}[]} */
  const beliefs = [];
  let n = 0;
  for (let i = 0; i < conversations.length; i += turnsPerBatch) {
    const batch = conversations.slice(i, i + turnsPerBatch);
    const turns = batch.flatMap((c, j) => [
      { id: `e${n++}`, sessionId: 's', position: 2 * (i + j), role: 'user', text: c.user, at: c.at },
      ...(turnsPerBatch > 1
        ? [
            {
              id: `e${n++}`,
              sessionId: 's',
              position: 2 * (i + j) + 1,
              role: 'assistant',
              text: c.assistant,
              at: c.at,
            },
          ]
        : []),
    ]);
    // Candidate recall as the engine does it: one query embedding for the batch's user text.
    const query = batch.map((c) => c.user).join('\n');
    const [qv] = await embedder.embed([query]);
    const candidates = beliefs
      .map((b) => ({ b, s: dot(b.vector, qv) }))
      // The engine's floor: a vector match below minSimilarity alone does not make a belief a candidate.
      .filter(({ s }) => s >= embedder.minSimilarity)
      .sort((a, b) => b.s - a.s)
      .slice(0, 20)
      .map(({ b }) => b);
    const result = await extractor.extract({
      scope: { userId: 'demo' },
      turns,
      candidates,
      now: batch[0].at,
    });
    const added = [];
    for (const op of result.operations) {
      if (op.op === 'add')
        added.push({ ...op, id: `b${beliefs.length + added.length}`, storedAt: batch[0].at, vector: null });
      else if (op.op === 'supersede') {
        const old = beliefs.findIndex((b) => b.id === op.id);
        const prev = beliefs[old];
        beliefs.splice(old, 1);
        added.push({
          ...prev,
          value: op.value,
          statement: op.statement,
          id: `b${beliefs.length + added.length}x`,
        });
      }
    }
    if (added.length > 0) {
      const vectors = await embedder.embed(added.map((b) => b.statement));
      added.forEach((b, k) => {
        beliefs.push({ ...b, vector: vectors[k] });
      });
    }
  }
  return summarize(
    `mem01 direct, ${turnsPerBatch === 1 ? 'unbatched' : `batches of ${turnsPerBatch} user turns`}`,
    start,
    usage.outputTokens,
    {
      beliefs: beliefs.length,
    },
  );
}
function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

// ---------------------------------------------------------------- mem01 through the engine (if built)
async function throughEngine(turnsPerBatch) {
  let engineMod;
  let storeMod;
  try {
    engineMod = await import('@mem01/engine');
    const storePath = join(repoRoot, 'packages/store-memory/dist/index.js');
    if (!engineMod.MemoryEngine || !existsSync(storePath))
      throw new Error('engine or store-memory not built');
    storeMod = await import(pathToFileURL(storePath).href);
  } catch (err) {
    notes.push(`engine run skipped: ${err.message}`);
    return null;
  }
  const start = fake.requests.length;
  const { extractor, embedder, usage } = fakeProviders(turnsPerBatch);
  const store = storeMod.createMemoryStore();
  const engine = new engineMod.MemoryEngine({
    store,
    extractor,
    embedder,
    config: { maxBatchTurns: Math.max(1, turnsPerBatch * 2) },
  });
  const scope = { userId: 'demo' };
  try {
    const inputs = conversations.flatMap((c, i) => [
      { scope, sessionId: 'bench', position: 2 * i, role: 'user', text: c.user, at: c.at },
      { scope, sessionId: 'bench', position: 2 * i + 1, role: 'assistant', text: c.assistant, at: c.at },
    ]);
    // Accept everything first so the worker sees full batches, as a busy user's queue would.
    for (const input of inputs) await store.enqueue([input]);
    await engine.resume();
    await engine.flush(scope);
    const stats = engine.stats();
    const active = await store.list(scope, { limit: 1000 });
    return summarize(
      `mem01 MemoryEngine + store-memory, ${turnsPerBatch === 1 ? 'unbatched' : `batches of ${turnsPerBatch} user turns`}`,
      start,
      usage.outputTokens,
      {
        beliefs: active.items.length,
        engineStats: {
          llmCalls: stats.llmCalls,
          embeddingCalls: stats.embeddingCalls,
          failures: stats.failures,
        },
      },
    );
  } catch (err) {
    notes.push(`engine run failed: ${err?.message ?? err}`);
    return null;
  } finally {
    await engine.close?.().catch?.(() => undefined);
  }
}

// ---------------------------------------------------------------- the two-calls-per-add pattern (simulated)
// Call 1 extracts facts from the turn; each fact is embedded and searched; call 2 decides ADD/UPDATE/DELETE against
// the retrieved memories. Same fake, same instruction size as mem01's prompt, same candidates.
async function twoCallBaseline() {
  const start = fake.requests.length;
  const client = new OpenAI({ apiKey: 'sk-bench-not-a-real-key-000000', baseURL: fake.url, maxRetries: 0 });
  const memories = [];
  let outputTokens = 0;
  for (const c of conversations) {
    const r1 = await client.responses.create({
      model: 'baseline',
      instructions: EXTRACTION_INSTRUCTIONS,
      input: `user: ${c.user}\nassistant: ${c.assistant}\n${c.user}`,
      metadata: { step: 'facts' },
      store: false,
    });
    outputTokens += r1.usage?.output_tokens ?? 0;
    const facts = JSON.parse(r1.output_text).facts;
    const related = [];
    for (const f of facts) {
      // One embedding request per fact, then a vector search.
      await client.embeddings.create({ model: 'text-embedding-3-small', input: f, dimensions: 256 });
      related.push(...memories.slice(-20));
    }
    const r2 = await client.responses.create({
      model: 'baseline',
      instructions: EXTRACTION_INSTRUCTIONS,
      input: JSON.stringify({ existing: related.slice(0, 20), new_facts: facts }),
      metadata: { step: 'update' },
      store: false,
    });
    outputTokens += r2.usage?.output_tokens ?? 0;
    for (const f of facts) {
      await client.embeddings.create({ model: 'text-embedding-3-small', input: f, dimensions: 256 });
      memories.push({ id: String(memories.length), text: f });
    }
  }
  return summarize(
    'two calls per add (simulated: extract, then decide updates)',
    start,
    outputTokens,
    {},
    BASELINE_STATIC,
  );
}

// ---------------------------------------------------------------- run
const t0 = performance.now();
const results = [];
results.push(await direct(1));
results.push(await direct(4));
const e1 = await throughEngine(1);
if (e1) results.push(e1);
const e4 = await throughEngine(4);
if (e4) results.push(e4);
const baseline = await twoCallBaseline();
results.push(baseline);
await fake.close();

// LoCoMo turns (issue 25.2): see bench/locomo-turns.mjs for the method.
const locomoPath = process.env.MEM01_LOCOMO ?? join(repoRoot, '../shared/bench/locomo10.json');
const locomoLimit = Number(process.env.MEM01_LOCOMO_TURNS ?? 200);
const locomo = [];
for (const reference of ['local', 'dense']) {
  const r = await runLocomoTurns({ path: locomoPath, limit: locomoLimit, notes, reference });
  if (r) locomo.push(r);
}

const unbatched = results[0];
const batched = results[1];
const ratios = {
  batchedVsUnbatchedLlmCalls: round(batched.llmCallsPerUserTurn / unbatched.llmCallsPerUserTurn),
  unbatchedVsBaselineLlmCalls: round(unbatched.llmCallsPerUserTurn / baseline.llmCallsPerUserTurn),
  batchedVsBaselineInputTokens: round(batched.inputTokensPerUserTurn / baseline.inputTokensPerUserTurn),
  unbatchedVsBaselineInputTokens: round(unbatched.inputTokensPerUserTurn / baseline.inputTokensPerUserTurn),
  batchedVsBaselineDynamicInputTokens: round(
    batched.dynamicInputTokensPerUserTurn / baseline.dynamicInputTokensPerUserTurn,
  ),
  unbatchedVsBaselineDynamicInputTokens: round(
    unbatched.dynamicInputTokensPerUserTurn / baseline.dynamicInputTokensPerUserTurn,
  ),
};
const targets = {
  unbatchedLlmCallsPerUserTurnMax: 1,
  batchedLlmCallsPerUserTurnMax: 0.3,
  unbatchedMet: unbatched.llmCallsPerUserTurn <= 1,
  batchedMet: batched.llmCallsPerUserTurn <= 0.3,
  locomoDynamicInputTokensPerTurnMax: LOCOMO_TARGETS.dynamicInputTokensPerTurnMax,
  locomoOutputTokensPerTurnMax: LOCOMO_TARGETS.outputTokensPerTurnMax,
  locomoMet: locomo.length > 0 ? locomo.every((r) => r.targets.dynamicInputMet && r.targets.outputMet) : null,
};

console.log(`\n@mem01/openai ingestion benchmark — fixture: ${fixtureName}, ${userTurns} user turns\n`);
console.log(
  'mode'.padEnd(72) +
    'LLM/turn'.padStart(10) +
    'in tok/turn'.padStart(13) +
    'dyn in/turn'.padStart(13) +
    'out tok/turn'.padStart(14) +
    'in tok/call p50/p95'.padStart(22) +
    'emb/turn'.padStart(10),
);
for (const r of results) {
  console.log(
    r.name.padEnd(72) +
      String(r.llmCallsPerUserTurn).padStart(10) +
      String(r.inputTokensPerUserTurn).padStart(13) +
      String(r.dynamicInputTokensPerUserTurn).padStart(13) +
      String(r.outputTokensPerUserTurn).padStart(14) +
      `${r.inputTokensPerCall.p50}/${r.inputTokensPerCall.p95}`.padStart(22) +
      String(r.embeddingCallsPerUserTurn).padStart(10),
  );
}
if (locomo.length > 0) {
  console.log(`\nLoCoMo turns: ${locomo[0].data}; one extraction call per turn`);
  console.log(
    'reference'.padEnd(62) +
      'in tok/turn'.padStart(13) +
      'static'.padStart(8) +
      'per-turn in'.padStart(13) +
      `(<=${LOCOMO_TARGETS.dynamicInputTokensPerTurnMax})`.padStart(8) +
      'out tok/turn'.padStart(14) +
      `(<=${LOCOMO_TARGETS.outputTokensPerTurnMax})`.padStart(8) +
      'candidates/call'.padStart(17),
  );
  for (const r of locomo) {
    console.log(
      r.reference.padEnd(62) +
        String(r.inputTokensPerTurn).padStart(13) +
        String(r.staticPrefixTokensPerCall).padStart(8) +
        String(r.dynamicInputTokensPerTurn).padStart(13) +
        (r.targets.dynamicInputMet ? 'met' : 'MISSED').padStart(8) +
        String(r.outputTokensPerTurn).padStart(14) +
        (r.targets.outputMet ? 'met' : 'MISSED').padStart(8) +
        String(r.candidatesPerCall.mean).padStart(17),
    );
  }
}
console.log('\nratios:', ratios);
console.log('targets:', targets);
for (const n of notes) console.log(`note: ${n}`);

const out = {
  package: '@mem01/openai',
  benchmark:
    'ingestion cost per user turn (fake OpenAI server; tokens = chars/4 of what it received and sent)',
  fixture: fixtureName,
  userTurns,
  results,
  locomoTurns: locomo,
  ratios,
  targets,
  notes: [
    ...notes,
    'Output tokens come from the fake server answering with one operation per user turn; they show shape, not a real model.',
    'The baseline is a simulation of the two-calls-per-add pattern (fact extraction, then update decision, one embedding per fact), using mem01’s instructions as the system prompt of both calls.',
    ...(locomo.length > 0
      ? [
          `locomoTurns: ${locomo[0].method}`,
          'locomoTurns targets (issue 25.2): the per-turn part of the input (everything but the static instructions + schema prefix) <= 600 tokens and output <= 100 tokens per turn, for both references.',
          'locomoTurns before the compact prompt and schema (this LoCoMo mode run against the prompt and schema of commit dccf0dd): reference local 1805 in (1261 static, 544 per-turn) / 18 out per turn; reference dense 2277 in (1261 static, 1016 per-turn) / 80 out per turn.',
        ]
      : []),
  ],
  ms: Math.round(performance.now() - t0),
  at: new Date().toISOString(),
  node: process.version,
};
mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
writeFileSync(join(repoRoot, 'bench/results/openai.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(`\nwrote bench/results/openai.json`);
if (!targets.unbatchedMet || !targets.batchedMet || targets.locomoMet === false) process.exitCode = 1;
