import { inspect } from 'node:util';
import { ConfigError } from '@mem01/engine';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOpenAIEmbedder, createOpenAIExtractor, credentialFingerprint } from '../src/index.js';
import { type FakeOpenAI, startFakeOpenAI } from '../src/testing/index.js';
import { captureLogger, FAST_RETRY, NOW, turn } from './helpers.js';

const fake: FakeOpenAI = await startFakeOpenAI();
afterAll(() => fake.close());
beforeEach(() => fake.reset());

// One key in OpenAI's format and one a gateway might issue, which no generic pattern would catch.
const KEYS = ['sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234', 'gateway-token-77f1c0de5ecret'];

function leaks(text: string, key: string): boolean {
  return text.includes(key) || text.includes(key.slice(-12));
}

describe.each(KEYS)('the API key %#', (key) => {
  const opts = { apiKey: key, baseURL: fake.url, retry: FAST_RETRY, maxAttempts: 2 };

  it('is absent from inspect, toString and JSON of the extractor and embedder', () => {
    for (const obj of [createOpenAIExtractor(opts), createOpenAIEmbedder(opts)]) {
      for (const text of [inspect(obj, { depth: 20, showHidden: true }), String(obj), JSON.stringify(obj)]) {
        expect(leaks(text, key)).toBe(false);
        expect(text).toContain(credentialFingerprint(key, fake.url));
      }
    }
  });

  it('is sent to the server but not recorded by it', async () => {
    await createOpenAIEmbedder(opts).embed(['hello']);
    const req = fake.requests[0]!;
    expect(req.authorized).toBe(true);
    expect(JSON.stringify(req)).not.toContain(key);
  });

  it('is absent from errors (message, cause, inspect) and logs, even when the server echoes it', async () => {
    const echo = {
      error: {
        message: `Incorrect API key provided: ${key}. Bearer ${key}`,
        type: 'invalid_request_error',
        code: key,
      },
    };
    const { lines, logger } = captureLogger();
    fake.script(
      'responses',
      { type: 'status', status: 500, body: echo },
      { type: 'status', status: 401, body: echo },
    );
    const err = await createOpenAIExtractor({ ...opts, logger })
      .extract({ scope: { userId: 'u' }, turns: [turn('user', 'I like tea')], candidates: [], now: NOW })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'provider', status: 401 });
    const texts = [
      (err as Error).message,
      String(err),
      inspect(err, { depth: 20, showHidden: true }),
      JSON.stringify(err),
      String((err as Error).cause),
      (err as Error).stack ?? '',
      ...lines,
    ];
    for (const t of texts) expect(leaks(t, key)).toBe(false);
    expect((err as Error).message).toMatch(/HTTP 401/);
    expect(lines.length).toBe(1);

    fake.script('embeddings', { type: 'status', status: 403, body: echo });
    const err2 = await createOpenAIEmbedder(opts)
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err2).toMatchObject({ status: 403 });
    expect(leaks(inspect(err2, { depth: 20, showHidden: true }), key)).toBe(false);
  });
});

describe('credentials', () => {
  it('fingerprints are short, stable and tell keys and hosts apart', () => {
    const a = credentialFingerprint('sk-one-1234567890');
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(credentialFingerprint('sk-one-1234567890')).toBe(a);
    expect(credentialFingerprint('sk-two-1234567890')).not.toBe(a);
    expect(credentialFingerprint('sk-one-1234567890', 'http://127.0.0.1:1/v1')).not.toBe(a);
    // The extractor and the embedder of one key and URL share a client, named by the fingerprint of both.
    const ex = createOpenAIExtractor({ apiKey: 'sk-one-1234567890', baseURL: null });
    const em = createOpenAIEmbedder({ apiKey: 'sk-one-1234567890', baseURL: null });
    expect(ex.fingerprint).toBe(credentialFingerprint('sk-one-1234567890', 'https://api.openai.com/v1'));
    expect(em.fingerprint).toBe(ex.fingerprint);
  });

  it('a missing key is a ConfigError that says what to do', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    try {
      expect(() => createOpenAIEmbedder({})).toThrow(ConfigError);
      expect(() => createOpenAIExtractor({})).toThrow(/no OpenAI API key.*OPENAI_API_KEY/);
      expect(() => createOpenAIExtractor({ apiKey: ' ' })).toThrow(ConfigError);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
