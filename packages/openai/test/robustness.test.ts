import { inspect } from 'node:util';
import { ProviderError } from '@mem01/engine';
import OpenAI from 'openai';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIExtractor, OpenAIAbortedError, OpenAIProviderError } from '../src/index.js';
import { retryAfterFromHeaders } from '../src/retry.js';
import { type FakeOpenAI, startFakeOpenAI } from '../src/testing/index.js';
import { API_KEY, captureLogger, FAST_RETRY, NOW, turn } from './helpers.js';

const fake: FakeOpenAI = await startFakeOpenAI();
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const scope = { userId: 'u1' };
const u = turn('user', 'I live in Lisbon.');
const ok = {
  type: 'output' as const,
  output: {
    ops: [
      {
        op: 'add',
        kind: 'fact',
        subj: 'user',
        attr: 'home_city',
        val: 'Lisbon',
        stmt: 'The user lives in Lisbon.',
        conf: 0.9,
        from: null,
        to: null,
        ev: [{ t: 't1', q: 'I live in Lisbon' }],
      },
    ],
  },
};

function extractor(extra: Parameters<typeof createOpenAIExtractor>[0] = {}) {
  return createOpenAIExtractor({
    apiKey: API_KEY,
    baseURL: fake.url,
    retry: FAST_RETRY,
    maxAttempts: 3,
    timeoutMs: 2000,
    ...extra,
  });
}
const run = (ex = extractor(), signal?: AbortSignal) =>
  ex.extract({ scope, turns: [u], candidates: [], now: NOW, signal });

describe('retries over HTTP', () => {
  it('waits for Retry-After in seconds on 429, then succeeds', async () => {
    fake.script('responses', { type: 'rate_limit', retryAfter: '1' }, ok);
    const { lines, logger } = captureLogger();
    const result = await run(extractor({ logger }));
    expect(result.operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    expect(lines[0]).toMatch(/attempt 1\/3 failed \(HTTP 429\); retrying in 1000 ms/);
  });

  it('honours Retry-After as an HTTP date and retry-after-ms', async () => {
    const date = new Date(Date.now() + 1500).toUTCString();
    fake.script(
      'responses',
      { type: 'rate_limit', retryAfter: date },
      { type: 'rate_limit', retryAfterMs: 120 },
      ok,
    );
    const { lines, logger } = captureLogger();
    const result = await run(extractor({ logger }));
    expect(result.operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(3);
    const waits = lines.map((l) => Number(/retrying in (\d+) ms/.exec(l)?.[1]));
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[0]).toBeLessThanOrEqual(1500);
    expect(waits[1]).toBe(120);
    expect(retryAfterFromHeaders({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterFromHeaders({ 'retry-after': '2', 'retry-after-ms': '30' })).toBe(30);
  });

  it('does not sleep for a Retry-After beyond maxRetryAfterMs: fails at once with retryAfterMs', async () => {
    fake.script('responses', { type: 'rate_limit', retryAfter: '120' });
    const err = await run(extractor({ retry: { ...FAST_RETRY, maxRetryAfterMs: 5000 } })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAIProviderError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 120_000, attempts: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('retries 500 with exponential backoff and jitter, then gives up after maxAttempts', async () => {
    fake.script('responses', { type: 'status', status: 500 }, { type: 'status', status: 503 }, ok);
    const { lines, logger } = captureLogger();
    const ex = extractor({ logger, retry: { baseDelayMs: 40, maxDelayMs: 1000, random: () => 1 } });
    expect((await run(ex)).operations).toHaveLength(1);
    expect(lines.map((l) => /retrying in (\d+) ms/.exec(l)?.[1])).toEqual(['40', '80']);

    fake.reset();
    fake.script('responses', ...Array.from({ length: 3 }, () => ({ type: 'status' as const, status: 500 })));
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ status: 500, attempts: 3, code: 'provider' });
    expect((err as Error).message).toMatch(/HTTP 500.*after 3 attempts/);
    expect(fake.requests).toHaveLength(3);
  });

  it('jitter spreads the delay between half and all of the exponential step', async () => {
    const { backoffDelay } = await import('../src/retry.js');
    expect(backoffDelay(1, { maxAttempts: 3, baseDelayMs: 100, random: () => 0 })).toBe(50);
    expect(backoffDelay(3, { maxAttempts: 3, baseDelayMs: 100, random: () => 1 })).toBe(400);
    expect(backoffDelay(10, { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 })).toBe(
      1000,
    );
  });

  it('does not retry a 400', async () => {
    fake.script('responses', { type: 'status', status: 400 });
    await expect(run()).rejects.toMatchObject({ status: 400, attempts: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('times out a slow reply and retries it', async () => {
    fake.script('responses', { type: 'slow', delayMs: 3000 }, ok);
    const result = await run(extractor({ timeoutMs: 250 }));
    expect(result.operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);

    fake.reset();
    fake.script('responses', { type: 'slow', delayMs: 3000 }, { type: 'slow', delayMs: 3000 });
    const err = await run(extractor({ timeoutMs: 250, maxAttempts: 2 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAIProviderError);
    expect((err as Error).message).toMatch(/timed out.*after 2 attempts/);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries a malformed body, and reports it when it persists', async () => {
    fake.script('responses', { type: 'malformed' }, ok);
    expect((await run()).operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);

    fake.reset();
    fake.script('responses', { type: 'malformed' }, { type: 'malformed' }, { type: 'malformed' });
    await expect(run()).rejects.toThrow(/malformed response body/);
    expect(fake.requests).toHaveLength(3);
  });

  it('retries a truncated body and a reset connection', async () => {
    fake.script('responses', { type: 'truncated' }, { type: 'reset' }, ok);
    const { lines, logger } = captureLogger();
    expect((await run(extractor({ logger }))).operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(3);
    expect(lines.map((l) => /failed \((.*)\); retrying/.exec(l)?.[1])).toEqual([
      'connection failed while reading the body',
      'connection failed',
    ]);
  });

  it('retries a 200 that is not a Responses object', async () => {
    fake.script('responses', { type: 'json', body: { hello: 'world' } }, ok);
    expect((await run()).operations).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });
});

describe('an injected client', () => {
  it('is used with our retry policy instead of its own, and its key stays hidden', async () => {
    const key = 'injected-secret-token-123456';
    const client = new OpenAI({ apiKey: key, baseURL: fake.url, maxRetries: 7, timeout: 600_000 });
    const ex = createOpenAIExtractor({ client, maxAttempts: 2, retry: FAST_RETRY });
    expect(ex.fingerprint).toBe('injected');
    fake.script('responses', ...Array.from({ length: 4 }, () => ({ type: 'status' as const, status: 500 })));
    const err = await run(ex).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 500, attempts: 2 });
    expect(fake.requests).toHaveLength(2);
    expect(inspect(ex)).not.toContain(key);
    fake.reset();
    fake.script('responses', { type: 'slow', delayMs: 3000 });
    const slow = createOpenAIExtractor({ client, maxAttempts: 1, timeoutMs: 200 });
    await expect(run(slow)).rejects.toThrow(/timed out/);
  });
});

describe('cancellation', () => {
  it('aborts an in-flight request', async () => {
    fake.script('responses', { type: 'slow', delayMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    // Aborted, not timed out: the extractor's 2 s timeout would end the 5 s response with a timeout error instead, so
    // the error's class shows the abort ended the request (no clock is read: the machine may be loaded).
    await expect(run(extractor(), controller.signal)).rejects.toThrow(OpenAIAbortedError);
    expect(fake.requests).toHaveLength(1);
  });

  it('aborts during a retry wait', async () => {
    fake.script('responses', { type: 'rate_limit', retryAfterMs: 5000 }, ok);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    await expect(run(extractor(), controller.signal)).rejects.toMatchObject({ code: 'aborted' });
    expect(fake.requests).toHaveLength(1);
  });

  it('makes no request when already aborted', async () => {
    await expect(run(extractor(), AbortSignal.abort())).rejects.toThrow(OpenAIAbortedError);
    expect(fake.requests).toHaveLength(0);
  });
});
