/**
 * The lifecycle story: four conversations of one user, each a fresh memSession id, with the offline extractor
 * and a SQLite file in a temporary folder. For each step: the block that was recalled into the model input,
 * and every belief's lifecycle afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Belief } from '@mem01/engine';
import { MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
import { type MemoryRuntime, openMemoryRuntime } from '@mem01/runtime';
import { Agent, type AgentInputItem, Runner } from '@openai/agents';
import { memSession } from 'mem01session';
import { itemText, RecordingModel } from './recording-model.js';
import { quietLogger } from './scaling.js';

export const STORY_STEPS = [
  'I live in NYC and pay $2,400 rent',
  'I moved to SF',
  'Where do I live and what is my rent?',
  "What is my sister's name?",
] as const;

export interface BeliefView {
  readonly id: string;
  readonly statement: string;
  readonly attribute: string;
  readonly value: string;
  readonly status: Belief['status'];
  readonly storedAt: string;
  readonly invalidatedAt: string | null;
  readonly supersedes: string | null;
  readonly supersededBy: string | null;
}

export interface StoryStep {
  readonly step: number;
  readonly conversationId: string;
  readonly user: string;
  /** The memory block the model received for this turn, verbatim. */
  readonly recalledBlock: string;
  /** Statements of the beliefs in that block. */
  readonly recalled: readonly string[];
  /** What the model answered (offline: scripted; live: a model observation). */
  readonly answer: string;
  /** Every belief of the user after the step, oldest first, including retired ones. */
  readonly beliefs: readonly BeliefView[];
}

export interface StoryRuntime {
  /** Memory, opened by `@mem01/runtime` (the caller's to close). Default: a temporary SQLite file, offline models. */
  readonly runtime?: MemoryRuntime;
  /** The model for the agent: the offline recorder, or a real model name for --live. */
  readonly model?: RecordingModel | string;
  readonly userId?: string;
  readonly conversationPrefix?: string;
}

export function view(b: Belief): BeliefView {
  return {
    id: b.id,
    statement: b.statement,
    attribute: b.attribute,
    value: b.value,
    status: b.status,
    storedAt: b.storedAt,
    invalidatedAt: b.invalidatedAt,
    supersedes: b.supersedes,
    supersededBy: b.supersededBy,
  };
}

/**
 * One recalled line of a rendered block: `[fact 2026-05-01] statement` (a belief, by kind; `, unconfirmed` while
 * pending), or `[user said 2026-05-01] snippet` (an episode).
 */
const BLOCK_LINE = /^\[([a-z]+(?: said)?) \d{4}-\d{2}-\d{2}(?:, unconfirmed)?\] /;

/** Parses what was recalled out of a rendered block: each belief's statement, or what the user said (`user said: …`). */
export function blockStatements(block: string): string[] {
  return block
    .split('\n')
    .filter((l) => BLOCK_LINE.test(l))
    .map((l) => {
      const label = BLOCK_LINE.exec(l)?.[1] ?? '';
      const text = l.replace(BLOCK_LINE, '');
      return label.endsWith(' said') ? `${label}: ${text}` : text;
    });
}

/** The memory block in a prepared input, or '' when there is none. */
export function memoryBlockOf(input: readonly AgentInputItem[]): string {
  const item = input.find((it) => itemText(it).startsWith(MEMORY_BLOCK_OPEN));
  return item ? itemText(item) : '';
}

/** Runs the story. Offline by default: a temporary SQLite file, the local extractor, the recording model. */
export async function runStory(runtime: StoryRuntime = {}): Promise<StoryStep[]> {
  const dir = runtime.runtime ? null : mkdtempSync(join(tmpdir(), 'mem01-story-'));
  // Offline: the runtime of a fresh SQLite file, read from an empty environment (the offline models, the default
  // settings), so the story is the same on every machine.
  const memory =
    runtime.runtime ??
    (await openMemoryRuntime({
      db: join(dir as string, 'memory.db'),
      env: {},
      logger: quietLogger,
      resume: false,
    }));
  const recorder =
    runtime.model instanceof RecordingModel || runtime.model === undefined
      ? (runtime.model ?? new RecordingModel())
      : null;
  const agent = new Agent({
    name: 'Assistant',
    instructions: 'You are a helpful personal assistant. Answer briefly.',
    model: recorder ? recorder.model : (runtime.model as string),
  });
  const runner = new Runner({ tracingDisabled: recorder !== null });
  const userId = runtime.userId ?? 'story-user';
  const prefix = runtime.conversationPrefix ?? 'story';
  const steps: StoryStep[] = [];
  try {
    for (const [i, user] of STORY_STEPS.entries()) {
      const conversationId = `${prefix}-${i + 1}`;
      const session = memSession(conversationId, { userId, runtime: memory, logger: quietLogger });
      try {
        let block = '';
        recorder?.willReply((input) => {
          const recalled = blockStatements(memoryBlockOf(input.input));
          return recalled.length > 0
            ? `From memory: ${recalled.join(' ')}`
            : "I don't have anything about that in memory.";
        });
        const config = session.runConfig();
        const filter = config.callModelInputFilter;
        // Capture what the model receives, whichever model it is.
        const capture = async (args: Parameters<typeof filter>[0]) => {
          const out = await filter(args);
          block ||= memoryBlockOf(out.input);
          return out;
        };
        const result = await runner.run(agent, user, { session, ...config, callModelInputFilter: capture });
        await session.flushMemory();
        const history = await session.memoryHistory({ includeInvalidated: true });
        steps.push({
          step: i + 1,
          conversationId,
          user,
          recalledBlock: block,
          recalled: blockStatements(block),
          answer: String(result.finalOutput ?? ''),
          beliefs: history.map(view),
        });
      } finally {
        await session.close();
      }
    }
  } finally {
    if (!runtime.runtime) await memory.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  return steps;
}
