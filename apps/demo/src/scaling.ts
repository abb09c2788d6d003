/**
 * Prepared model input over 40 conversations, three ways: a fresh stock `MemorySession` per conversation, one
 * reused stock `MemorySession`, and a fresh `memSession` per conversation sharing one user's memory.
 * 120 real `Agent` + `Runner` runs against an offline model that records what it receives.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '@mem01/engine';
import { MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
import { openMemoryRuntime } from '@mem01/runtime';
import { Agent, MemorySession, Runner } from '@openai/agents';
import { memSession } from 'mem01session';
import type { Fixture } from './fixture.js';
import { itemText, type PreparedInput, RecordingModel } from './recording-model.js';

export const STRATEGIES = ['fresh_stock', 'reused_stock', 'memsession'] as const;
export type Strategy = (typeof STRATEGIES)[number];
export const CHECKPOINTS = [1, 10, 40] as const;
export const BUDGET_BYTES = DEFAULT_CONFIG.blockBytes;
export const INSTRUCTIONS = 'You are a helpful personal assistant.';

export interface StrategyResult {
  readonly strategy: Strategy;
  /** Per conversation, in order. */
  readonly items: number[];
  readonly bytes: number[];
  /** memsession only: UTF-8 bytes of the injected memory item's text, per conversation. */
  readonly memoryBytes: number[];
}

export interface ScalingResult {
  readonly conversations: number;
  readonly runs: number;
  readonly results: readonly StrategyResult[];
}

function memoryItemBytes(prepared: PreparedInput): number {
  const item = prepared.input.find((i) => itemText(i).startsWith(MEMORY_BLOCK_OPEN));
  return item ? Buffer.byteLength(itemText(item), 'utf8') : 0;
}

/** Runs the 120 preparations. `onRun` is called after each run (for a progress bar). */
export async function runScaling(fixture: Fixture, onRun: () => void = () => {}): Promise<ScalingResult> {
  const model = new RecordingModel();
  const agent = new Agent({ name: 'Assistant', instructions: INSTRUCTIONS, model: model.model });
  const runner = new Runner({ tracingDisabled: true });
  const results: StrategyResult[] = [];
  const record = (strategy: Strategy, fn: (row: StrategyResult) => Promise<void>) => async () => {
    const row: StrategyResult = { strategy, items: [], bytes: [], memoryBytes: [] };
    await fn(row);
    results.push(row);
  };
  const push = (row: StrategyResult, prepared: PreparedInput) => {
    row.items.push(prepared.items);
    row.bytes.push(prepared.bytes);
    row.memoryBytes.push(memoryItemBytes(prepared));
    onRun();
  };

  await record('fresh_stock', async (row) => {
    for (const c of fixture.conversations) {
      model.willReply(c.assistant);
      await runner.run(agent, c.user, { session: new MemorySession({ sessionId: c.id }) });
      push(row, model.last());
    }
  })();

  await record('reused_stock', async (row) => {
    const session = new MemorySession({ sessionId: 'reused' });
    for (const c of fixture.conversations) {
      model.willReply(c.assistant);
      await runner.run(agent, c.user, { session });
      push(row, model.last());
    }
  })();

  const dir = mkdtempSync(join(tmpdir(), 'mem01-demo-'));
  // The runtime of a fresh SQLite file, read from an empty environment: the offline models and the default settings
  // (an 800-byte block), whatever the machine's environment says.
  const runtime = await openMemoryRuntime({
    db: join(dir, 'memory.db'),
    env: {},
    logger: quietLogger,
    resume: false,
  });
  try {
    await record('memsession', async (row) => {
      for (const c of fixture.conversations) {
        const session = memSession(c.id, { userId: fixture.userId, runtime, logger: quietLogger });
        try {
          model.willReply(c.assistant);
          await runner.run(agent, c.user, { session, ...session.runConfig() });
          push(row, model.last());
          await session.flushMemory();
        } finally {
          await session.close();
        }
      }
    })();
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { conversations: fixture.conversations.length, runs: fixture.conversations.length * 3, results };
}

export const quietLogger = { info: () => {}, warn: () => {} };

/** The artifact: deterministic for a given fixture (no timestamps, no ids, no machine facts). */
export function scalingArtifact(result: ScalingResult, fixturePath: string): unknown {
  return {
    measurement: 'offline_prepared_model_input',
    estimator: 'utf8_bytes_upper_bound',
    estimatorNote:
      'UTF-8 bytes of JSON.stringify(model input items) plus the system instructions, as prepared by the Runner. An upper bound on the text sent; it is not a token count.',
    billedTokens: null,
    billedTokensNote: 'No claim about billed tokens: nothing was sent to a model provider.',
    model: {
      name: 'mem01-demo-recording-model',
      kind: 'local fake',
      description:
        "@openai/agents/testing ScriptedModel: answers with the fixture's reply and records the prepared input",
    },
    runtime: {
      kind: 'local fake',
      runner: '@openai/agents Runner (real), tracing disabled',
      memory:
        'mem01session with the @mem01/local offline extractor and embedder, SQLite in a temporary folder',
    },
    fixture: fixturePath,
    conversations: result.conversations,
    runs: result.runs,
    budgetBytes: BUDGET_BYTES,
    checkpoints: [...CHECKPOINTS],
    strategies: result.results.map((r) => ({
      strategy: r.strategy,
      at: Object.fromEntries(
        CHECKPOINTS.filter((k) => k <= r.items.length).map((k) => [
          String(k),
          { items: r.items[k - 1], bytes: r.bytes[k - 1], memoryItemBytes: r.memoryBytes[k - 1] },
        ]),
      ),
      perConversation: { items: r.items, bytes: r.bytes, memoryItemBytes: r.memoryBytes },
    })),
  };
}
