import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createBelief } from '../src/belief.js';
import { resolveConfig } from '../src/config.js';
import { describeError, InvalidInputError, Mem01Error, StoreError, sanitize } from '../src/errors.js';
import {
  bytesToVector,
  contentHash,
  cosineSimilarity,
  idempotencyKey,
  newId,
  normalizeScope,
  pick,
  stableJson,
  vectorToBytes,
} from '../src/util.js';

describe('scopes and ids', () => {
  it('normalises the namespace and rejects bad user ids', () => {
    expect(normalizeScope({ userId: 'u' })).toEqual({ userId: 'u', namespace: '' });
    for (const bad of [
      { userId: '' },
      { userId: '  ' },
      { userId: 3 },
      { userId: 'a\u0000b' },
      { userId: 'lone\ud800surrogate' },
      null,
      'u',
      { userId: 'x'.repeat(300) },
    ]) {
      expect(() => normalizeScope(bad)).toThrow(InvalidInputError);
    }
  });
  it('ids are time-ordered UUIDv7', () => {
    const ids = Array.from({ length: 50 }, () => newId());
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('createBelief', () => {
  const base = {
    scope: { userId: 'u' },
    kind: 'fact' as const,
    subject: 'User',
    attribute: 'Home City',
    value: 'NYC',
    statement: 'The user lives in NYC.',
    confidence: 0.9,
    source: 'extracted' as const,
    at: '2026-01-01T00:00:00.000Z',
  };
  it('canonicalises keys and starts at version 1', () => {
    expect(createBelief(base)).toMatchObject({
      subject: 'user',
      attribute: 'home_city',
      version: 1,
      status: 'active',
    });
  });
  it('rejects NaN confidence, unknown kinds and oversized text', () => {
    expect(() => createBelief({ ...base, confidence: Number.NaN })).toThrow(InvalidInputError);
    expect(() => createBelief({ ...base, kind: 'x' as never })).toThrow(InvalidInputError);
    expect(() => createBelief({ ...base, statement: 'x'.repeat(100) }, 64)).toThrow(/over the limit/);
  });
});

describe('hashing and vectors', () => {
  it('idempotency keys differ by position and content', () => {
    expect(idempotencyKey('s', 1, 'a')).toBe(idempotencyKey('s', 1, 'a'));
    expect(idempotencyKey('s', 1, 'a')).not.toBe(idempotencyKey('s', 2, 'a'));
    expect(contentHash('a')).not.toBe(contentHash('b'));
    expect(contentHash('x')).toMatch(/^[0-9a-f]{16}$/);
  });
  it('vectors round-trip through bytes', () => {
    const v = new Float32Array([0.5, -1, 3.25]);
    expect([...bytesToVector(vectorToBytes(v))]).toEqual([...v]);
    expect(cosineSimilarity(v, v)).toBeCloseTo(1);
    expect(() => bytesToVector(new Uint8Array(5))).toThrow(InvalidInputError);
  });
  it('stableJson ignores key order', () => {
    expect(stableJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe(stableJson({ a: [{ c: 2, d: 1 }], b: 1 }));
  });
});

describe('errors', () => {
  it('set name from the subclass, keep a stable code and the cause', () => {
    const cause = new Error('driver said no');
    const e = new StoreError('write failed', { cause });
    expect(e).toBeInstanceOf(Mem01Error);
    expect(e.name).toBe('StoreError');
    expect(e.code).toBe('store');
    expect(e.cause).toBe(cause);
  });
  it('never carry secrets', () => {
    const key = 'sk-proj-abcdefghijklmnop1234567890';
    const e = new StoreError(`failed with ${key} at postgres://app:hunter2@db:5432/x`);
    for (const text of [e.message, String(e), inspect(e), describeError(e), sanitize(`Bearer ${key}`)]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain('hunter2');
    }
  });
});

describe('config', () => {
  it('blockBytes sizes the block; budgetBytes, its deprecated name, still does and reads the same', () => {
    expect(resolveConfig({ blockBytes: 600 }, null)).toMatchObject({ blockBytes: 600, budgetBytes: 600 });
    expect(resolveConfig({ budgetBytes: 500 }, null)).toMatchObject({ blockBytes: 500, budgetBytes: 500 });
    expect(resolveConfig({ blockBytes: 500, budgetBytes: 500 }, null).blockBytes).toBe(500);
    expect(() => resolveConfig({ blockBytes: 600, budgetBytes: 500 }, null)).toThrow(
      'config.blockBytes: and budgetBytes (its deprecated name) differ: set blockBytes only',
    );
    expect(() => resolveConfig({ budgetBytes: 10 }, null)).toThrow(/config\.blockBytes: must be an integer/);
  });
  it('resolves defaults once and validates fields', () => {
    expect(resolveConfig(undefined, null)).toMatchObject({
      blockBytes: 800,
      strict: false,
      pendingBelow: 0.5,
    });
    expect(() => resolveConfig({ blockBytes: 10 }, null)).toThrow(InvalidInputError);
    expect(() => resolveConfig({ pendingBelow: Number.NaN }, null)).toThrow(InvalidInputError);
    expect(() => resolveConfig({ concurrency: 0 }, null)).toThrow(InvalidInputError);
    for (const contextWeight of [-0.1, 1.5, Number.NaN, '0.3' as never]) {
      expect(() => resolveConfig({ ranking: { contextWeight } }, null), String(contextWeight)).toThrow(
        /config\.ranking\.contextWeight/,
      );
    }
    expect(() => resolveConfig({ ranking: { halfLifeDays: 0 } }, null)).toThrow(/halfLifeDays/);
    expect(resolveConfig({ ranking: { contextWeight: 0 } }, null).ranking.contextWeight).toBe(0);
  });
  it('duplicateSimilarity is 0.9 by default, null turns it off, anything but a number in (0, 1] is refused', () => {
    expect(resolveConfig(undefined, null).duplicateSimilarity).toBe(0.9);
    expect(resolveConfig({ duplicateSimilarity: null }, null).duplicateSimilarity).toBeNull();
    expect(resolveConfig({ duplicateSimilarity: 1 }, null).duplicateSimilarity).toBe(1);
    for (const duplicateSimilarity of [0, -0.5, 1.01, Number.NaN, '0.9' as never]) {
      expect(() => resolveConfig({ duplicateSimilarity }, null), String(duplicateSimilarity)).toThrow(
        /config\.duplicateSimilarity/,
      );
    }
  });
  it('takes the similarity floor from the embedder', () => {
    const embedder = { model: 'm', dimensions: 3, minSimilarity: 0.42, embed: async () => [] };
    expect(resolveConfig({}, embedder).ranking.minSimilarity).toBe(0.42);
  });
});

describe('contentWords', () => {
  it('keeps content words only, with no syntax', async () => {
    const { contentWords } = await import('../src/text.js');
    expect(contentWords("What is my sister's name?")).toEqual(['sister', 'name']);
    expect(contentWords('Where do I live and what is my rent?')).toEqual(['live', 'rent']);
    expect(contentWords('" OR 1=1 -- NEAR(a b) *')).toEqual(['1', '1', 'near', 'b']);
    expect(contentWords('what is it?')).toEqual([]);
  });
});

describe('pick', () => {
  it('copies the named fields in their order and leaves out undefined ones', () => {
    const record: { a: number; b?: string; c: string; d: number } = { d: 4, c: 'c', a: 1, b: undefined };
    const picked = pick(record, ['c', 'a', 'b']);
    expect(picked).toEqual({ c: 'c', a: 1 });
    expect(Object.keys(picked)).toEqual(['c', 'a']);
    expect('b' in picked).toBe(false);
  });
});
