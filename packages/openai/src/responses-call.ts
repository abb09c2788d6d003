/**
 * One Responses API call with Structured Outputs, as the extractor and the summarizer make it: the request body, the
 * retries with backoff (content-free warnings), the per-attempt timeout and abort, the usage read from the reply (or
 * estimated) and reported to `onUsage`.
 */
import { ExtractionError, type Logger, ProviderError } from '@mem01/engine';
import type { Usage } from '@mem01/engine/provider-kit';
import type { ResolvedClient } from './client.js';
import { MalformedResponseError, type RetryPolicy, withRetries } from './retry.js';
import { emitUsage, type UsageListener } from './usage.js';

/** What a Responses API reply is read for (the rest is ignored). */
export interface ResponseShape {
  readonly status?: unknown;
  readonly incomplete_details?: { readonly reason?: unknown } | null;
  readonly error?: { readonly message?: unknown; readonly code?: unknown } | null;
  readonly output: readonly unknown[];
  readonly usage?: { readonly input_tokens?: unknown; readonly output_tokens?: unknown } | null;
}

/** Inside an attempt: a body that is not a Responses API object is retried as malformed. */
export function checkResponse(res: unknown): ResponseShape {
  if (res === null || typeof res !== 'object' || !Array.isArray((res as { output?: unknown }).output)) {
    throw new MalformedResponseError('response body is not a Responses API object');
  }
  return res as ResponseShape;
}

/** Rough token count of `chars` characters of English text and JSON (four characters a token). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/**
 * The output text of a completed response. An incomplete output, a refusal or no text is an `ExtractionError` (`task`
 * names the call, `outcome` says what was not written), a failed response a `ProviderError`.
 */
export function outputText(
  response: ResponseShape,
  task = 'extraction',
  outcome = 'nothing was written',
): string {
  if (response.status === 'incomplete') {
    const reason =
      typeof response.incomplete_details?.reason === 'string' ? response.incomplete_details.reason : '?';
    throw new ExtractionError(`model output is incomplete (${reason}); ${outcome}`);
  }
  if (response.status === 'failed') {
    const code = typeof response.error?.code === 'string' ? response.error.code : 'unknown';
    throw new ProviderError(`OpenAI response failed (${code})`, null);
  }
  let text = '';
  for (const item of response.output) {
    const message = item as { type?: unknown; content?: unknown };
    if (message.type !== 'message' || !Array.isArray(message.content)) continue;
    for (const part of message.content as { type?: unknown; text?: unknown; refusal?: unknown }[]) {
      if (part.type === 'refusal') throw new ExtractionError(`the model refused the ${task}; ${outcome}`);
      if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  if (text.trim() === '') throw new ExtractionError(`model returned no output text; ${outcome}`);
  return text;
}

/** The options of a model that the call reads. */
export interface CallOptions {
  readonly reasoningEffort?: 'minimal' | 'low' | 'medium' | 'high' | undefined;
  readonly maxOutputTokens?: number | undefined;
  readonly onUsage?: UsageListener | undefined;
  readonly logger?: Logger | undefined;
  readonly retry?: Omit<RetryPolicy, 'maxAttempts' | 'onRetry'> | undefined;
}

/** How one kind of call is made. */
export interface StructuredCall {
  /** What the call is for, in warnings and usage events. */
  readonly task: 'extraction' | 'summary';
  readonly model: string;
  readonly resolved: ResolvedClient;
  readonly options: CallOptions;
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  /** The `text.format` sent. */
  readonly format: {
    readonly type: 'json_schema';
    readonly name: string;
    readonly strict: boolean;
    readonly schema: unknown;
  };
  /** The schema as sent, for the token estimate. */
  readonly schemaJson: string;
}

/**
 * Sends `prompt` for `userId` with retries, and returns the reply and its usage (one LLM call; tokens as the reply
 * reports them, else estimated), reported to `onUsage` with the attempts it took.
 */
export async function callStructured(
  call: StructuredCall,
  prompt: { readonly instructions: string; readonly input: string },
  userId: string,
  signal: AbortSignal | undefined,
): Promise<{ readonly response: ResponseShape; readonly usage: Usage }> {
  const { client, redact, host } = call.resolved;
  const { options } = call;
  const body = {
    model: call.model,
    instructions: prompt.instructions,
    input: [{ role: 'user' as const, content: prompt.input }],
    text: { format: call.format },
    store: false,
    ...(options.reasoningEffort ? { reasoning: { effort: options.reasoningEffort } } : {}),
    ...(options.maxOutputTokens ? { max_output_tokens: options.maxOutputTokens } : {}),
  };
  const policy: RetryPolicy = {
    ...options.retry,
    maxAttempts: call.maxAttempts,
    onRetry: ({ attempt, delayMs, reason }) =>
      options.logger?.warn(
        `mem01/openai: ${call.task} attempt ${attempt}/${call.maxAttempts} failed (${reason}); retrying in ${delayMs} ms`,
      ),
  };
  let attempts = 0;
  const response: ResponseShape = await withRetries(
    `responses call to ${host}`,
    policy,
    signal,
    redact,
    async (n) => {
      attempts = n;
      const res: unknown = await client.responses.create(body as never, {
        signal,
        timeout: call.timeoutMs,
        maxRetries: 0,
      });
      return checkResponse(res);
    },
  );
  const estimate = estimateTokens(prompt.instructions.length + prompt.input.length + call.schemaJson.length);
  const usage: Usage = {
    llmCalls: 1,
    inputTokens: numberOr(response.usage?.input_tokens, estimate),
    outputTokens: numberOr(response.usage?.output_tokens, 0),
  };
  emitUsage(options.onUsage, { kind: call.task, userId, model: call.model, usage, attempts });
  return { response, usage };
}

/**
 * The reply's output text, parsed as JSON and checked against `schema`. Output that is not JSON or does not match is
 * an `ExtractionError` saying what (`what` names the output, `outcome` what was not written).
 */
export function parseStructured<T>(
  text: string,
  schema: {
    safeParse(
      value: unknown,
    ):
      | { success: true; data: T }
      | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; code: string }[] } };
  },
  what: string,
  outcome: string,
): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ExtractionError(`${what} is not JSON; ${outcome}`, { cause: err });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.code}`)
      .join('; ');
    throw new ExtractionError(`${what} does not match the schema (${where}); ${outcome}`);
  }
  return parsed.data;
}
