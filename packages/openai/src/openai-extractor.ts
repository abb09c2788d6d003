import { inspect } from 'node:util';
import {
  type ExtractionRequest,
  type ExtractionResult,
  type Extractor,
  InvalidInputError,
  type Logger,
} from '@mem01/engine';
import { type ExtractionOperation, normalizeScope, type Usage } from '@mem01/engine/provider-kit';
import { zodTextFormat } from 'openai/helpers/zod';
import { budgetUsedRemoved, refuseOwnBudgets } from './budget.js';
import { type OpenAIClientOptions, type ResolvedClient, resolveClient } from './client.js';
import { compactSchema } from './compact-schema.js';
import { buildPrompt, EXTRACTION_INSTRUCTIONS, ExtractionOutputSchema, SCHEMA_NAME } from './prompt.js';
import { callStructured, outputText, parseStructured, type StructuredCall } from './responses-call.js';
import type { RetryPolicy } from './retry.js';
import type { UsageListener } from './usage.js';
import { type RejectedOperation, validateOperations } from './validate.js';

/** Default extraction model, unless `model` says otherwise (`@mem01/runtime` passes `MEM01_LLM_MODEL` as `model`). */
export const DEFAULT_LLM_MODEL = 'gpt-5.6-sol';

/**
 * @deprecated The extractor keeps no budgets: passing `budgets` throws a `ConfigError`. Set the engine's
 * `config.budgets` (same field names), which counts the usage the extractor reports, in the store.
 */
export interface ExtractionBudgets {
  readonly llmCallsPerUser?: number | undefined;
  readonly inputTokensPerUser?: number | undefined;
  readonly outputTokensPerUser?: number | undefined;
  readonly periodMs?: number | undefined;
}

export interface OpenAIExtractorOptions extends OpenAIClientOptions {
  /** Model id. Default `gpt-5.6-sol`. */
  readonly model?: string | undefined;
  /** Characters of turns per batch the engine may hand over in one call. Default 6000. 0: one turn per call. */
  readonly batchChars?: number | undefined;
  /** Assistant turns are context only; longer ones are cut to this many characters (head and tail). Default 600. */
  readonly assistantContextChars?: number | undefined;
  /** Passed as `reasoning.effort` when set (reasoning models only). */
  readonly reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high' | undefined;
  /** Passed as `max_output_tokens` when set. An output cut short is an `ExtractionError`. */
  readonly maxOutputTokens?: number | undefined;
  /**
   * @deprecated Throws a `ConfigError`: budgets are the engine's `config.budgets`, counted in the store from the usage
   * every call reports.
   */
  readonly budgets?: ExtractionBudgets | undefined;
  /** Usage of every call (tokens, attempts), for metrics and cost accounting. */
  readonly onUsage?: UsageListener | undefined;
  /** Retries and dropped operations are reported here (content-free). */
  readonly logger?: Logger | undefined;
  /** Backoff tuning. */
  readonly retry?: Omit<RetryPolicy, 'maxAttempts' | 'onRetry'> | undefined;
  /** @deprecated Unused (it timed the removed in-process budgets); budget windows are the engine's clock. */
  readonly clock?: (() => number) | undefined;
}

/** The extraction result, plus the operations validation dropped (content-free). */
export interface OpenAIExtractionResult extends ExtractionResult {
  readonly usage: Usage;
  readonly dropped: readonly RejectedOperation[];
}

/** An `Extractor` backed by one Responses API call with Structured Outputs per batch. */
export interface OpenAIExtractor extends Extractor {
  readonly name: 'openai';
  readonly model: string;
  readonly batchChars: number;
  /** Short hash identifying the credentials, or `injected`. */
  readonly fingerprint: string;
  extract(request: ExtractionRequest): Promise<OpenAIExtractionResult>;
  /** @deprecated Throws a `ConfigError`: the engine counts usage; read it with `engine.usage(scope)`. */
  budgetUsed(userId: string): Record<string, number>;
}

/** The schema as zod renders it (kept for the equivalence test). */
export const FULL_SCHEMA = zodTextFormat(ExtractionOutputSchema, SCHEMA_NAME).schema as Record<
  string,
  unknown
>;
const SCHEMA = compactSchema(FULL_SCHEMA, { evidence: ['ev'] });
const TEXT_FORMAT = { type: 'json_schema' as const, name: SCHEMA_NAME, strict: true, schema: SCHEMA };
/** Schema as sent, for token estimates. */
const SCHEMA_JSON = JSON.stringify(SCHEMA);

/** The JSON schema sent as `text.format` (for review and snapshot tests). */
export function extractionTextFormat(): {
  type: 'json_schema';
  name: string;
  strict: boolean;
  schema: unknown;
} {
  return TEXT_FORMAT;
}

class OpenAIExtractorImpl implements OpenAIExtractor {
  readonly name = 'openai' as const;
  readonly model: string;
  readonly batchChars: number;
  readonly #resolved: ResolvedClient;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #assistantChars: number;
  readonly #options: OpenAIExtractorOptions;

  constructor(options: OpenAIExtractorOptions) {
    this.#options = options;
    this.model = options.model ?? DEFAULT_LLM_MODEL;
    this.batchChars = nonNegative(options.batchChars ?? 6000, 'batchChars');
    this.#timeoutMs = positive(options.timeoutMs ?? 60_000, 'timeoutMs');
    this.#maxAttempts = positive(options.maxAttempts ?? 4, 'maxAttempts');
    this.#assistantChars = nonNegative(options.assistantContextChars ?? 600, 'assistantContextChars');
    refuseOwnBudgets(options, 'createOpenAIExtractor');
    this.#resolved = resolveClient(options, 'createOpenAIExtractor');
  }

  get fingerprint(): string {
    return this.#resolved.fingerprint;
  }

  budgetUsed(_userId: string): Record<string, number> {
    return budgetUsedRemoved();
  }

  async extract(request: ExtractionRequest): Promise<OpenAIExtractionResult> {
    const scope = normalizeScope(request?.scope);
    if (!Array.isArray(request.turns)) throw new InvalidInputError('turns', 'must be an array');
    if (!Array.isArray(request.candidates)) throw new InvalidInputError('candidates', 'must be an array');
    request.turns.forEach((t, i) => {
      if (typeof t?.text !== 'string') throw new InvalidInputError(`turns[${i}].text`, 'must be a string');
      if (t.role !== 'user' && t.role !== 'assistant')
        throw new InvalidInputError(`turns[${i}].role`, 'must be user or assistant');
    });
    if (!request.turns.some((t) => t.role === 'user' && t.text.trim() !== '')) {
      // Nothing can be evidence: no call, no cost.
      return { operations: [], usage: { llmCalls: 0, inputTokens: 0, outputTokens: 0 }, dropped: [] };
    }

    const prompt = buildPrompt(request.turns, request.candidates, request.now, this.#assistantChars);
    const { response, usage } = await callStructured(this.#call, prompt, scope.userId, request.signal);
    const output = parseStructured(
      outputText(response),
      ExtractionOutputSchema,
      'model output',
      'nothing was written',
    );
    const { operations, dropped } = validateOperations(output, prompt.aliases);
    if (dropped.length > 0) {
      const reasons = dropped.map((d) => `${d.op}:${d.reason}`).join(', ');
      this.#options.logger?.warn(
        `mem01/openai: dropped ${dropped.length} operation(s) that failed validation: ${reasons}`,
      );
    }
    return { operations: operations as ExtractionOperation[], usage, dropped };
  }

  get #call(): StructuredCall {
    return {
      task: 'extraction',
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
      batchChars: this.batchChars,
      host: this.#resolved.host,
      credentials: this.#resolved.fingerprint,
    };
  }

  toString(): string {
    return `OpenAIExtractor(${this.model} @ ${this.#resolved.host}, credentials ${this.#resolved.fingerprint})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export function positive(value: number, field: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new InvalidInputError(field, 'must be a positive number');
  return value;
}

export function nonNegative(value: number, field: string): number {
  if (!Number.isFinite(value) || value < 0)
    throw new InvalidInputError(field, 'must be a non-negative number');
  return value;
}

/**
 * Creates the OpenAI extractor: one Responses API call per batch of turns, with Structured Outputs, candidates
 * in and add/confirm/supersede/retract operations out, validated before they are returned.
 * Throws `ConfigError` when no client or API key is available.
 */
export function createOpenAIExtractor(options: OpenAIExtractorOptions = {}): OpenAIExtractor {
  return new OpenAIExtractorImpl(options);
}

export { EXTRACTION_INSTRUCTIONS };
