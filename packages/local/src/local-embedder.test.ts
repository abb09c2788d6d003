import { readFileSync } from 'node:fs';
import { InvalidInputError } from '@mem01/engine';
import { cosineSimilarity } from '@mem01/engine/provider-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLocalEmbedder, DEFAULT_MIN_SIMILARITY, type LocalEmbedder } from './index.js';

const embedder = createLocalEmbedder();

async function sim(a: string, b: string, e: LocalEmbedder = embedder): Promise<number> {
  const [x, y] = await e.embed([a, b]);
  return cosineSimilarity(x!, y!);
}

function norm(v: Float32Array): number {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
}

/** Query → statement pairs that share words or stems (what a lexical-fuzzy embedder can see). */
const PAIRS = JSON.parse(
  readFileSync(new URL('../test/fixtures/similarity-pairs.json', import.meta.url), 'utf8'),
) as { related: [string, string][]; unrelated: [string, string][]; semantic: [string, string][] };
/** Query → statement pairs that share words or stems (what a lexical-fuzzy embedder can see). */
const RELATED = PAIRS.related;
/** Pairs with no topic in common. */
const UNRELATED = PAIRS.unrelated;

describe('LocalEmbedder', () => {
  it('declares its model, dimensions and a similarity floor', () => {
    expect(embedder.model).toBe('mem01-local-hash-v1-384');
    expect(embedder.dimensions).toBe(384);
    expect(embedder.minSimilarity).toBe(DEFAULT_MIN_SIMILARITY);
  });

  it('gives one unit-length Float32Array per text, in order', async () => {
    const texts = ['The user lives in NYC.', 'hello', 'Ünïcödé façade 東京'];
    const vs = await embedder.embed(texts);
    expect(vs).toHaveLength(3);
    for (const v of vs) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(384);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(cosineSimilarity(vs[0]!, vs[1]!)).toBeLessThan(0.99);
  });

  it('is deterministic across calls and instances (property)', async () => {
    const other = createLocalEmbedder();
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), async (text) => {
        const [a] = await embedder.embed([text]);
        const [b] = await other.embed([text]);
        expect(Array.from(b!)).toEqual(Array.from(a!));
        const n = norm(a!);
        // Unit length, or all zeros for text without words.
        expect(n === 0 || Math.abs(n - 1) < 1e-5).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('embeds text with no words to the zero vector', async () => {
    const [v] = await embedder.embed(['', '   ', '!!!']);
    expect(norm(v!)).toBe(0);
  });

  it('is case-insensitive and stems words', async () => {
    expect(await sim('LIVES IN NYC', 'lives in nyc')).toBeCloseTo(1, 5);
    expect(await sim('running marathons', 'run a marathon')).toBeGreaterThan(0.5);
  });

  it.each(RELATED)('related: %j ~ %j above the floor', async (a, b) => {
    expect(await sim(a, b)).toBeGreaterThanOrEqual(DEFAULT_MIN_SIMILARITY);
  });

  it.each(UNRELATED)('unrelated: %j vs %j below the floor', async (a, b) => {
    expect(await sim(a, b)).toBeLessThan(DEFAULT_MIN_SIMILARITY);
  });

  it('ranks a related statement above unrelated ones for every query', async () => {
    for (const [q, good] of RELATED) {
      const s = await sim(q, good);
      for (const [, other] of UNRELATED) {
        if (other === good) continue;
        if (RELATED.some(([q2, g2]) => q2 === q && g2 === other)) continue;
        expect(s).toBeGreaterThan(await sim(q, other));
      }
    }
  });

  it.each(PAIRS.semantic)('is lexical, not semantic: %j vs %j stays below the floor', async (a, b) => {
    // Documented limitation: related in meaning only, with no shared words or stems.
    expect(await sim(a, b)).toBeLessThan(DEFAULT_MIN_SIMILARITY);
  });

  it('honours the dimensions option', async () => {
    const small = createLocalEmbedder({ dimensions: 64 });
    expect(small.model).toBe('mem01-local-hash-v1-64');
    const [v] = await small.embed(['The user lives in NYC.']);
    expect(v!.length).toBe(64);
    expect(norm(v!)).toBeCloseTo(1, 5);
    expect(await sim('Where do I live?', 'The user lives in NYC.', small)).toBeGreaterThan(
      await sim('Where do I live?', 'The user likes sushi.', small),
    );
  });

  it('names non-default feature settings in the model id (they change the vectors)', async () => {
    const e = createLocalEmbedder({ ngramMin: 2, ngramMax: 4 });
    expect(e.model).not.toBe(embedder.model);
    const [a] = await e.embed(['sushi']);
    const [b] = await embedder.embed(['sushi']);
    expect(Array.from(a!)).not.toEqual(Array.from(b!));
  });

  it('rejects bad options and inputs with InvalidInputError', async () => {
    expect(() => createLocalEmbedder({ dimensions: 0 })).toThrow(InvalidInputError);
    expect(() => createLocalEmbedder({ dimensions: 1.5 })).toThrow(InvalidInputError);
    expect(() => createLocalEmbedder({ ngramMin: 4, ngramMax: 3 })).toThrow(InvalidInputError);
    expect(() => createLocalEmbedder({ minSimilarity: 2 })).toThrow(InvalidInputError);
    expect(() => createLocalEmbedder({ wordWeight: 0, ngramWeight: 0 })).toThrow(InvalidInputError);
    await expect(embedder.embed([42 as unknown as string])).rejects.toThrow(InvalidInputError);
    await expect(embedder.embed('text' as unknown as string[])).rejects.toThrow(InvalidInputError);
  });

  it('honours an aborted signal', async () => {
    const c = new AbortController();
    c.abort();
    await expect(embedder.embed(['x'], { signal: c.signal })).rejects.toThrow();
  });
});
