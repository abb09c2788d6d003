/**
 * mem01session benchmark (imports dist; run `pnpm --filter mem01session build` first, or `pnpm bench`).
 *
 * 1. Latency memSession adds to a run with an offline model, against MemorySession in the same process and
 *    the same loop (alternating), on the defaults (one SQLite file + @mem01/local) in a temp MEM01_HOME.
 *    "settled": the previous turn's extraction finished before the timed run; "back-to-back": it did not,
 *    so the read barrier may wait for it.
 * 2. Model-input bytes of a probe run after 1, 10 and 40 conversations of one user: memSession (a new session
 *    per conversation, memory through the block) against one MemorySession reused for every conversation.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, MemorySession, Runner } from '@openai/agents';
import { assistantMessage, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { closeSharedRuntimes, memSession } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const fixturePath = join(root, 'fixtures/conversations.json');

function loadConversations() {
  if (existsSync(fixturePath)) {
    const data = JSON.parse(readFileSync(fixturePath, 'utf8'));
    return { source: 'fixtures/conversations.json', conversations: data.conversations };
  }
  const cities = ['Seattle', 'Portland', 'Denver', 'Austin', 'Boston'];
  const conversations = Array.from({ length: 40 }, (_, i) => ({
    id: `conv-${i + 1}`,
    user:
      i % 4 === 0
        ? `I live in ${cities[(i / 4) % cities.length]} now.`
        : i % 4 === 1
          ? `I pay $${1500 + i * 10} rent.`
          : i % 4 === 2
            ? `My favourite food is dish number ${i}.`
            : `I started learning instrument ${i}.`,
    assistant: 'Noted, thanks for telling me.',
  }));
  return { source: 'synthetic', conversations };
}

const { source, conversations } = loadConversations();
const home = mkdtempSync(join(tmpdir(), 'mem01session-bench-'));
const env = { MEM01_HOME: home };
const logger = { info: () => {}, warn: () => {} };

/** A model that answers each call with `reply()` and records the bytes of what it was sent. */
function offlineModel(reply) {
  const model = new ScriptedModel();
  const inputBytes = [];
  const answer = (call) => {
    const { input, systemInstructions } = call.request;
    inputBytes.push(
      Buffer.byteLength(typeof input === 'string' ? input : JSON.stringify(input)) +
        Buffer.byteLength(systemInstructions ?? ''),
    );
    model.enqueue(modelResponder(answer));
    return [assistantMessage(reply())];
  };
  model.enqueue(modelResponder(answer));
  return Object.assign(model, { inputBytes });
}

const runner = new Runner({ tracingDisabled: true });
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
};
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const summary = (xs) => ({ p50: round(quantile(xs, 0.5)), p95: round(quantile(xs, 0.95)), n: xs.length });

// ---------------------------------------------------------------- 1. latency
async function latency(mode, runs) {
  let next = 0;
  const model = offlineModel(() => 'Noted.');
  const agent = new Agent({ name: 'bench', instructions: 'You are helpful.', model });
  const base = [];
  const mem = [];
  const plain = [];
  const userId = `lat-${mode}`;
  // warm-up: open the runtime, load the extractor
  const warm = memSession(`${userId}-warm`, { userId, env, logger });
  await runner.run(agent, 'Hello there.', { session: warm, ...warm.runConfig() });
  await warm.flushMemory();
  for (let i = 0; i < runs; i++) {
    const text = conversations[next++ % conversations.length].user;
    let t = performance.now();
    await runner.run(agent, text, { session: new MemorySession({ sessionId: `ref-${i}` }) });
    base.push(performance.now() - t);
    const session = memSession(`${userId}-${i}`, { userId, env, logger });
    t = performance.now();
    await runner.run(agent, text, { session, ...session.runConfig() });
    mem.push(performance.now() - t);
    if (mode === 'settled') await session.flushMemory();
    await session.close();
    // Attribution: the same run with memSession as a plain Session (transcript writes, no recall).
    const plainSession = memSession(`${userId}-plain-${i}`, { userId, env, logger });
    t = performance.now();
    await runner.run(agent, text, { session: plainSession });
    plain.push(performance.now() - t);
    if (mode === 'settled') await plainSession.flushMemory();
    await plainSession.close();
  }
  await warm.close();
  const b = summary(base);
  const m = summary(mem);
  return {
    memorySessionMs: b,
    memSessionMs: m,
    memSessionWithoutHooksMs: summary(plain),
    extraMs: { p50: round(m.p50 - b.p50), p95: round(m.p95 - b.p95) },
    ratio: { p50: round(m.p50 / b.p50, 2), p95: round(m.p95 / b.p95, 2) },
  };
}

// ---------------------------------------------------------------- 2. model-input bytes
async function inputBytes() {
  const checkpoints = [1, 10, 40];
  const probe = 'Where do I live, and what do I pay in rent?';
  const userId = 'bytes-user';
  let i = 0;
  const model = offlineModel(() => conversations[i % conversations.length].assistant);
  const agent = new Agent({ name: 'bench', instructions: 'You are helpful.', model });
  const reused = new MemorySession({ sessionId: 'reused' });
  const rows = [];
  for (i = 0; i < 40; i++) {
    const text = conversations[i].user;
    await runner.run(agent, text, { session: reused });
    const session = memSession(`bytes-${i}`, { userId, env, logger });
    await runner.run(agent, text, { session, ...session.runConfig() });
    await session.flushMemory();
    await session.close();
    const n = i + 1;
    if (!checkpoints.includes(n)) continue;
    const copy = new MemorySession({ sessionId: `probe-ref-${n}`, initialItems: await reused.getItems() });
    let before = model.inputBytes.length;
    await runner.run(agent, probe, { session: copy });
    const reusedBytes = model.inputBytes[before];
    const probeSession = memSession(`probe-${n}`, { userId, env, logger });
    before = model.inputBytes.length;
    await runner.run(agent, probe, { session: probeSession, ...probeSession.runConfig() });
    const memBytes = model.inputBytes[before];
    await probeSession.close();
    rows.push({
      conversations: n,
      memSessionBytes: memBytes,
      reusedMemorySessionBytes: reusedBytes,
      ratio: round(memBytes / reusedBytes, 3),
    });
  }
  return rows;
}

try {
  const settled = await latency('settled', 60);
  const backToBack = await latency('back-to-back', 60);
  const bytes = await inputBytes();
  const result = {
    package: 'mem01session',
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    setup:
      'defaults: one SQLite file in a temp MEM01_HOME + @mem01/local; offline ScriptedModel; tracing disabled',
    conversations: source,
    latency: { settled, backToBack },
    modelInputBytes: bytes,
  };
  const out = join(root, 'bench/results/session.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log('latency per run (ms), settled:', JSON.stringify(settled));
  console.log('latency per run (ms), back-to-back:', JSON.stringify(backToBack));
  console.table(bytes);
  console.log(`wrote ${out}`);
} finally {
  await closeSharedRuntimes();
  rmSync(home, { recursive: true, force: true });
}
