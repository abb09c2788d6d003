/** Retries with exponential backoff and jitter, honouring Retry-After; error mapping to the engine's typed errors. */
import { AbortedError, Mem01Error, ProviderError } from '@mem01/engine';
import OpenAI from 'openai';

/** The call was cancelled through its `AbortSignal`. Nothing was written. */
export class OpenAIAbortedError extends AbortedError {
  constructor(options?: { cause?: unknown }) {
    super('the OpenAI call was cancelled', options);
  }
}

/**
 * A failed OpenAI call, after retries. `status` is the HTTP status (null for network errors and timeouts),
 * `attempts` how many attempts were made, `retryAfterMs` what the server last asked to wait, if anything.
 */
export class OpenAIProviderError extends ProviderError {
  readonly attempts: number;
  readonly retryable: boolean;
  constructor(
    message: string,
    details: { status: number | null; attempts: number; retryAfterMs: number | null; retryable: boolean },
    options?: { cause?: unknown },
  ) {
    super(message, details.status, { ...options, retryAfterMs: details.retryAfterMs ?? undefined });
    this.attempts = details.attempts;
    this.retryable = details.retryable;
  }
}

export interface RetryPolicy {
  /** Attempts including the first; at least 1. */
  readonly maxAttempts: number;
  /** First backoff delay. Default 250 ms. */
  readonly baseDelayMs?: number;
  /** Cap on a computed backoff delay. Default 8000 ms. */
  readonly maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails with `retryAfterMs` set. Default 60 000 ms. */
  readonly maxRetryAfterMs?: number;
  /** Source of jitter, 0..1. Default Math.random. */
  readonly random?: () => number;
  /** Called before each wait; never receives secrets. */
  readonly onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

interface Classified {
  readonly retryable: boolean;
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  readonly reason: string;
}

/** Parses `retry-after-ms`, then `retry-after` (seconds or an HTTP date). Null when absent or unparseable. */
export function retryAfterFromHeaders(
  headers: Headers | Record<string, string> | undefined,
  now = Date.now(),
): number | null {
  if (!headers) return null;
  const get = (name: string): string | null =>
    headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()] ?? null);
  const ms = get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = get('retry-after');
  if (ra !== null && ra.trim() !== '') {
    const seconds = Number(ra);
    if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
    const date = Date.parse(ra);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return null;
}

function classify(err: unknown): Classified {
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return { retryable: true, status: null, retryAfterMs: null, reason: 'timed out' };
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return { retryable: true, status: null, retryAfterMs: null, reason: 'connection failed' };
  }
  if (err instanceof OpenAI.APIError) {
    const status = typeof err.status === 'number' ? err.status : null;
    const retryable =
      status !== null && (status === 408 || status === 409 || status === 429 || status >= 500);
    const headers = err.headers instanceof Headers ? err.headers : undefined;
    return {
      retryable,
      status,
      retryAfterMs: retryable ? retryAfterFromHeaders(headers) : null,
      reason: `HTTP ${status ?? '?'}`,
    };
  }
  if (err instanceof SyntaxError) {
    // A 200 with a body that is not JSON: a broken proxy or a cut connection, worth another attempt.
    return { retryable: true, status: null, retryAfterMs: null, reason: 'malformed response body' };
  }
  if (err instanceof MalformedResponseError) {
    return { retryable: true, status: null, retryAfterMs: null, reason: err.message };
  }
  if (err instanceof TypeError) {
    // undici: "terminated" / "fetch failed" while reading the body.
    return {
      retryable: true,
      status: null,
      retryAfterMs: null,
      reason: 'connection failed while reading the body',
    };
  }
  return { retryable: false, status: null, retryAfterMs: null, reason: 'unexpected error' };
}

/** Thrown by response checks inside an attempt: the body parsed but is not the expected shape. Retried. */
export class MalformedResponseError extends Error {
  override name = 'MalformedResponseError';
}

function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  if (err instanceof OpenAI.APIUserAbortError) return true;
  return err instanceof Error && err.name === 'AbortError';
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Backoff for attempt `n` (1 = the wait after the first failure): base·2^(n-1), capped, times a jitter in [0.5, 1]. */
export function backoffDelay(n: number, policy: RetryPolicy): number {
  const base = policy.baseDelayMs ?? 250;
  const cap = policy.maxDelayMs ?? 8000;
  const raw = Math.min(cap, base * 2 ** (n - 1));
  const r = (policy.random ?? Math.random)();
  return Math.round(raw * (0.5 + 0.5 * r));
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or `maxAttempts` is reached.
 * Errors are mapped to `OpenAIAbortedError` (an engine `AbortedError`) or `OpenAIProviderError`, with messages passed through `redact`.
 * `what` names the call in messages (e.g. `responses` on host `api.openai.com`).
 */
export async function withRetries<T>(
  what: string,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  redact: (text: string) => string,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  const maxAttempts = Math.max(1, Math.floor(policy.maxAttempts));
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw new OpenAIAbortedError({ cause: signal.reason });
    try {
      return await attempt(n);
    } catch (err) {
      if (err instanceof Mem01Error) throw err;
      if (isAbort(err, signal))
        throw new OpenAIAbortedError({ cause: signal?.reason ?? safeCause(err, redact) });
      const c = classify(err);
      const detail = describe(err, redact);
      const tooLong = c.retryAfterMs !== null && c.retryAfterMs > (policy.maxRetryAfterMs ?? 60_000);
      if (!c.retryable || n >= maxAttempts || tooLong) {
        const why = !c.retryable
          ? ''
          : tooLong
            ? ` (server asked to wait ${Math.round(c.retryAfterMs ?? 0)} ms; not waiting)`
            : ` after ${n} attempt${n === 1 ? '' : 's'}`;
        throw new OpenAIProviderError(
          `OpenAI ${what} failed: ${c.reason}${detail ? ` (${detail})` : ''}${why}`,
          { status: c.status, attempts: n, retryAfterMs: c.retryAfterMs, retryable: c.retryable },
          { cause: safeCause(err, redact) },
        );
      }
      const delayMs = c.retryAfterMs ?? backoffDelay(n, policy);
      policy.onRetry?.({ attempt: n, delayMs, reason: c.reason });
      try {
        await sleep(delayMs, signal);
      } catch {
        throw new OpenAIAbortedError({ cause: signal?.reason });
      }
    }
  }
}

function describe(err: unknown, redact: (text: string) => string): string {
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const body = err.error as { message?: unknown } | undefined;
    const msg = typeof body?.message === 'string' ? body.message : '';
    return redact(msg).slice(0, 300);
  }
  if (err instanceof OpenAI.APIConnectionError) return '';
  if (err instanceof Error) return redact(err.message).slice(0, 300);
  return '';
}

/**
 * A secret-free stand-in for the driver error, kept as `cause`: same name, status, code and request id, message
 * redacted. The original could carry a server-echoed key in its body or headers.
 */
function safeCause(err: unknown, redact: (text: string) => string): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const copy = new Error(redact(e.message).slice(0, 500));
  copy.name = e.name;
  const extra = copy as Error & { status?: unknown; code?: unknown; requestID?: unknown };
  const src = e as Error & { status?: unknown; code?: unknown; requestID?: unknown };
  if (typeof src.status === 'number') extra.status = src.status;
  if (typeof src.code === 'string') extra.code = redact(src.code);
  if (typeof src.requestID === 'string') extra.requestID = src.requestID;
  return copy;
}
