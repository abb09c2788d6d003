/**
 * One recall rendered as the memory block, inside a custom span of the SDK trace. The span carries counts,
 * bytes and timing, never belief text or the query.
 */
import {
  type Belief,
  MAX_QUERY_CHARS,
  type RecallOptions,
  type Scope,
  type SelectedContext,
} from '@mem01/engine';
import type { MemoryRuntime as Runtime } from '@mem01/runtime';
import type { CustomSpanData, Span } from '@openai/agents';
import { optionalAgentsSdk } from './agents-sdk.js';

/** Longest query recall uses (the engine's): the engine cuts a longer user message there (the head carries the question). */
export { MAX_QUERY_CHARS };

export interface RecalledBlock {
  /** The rendered block (always present; it says so when nothing was recalled). */
  readonly text: string;
  readonly bytes: number;
  readonly beliefs: readonly Belief[];
  readonly omitted: number;
  /** With host-selected `ids`: the ids left out, with the reason (empty for a recall). */
  readonly skipped: SelectedContext['skipped'];
  readonly ms: number;
}

/**
 * Recalls for `query` (a profile of the newest beliefs when empty), or takes the host-selected `{ ids }` (the engine's
 * `context(scope, { ids })`), and renders the bounded block.
 */
export async function recallBlock(
  runtime: Runtime,
  scope: Scope,
  query: string | { readonly ids: readonly string[] },
  options: {
    /** The block's size; default the runtime's `blockBytes`. */
    readonly blockBytes?: number | undefined;
    /** @deprecated The earlier name of `blockBytes` (the engine refuses both with different values). */
    readonly budgetBytes?: number | undefined;
    readonly purpose?: string;
    /** With a query: the end of the conversation the model sees, left out of recall. */
    readonly workingMemory?: RecallOptions['workingMemory'];
  } = {},
): Promise<RecalledBlock> {
  const body = async (span: Span<CustomSpanData> | null): Promise<RecalledBlock> => {
    const started = performance.now();
    const data: Record<string, unknown> = {
      purpose: options.purpose ?? 'run',
      ...(typeof query === 'string' ? { queryChars: query.length } : { ids: query.ids.length }),
    };
    if (span) span.spanData.data = data;
    try {
      // The runtime's size unless the call names one; the engine checks the call's two names against each other.
      const size =
        options.blockBytes === undefined && options.budgetBytes === undefined
          ? { blockBytes: runtime.blockBytes }
          : { blockBytes: options.blockBytes, budgetBytes: options.budgetBytes };
      const ctx =
        typeof query === 'string'
          ? await runtime.engine.context(scope, query, { ...size, workingMemory: options.workingMemory })
          : await runtime.engine.context(scope, { ids: query.ids, ...size });
      const recalled = 'recalled' in ctx ? ctx.recalled.length : ctx.selected.length;
      const skipped = 'skipped' in ctx ? ctx.skipped : [];
      const ms = performance.now() - started;
      Object.assign(data, {
        recalled,
        injected: ctx.beliefs.length,
        omitted: ctx.omitted,
        ...(typeof query === 'string' ? {} : { skipped: skipped.length }),
        bytes: ctx.bytes,
        ms: Math.round(ms * 1000) / 1000,
      });
      return { text: ctx.text, bytes: ctx.bytes, beliefs: ctx.beliefs, omitted: ctx.omitted, skipped, ms };
    } catch (err) {
      Object.assign(data, {
        failed: true,
        errorCode: (err as { code?: unknown } | null)?.code ?? 'unknown',
        ms: Math.round((performance.now() - started) * 1000) / 1000,
      });
      throw err;
    }
  };
  // Outside a trace (tracing disabled, a call outside a run, or no SDK installed) there is no span to attach to.
  const sdk = await optionalAgentsSdk();
  if (!sdk?.getCurrentTrace()) return body(null);
  return sdk.withCustomSpan(body, { data: { name: 'mem01.recall' } });
}
