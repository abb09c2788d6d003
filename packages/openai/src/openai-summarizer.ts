import { inspect } from 'node:util';
import {
  InvalidInputError,
  type Logger,
  type Summarizer,
  type SummaryRequest,
  type SummaryResult,
} from '@mem01/engine';
import { groundQuote, normalizeScope, type Usage } from '@mem01/engine/provider-kit';
import { type OpenAIClientOptions, type ResolvedClient, resolveClient } from './client.js';
import { DEFAULT_LLM_MODEL, nonNegative, positive } from './openai-extractor.js';
import { callStructured, outputText, parseStructured, type StructuredCall } from './responses-call.js';
import type { RetryPolicy } from './retry.js';
import {
  buildSummaryPrompt,
  SUMMARY_INSTRUCTIONS,
  SUMMARY_SCHEMA,
  SUMMARY_SCHEMA_NAME,
  SummaryOutputSchema,
} from './summary-prompt.js';
import type { UsageListener } from './usage.js';

export interface OpenAISummarizerOptions extends OpenAIClientOptions {
  /** Model id. Default `gpt-5.6-sol`, as the extractor (`@mem01/runtime` passes `MEM01_LLM_MODEL` as `model`). */
  readonly model?: string | undefined;
  /** Assistant turns are context only; longer ones are cut to this many characters (head and tail). Default 300. */
  readonly assistantContextChars?: number | undefined;
  /**
   * Characters of turn text sent in one call. Default 40 000 (~10 000 tokens). A longer conversation is summarized
   * from its newest turns that fit (the model is told how many earlier turns were left out).
   */
  readonly maxInputChars?: number | undefined;
  /** Passed as `reasoning.effort` when set (reasoning models only). */
  readonly reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high' | undefined;
  /** Passed as `max_output_tokens` when set. An output cut short is an `ExtractionError`. */
  readonly maxOutputTokens?: number | undefined;
  /** Usage of every call (tokens, attempts), for metrics and cost accounting. */
  readonly onUsage?: UsageListener | undefined;
  /** Retries and turn numbers the model made up are reported here (content-free). */
  readonly logger?: Logger | undefined;
  /** Backoff tuning. */
  readonly retry?: Omit<RetryPolicy, 'maxAttempts' | 'onRetry'> | undefined;
}

/** The summary result, with the usage always reported. */
export interface OpenAISummaryResult extends SummaryResult {
  readonly usage: Usage;
}

/** A `Summarizer` backed by one Responses API call with Structured Outputs per summary. */
export interface OpenAISummarizer extends Summarizer {
  readonly name: 'openai';
  readonly model: string;
  /** Short hash identifying the credentials, or `injected`. */
  readonly fingerprint: string;
  summarize(request: SummaryRequest): Promise<OpenAISummaryResult>;
}

const TEXT_FORMAT = {
  type: 'json_schema' as const,
  name: SUMMARY_SCHEMA_NAME,
  strict: true,
  schema: SUMMARY_SCHEMA,
};
/** Schema as sent, for token estimates. */
const SCHEMA_JSON = JSON.stringify(SUMMARY_SCHEMA);
/** Longest quote of a source turn, in UTF-8 bytes. */
const QUOTE_BYTES = 100;

/** The JSON schema sent as `text.format` (for review and snapshot tests). */
export function summaryTextFormat(): {
  type: 'json_schema';
  name: string;
  strict: boolean;
  schema: unknown;
} {
  return TEXT_FORMAT;
}

class OpenAISummarizerImpl implements OpenAISummarizer {
  readonly name = 'openai' as const;
  readonly model: string;
  readonly #resolved: ResolvedClient;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #assistantChars: number;
  readonly #maxInputChars: number;
  readonly #options: OpenAISummarizerOptions;

  constructor(options: OpenAISummarizerOptions) {
    this.#options = options;
    this.model = options.model ?? DEFAULT_LLM_MODEL;
    this.#timeoutMs = positive(options.timeoutMs ?? 60_000, 'timeoutMs');
    this.#maxAttempts = positive(options.maxAttempts ?? 4, 'maxAttempts');
    this.#assistantChars = nonNegative(options.assistantContextChars ?? 300, 'assistantContextChars');
    this.#maxInputChars = positive(options.maxInputChars ?? 40_000, 'maxInputChars');
    this.#resolved = resolveClient(options, 'createOpenAISummarizer');
  }

  get fingerprint(): string {
    return this.#resolved.fingerprint;
  }

  async summarize(request: SummaryRequest): Promise<OpenAISummaryResult> {
    const scope = normalizeScope(request?.scope);
    if (!Array.isArray(request.turns)) throw new InvalidInputError('turns', 'must be an array');
    if (!Number.isInteger(request.maxBytes) || request.maxBytes < 1)
      throw new InvalidInputError('maxBytes', 'must be a positive integer');
    request.turns.forEach((t, i) => {
      if (typeof t?.text !== 'string') throw new InvalidInputError(`turns[${i}].text`, 'must be a string');
      if (t.role !== 'user' && t.role !== 'assistant')
        throw new InvalidInputError(`turns[${i}].role`, 'must be user or assistant');
      if (typeof t.id !== 'string') throw new InvalidInputError(`turns[${i}].id`, 'must be a string');
      if (typeof t.at !== 'string') throw new InvalidInputError(`turns[${i}].at`, 'must be a string');
    });
    if (!request.turns.some((t) => t.role === 'user' && t.text.trim() !== '')) {
      // The user said nothing: nothing to summarize, no call, no cost.
      return { text: '', sources: [], usage: { llmCalls: 0, inputTokens: 0, outputTokens: 0 } };
    }

    const prompt = buildSummaryPrompt(
      request.turns,
      request.maxBytes,
      this.#assistantChars,
      this.#maxInputChars,
    );
    const { response, usage } = await callStructured(this.#call, prompt, scope.userId, request.signal);
    const output = parseStructured(
      outputText(response, 'summary', 'no summary was written'),
      SummaryOutputSchema,
      'summary model output',
      'no summary was written',
    );
    const summary = output.summary.trim();
    if (summary === '') return { text: '', sources: [], usage };
    const sources: { turnId: string; quote: string }[] = [];
    const seen = new Set<number>();
    let unknown = 0;
    for (const n of output.turns) {
      if (seen.has(n)) continue;
      seen.add(n);
      const index = prompt.numbered.get(n);
      const turn = index === undefined ? undefined : request.turns[index];
      if (!turn) {
        unknown++;
        continue;
      }
      // A turn too short to quote (under 2 visible characters) cannot be evidence; the engine's rule decides.
      const quote = leadingQuote(turn.text, QUOTE_BYTES);
      if (groundQuote(turn.text, quote) !== null) sources.push({ turnId: turn.id, quote });
    }
    if (unknown > 0) {
      this.#options.logger?.warn(
        `mem01/openai: the summary named ${unknown} turn number(s) that were not sent; they are not its sources`,
      );
    }
    return { text: summary, sources, usage };
  }

  get #call(): StructuredCall {
    return {
      task: 'summary',
      model: this.model,
      resolved: this.#resolved,
      options: this.#options,
      maxAttempts: this.#maxAttempts,
      timeoutMs: this.#timeoutMs,
      format: TEXT_FORMAT,
      schemaJson: SCHEMA_JSON,
    };
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      model: this.model,
      host: this.#resolved.host,
      credentials: this.#resolved.fingerprint,
    };
  }

  toString(): string {
    return `OpenAISummarizer(${this.model} @ ${this.#resolved.host}, credentials ${this.#resolved.fingerprint})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

const encoder = new TextEncoder();

/**
 * The start of `text`, verbatim: its first words up to `maxBytes` UTF-8 bytes (cut at a word; a first word longer
 * than that is cut at a code point). Empty for a text without a visible character.
 */
export function leadingQuote(text: string, maxBytes: number): string {
  const words = [...text.matchAll(/\S+/g)];
  const first = words[0];
  if (!first) return '';
  const start = first.index;
  let end = start;
  for (const w of words) {
    const next = w.index + w[0].length;
    if (encoder.encode(text.slice(start, next)).byteLength > maxBytes) break;
    end = next;
  }
  if (end > start) return text.slice(start, end);
  let out = '';
  for (const ch of first[0]) {
    if (encoder.encode(out + ch).byteLength > maxBytes) break;
    out += ch;
  }
  return out;
}

/**
 * Creates the OpenAI summarizer for the engine's `summarizer` option: one Responses API call per conversation summary,
 * with Structured Outputs (`{ summary, turns }`). The summary is a short, dated, third-person account of what the user
 * said (at most the request's `maxBytes`); its sources are the turns the model names, each quoted verbatim by its
 * first words. Throws `ConfigError` when no client or API key is available.
 */
export function createOpenAISummarizer(options: OpenAISummarizerOptions = {}): OpenAISummarizer {
  return new OpenAISummarizerImpl(options);
}

export { SUMMARY_INSTRUCTIONS };
