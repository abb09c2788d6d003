/**
 * The per-run hooks: `sessionInputCallback` captures the recall query, `callModelInputFilter` recalls once per
 * run and adds the memory block and the authority policy to every model call of that run.
 */
import { AUTHORITY_POLICY, type RecallOptions, type Scope } from '@mem01/engine';
import { sanitizeError } from '@mem01/engine/binding-kit';
import type { MemoryRuntime as Runtime } from '@mem01/runtime';
import type {
  AgentInputItem,
  CallModelInputFilter,
  ModelInputData,
  SessionInputCallback,
} from '@openai/agents';
import { optionalAgentsSdk } from './agents-sdk.js';
import { RunConfigReusedError } from './errors.js';
import { injectedBlocks, latestUserIndex, latestUserText, memoryItem } from './items.js';
import { type RecalledBlock, recallBlock } from './recall-block.js';

/** The run options `session.runConfig()` returns; spread them into `Runner.run` options. */
export interface MemoryRunConfig {
  /** Merges history and new input as the SDK does by default, and captures the latest user text. */
  readonly sessionInputCallback: SessionInputCallback;
  /** Adds the recalled memory block and the authority policy before each model call of the run. */
  readonly callModelInputFilter: CallModelInputFilter;
}

/** What the hooks need from the session. */
export interface RunHookHost {
  readonly scope: Scope;
  readonly strict: boolean;
  runtime(): Promise<Runtime>;
  /** Records a failure (sanitized) for `lastMemoryError`. */
  recordError(err: unknown): void;
  recordSuccess(): void;
  /** Remembers the query of the latest run, for `memoryInstructions` in `query` mode. */
  noteQuery(query: string): void;
  /**
   * The end of the conversation that the session's history (as the SDK hands it to `sessionInputCallback`) puts in
   * front of the model, left out of recall; undefined for none.
   */
  workingMemory(history: readonly unknown[]): RecallOptions['workingMemory'];
}

type Outcome =
  | { readonly ok: true; readonly block: RecalledBlock | null }
  | { readonly ok: false; readonly error: unknown };

/** Builds a fresh pair of hooks bound to one run. */
export function createRunConfig(host: RunHookHost): MemoryRunConfig {
  let started = false;
  let query: string | null = null;
  let recall: Promise<Outcome> | null = null;
  let workingMemory: RecallOptions['workingMemory'];

  const startRecall = (q: string): Promise<Outcome> => {
    recall ??= (async (): Promise<Outcome> => {
      try {
        const runtime = await host.runtime();
        const block = await recallBlock(runtime, host.scope, q, { workingMemory });
        host.recordSuccess();
        // The block is injected even when it recalls nothing: it says so, and the model input keeps one shape
        // (the memory item plus the authority policy) on every run.
        injectedBlocks(runtime).add(block.text);
        return { ok: true, block };
      } catch (error) {
        host.recordError(error);
        return { ok: false, error };
      }
    })();
    return recall;
  };

  const sessionInputCallback: SessionInputCallback = async (history, newItems) => {
    if (started) throw new RunConfigReusedError();
    started = true;
    const q = latestUserText(newItems) ?? latestUserText(history) ?? '';
    query = q;
    host.noteQuery(q);
    workingMemory = host.workingMemory(history);
    // Inside a trace, recall starts now and overlaps the rest of the run's preparation. The SDK 0.20 prepares
    // session input before it opens the run's trace, so usually recall starts at the first model call, where
    // its span lands in the run's trace. (The SDK is loaded here: the Runner calling this hook has it.)
    if ((await optionalAgentsSdk())?.getCurrentTrace()) void startRecall(q);
    return [...history, ...newItems];
  };

  const callModelInputFilter: CallModelInputFilter = async ({ modelData }) => {
    const runtime = await host.runtime();
    const isInjected = (item: unknown) => injectedBlocks(runtime).isInjected(item);
    if (!started) {
      // No session: the SDK skips sessionInputCallback, so the query comes from the model input.
      started = true;
      query = latestUserText(modelData.input, isInjected) ?? '';
      host.noteQuery(query);
    }
    const outcome = await startRecall(query ?? '');
    if (!outcome.ok) {
      // Opening the runtime (a store's connection string) fails outside the engine: mask it here too.
      if (host.strict) throw sanitizeError(outcome.error);
      return modelData;
    }
    if (!outcome.block) return modelData;
    return withMemory(modelData, outcome.block.text, isInjected);
  };

  return { sessionInputCallback, callModelInputFilter };
}

/**
 * The model input with the memory item placed right before the latest user message (earlier copies
 * removed), and the authority policy appended to the caller's instructions.
 */
export function withMemory(
  modelData: ModelInputData,
  blockText: string,
  isInjected: (item: unknown) => boolean,
): ModelInputData {
  const input = modelData.input.filter((item) => !isInjected(item));
  const at = latestUserIndex(input);
  const item = memoryItem(blockText) as AgentInputItem;
  if (at === -1) input.unshift(item);
  else input.splice(at, 0, item);
  const base = modelData.instructions?.trim() ? `${modelData.instructions}\n\n` : '';
  return { ...modelData, input, instructions: `${base}${AUTHORITY_POLICY}` };
}
