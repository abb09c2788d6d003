/**
 * Secrets are masked in every form: the pure helpers (`sanitize`, `sanitizeError`, `describeError`) on every
 * credential form, embedded in surrounding text, and ordinary text left alone. The engine runs (extractor, embedder
 * and store failures in strict and failure-open modes) are in `secrets-engine.test.ts`.
 */
import { inspect } from 'node:util';
import { embedded } from '@mem01/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeError,
  Mem01Error,
  ProviderError,
  SECRET_PATTERNS,
  sanitize,
  sanitizeError,
} from '../src/errors.js';
import { CREDENTIAL_FORMS, leakedSecret } from '../src/testing/index.js';

describe('sanitize masks every credential form', () => {
  for (const form of CREDENTIAL_FORMS) {
    it(form.id, () => {
      fc.assert(
        fc.property(embedded(form), ({ parts, text }) => {
          const out = sanitize(text);
          expect(leakedSecret(out, parts), out).toBeNull();
          expect(out).toContain('***');
          // Masking again changes nothing.
          expect(sanitize(out)).toBe(out);
        }),
        { numRuns: 80 },
      );
    });
  }

  it('every form, in an error, its cause chain, stack, util.inspect and describeError', () => {
    const every = fc.tuple(...CREDENTIAL_FORMS.map((form) => embedded(form)));
    fc.assert(
      fc.property(every, (cases) => {
        for (const [i, { parts, text }] of cases.entries()) {
          const root = new Error(`driver: ${text}`);
          const err = new ProviderError(`call ${i} failed: ${text}`, 401, {
            cause: new Error(`wrapped`, { cause: root }),
          });
          const outputs = [
            inspect(sanitizeError(err), { depth: 20 }),
            String(sanitizeError(err).stack),
            describeError(err),
            describeError(root),
            describeError(text),
            inspect(sanitizeError(root), { depth: 20 }),
            err.message, // a Mem01Error masks its message when it is made
          ];
          for (const out of outputs) expect(leakedSecret(out, parts), out).toBeNull();
        }
      }),
      { numRuns: 10 },
    );
  });
});

describe('sanitize leaves ordinary text alone', () => {
  const ordinary = [
    'The user moved to Lisbon in March and prefers tea over coffee.',
    'memory pipeline failure: ExtractionError [extraction]: operation 3 has no attribute',
    'belief 0197a3b2-5c1e-7d2f-9a4b-3c2d1e0f9a8b: expected version 2, found 3',
    'session conversation-7 of user user-123 at 2026-01-01T00:00:00.000Z (next retry 2026-02-01T10:30:05.123Z)',
    'commit 9fceb02d0ae598e95dc970b74767f19372d61af8 on main',
    'openai responses failed: rate limited (status 429) after 3 attempts; max_tokens: 512, input_tokens=1200',
    'Basic information about the bearer of this card; the secret is out; a token of thanks',
    'see https://platform.openai.com/docs/guides/error-codes and http://localhost:8080/health',
    'AbortError: the operation was aborted',
    'store "sqlite" does not support vector search',
  ];
  for (const text of ordinary) {
    it(JSON.stringify(text.slice(0, 40)), () => {
      expect(sanitize(text)).toBe(text);
    });
  }

  it('uuids, ISO dates and sentences of plain words, generated', () => {
    const sentence = fc
      .array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 20 })
      .map((w) => w.join(' '));
    const iso = fc
      .date({
        min: new Date('1970-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
    fc.assert(
      fc.property(fc.tuple(sentence, fc.uuid(), iso, fc.nat()), ([s, id, at, n]) => {
        const text = `${s} (belief ${id} at ${at}, ${n} turns)`;
        expect(sanitize(text)).toBe(text);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the masking table', () => {
  it('names each shape once and cites where it comes from', () => {
    const ids = SECRET_PATTERNS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of SECRET_PATTERNS) {
      expect(p.source.length).toBeGreaterThan(0);
      expect(p.pattern.global).toBe(true);
    }
  });

  it('masks the other shapes the README names', () => {
    const cases = [
      'xoxa-2-1234567890-abcdefABCDEF',
      'xoxe-1-ABCDEFGHIJ1234567890abcdefghij',
      'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
      'gldt-Ab1Cd2Ef3Gh4Ij5Kl6Mn',
      'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
      '"client_secret": "q8Zr-2mVx_91LkP"',
      'x-api-key: 1f2e3d4c5b6a7988',
      'secret: hunter2hunter2',
      'https://api.example.com/v1?access_token=a1b2c3d4e5f6&page=2',
    ];
    for (const text of cases) {
      const out = sanitize(text);
      expect(out, text).toContain('***');
      for (const secret of [
        '1234567890-abcdef',
        'ABCDEFGHIJ123',
        'XXXXXXXXXXXX',
        'Ab1Cd2Ef3Gh4',
        '4eC39HqLyjWD',
        'q8Zr-2mVx',
        '1f2e3d4c5b6a',
        'hunter2hunter2',
        'a1b2c3d4e5f6',
      ]) {
        expect(out, text).not.toContain(secret);
      }
    }
    expect(sanitize('https://api.example.com/v1?access_token=a1b2c3d4e5f6&page=2')).toBe(
      'https://api.example.com/v1?access_token=***&page=2',
    );
  });

  it('a sanitised Mem01Error keeps its class, code and fields', () => {
    const err = new ProviderError('refused key sk-abcdefghijklmnopqrstuvwxyz', 429, { retryAfterMs: 1500 });
    const copy = sanitizeError(err);
    expect(copy).toBeInstanceOf(ProviderError);
    expect(copy).toMatchObject({
      code: 'provider',
      status: 429,
      retryAfterMs: 1500,
      name: 'ProviderError',
    });
    expect(copy.message).toBe('refused key ***');
  });

  it('keeps what says where the secret was: the header name, the URL user and host, the AWS key id position', () => {
    expect(sanitize('Authorization: Bearer abcdefghijklmnop0123')).toBe('Authorization: Bearer ***');
    expect(sanitize('postgres://app:hunter2-hunter2@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(sanitize('password=hunter2 user=bob')).toBe('password=*** user=bob');
    expect(sanitize(new Mem01Error('config', 'bad key sk-abcdefghijklmnopqrstuvwxyz').message)).toBe(
      'bad key ***',
    );
  });
});
