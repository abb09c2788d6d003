import { describe, expect, it } from 'vitest';
import { LexicalIndex, tokenize } from './lexical-index.js';

describe('tokenize', () => {
  it('lower-cases, splits on anything but letters and digits, drops English stop words', () => {
    expect(tokenize('The user\'s HOME_city: "Lisbon" (and 2 cats)!')).toEqual(
      tokenize('user home city lisbon 2 cats'),
    );
    expect(tokenize('the and of a to in')).toEqual([]);
    expect(tokenize("' OR 1=1 -- NEAR( * \u0000 🎉")).toEqual(['1', '1', 'near']);
  });

  it('stems inflections to one term', () => {
    expect(tokenize('hiking')).toEqual(tokenize('hikes'));
    expect(tokenize('running runs')).toEqual([tokenize('run')[0], tokenize('run')[0]]);
  });
});

describe('LexicalIndex (BM25)', () => {
  const scores = (index: LexicalIndex<string>, query: string, limit = 10) => {
    const out = new Map<string, number>();
    index.score(
      // The content words a store receives (these queries have nothing else).
      query.split(' '),
      limit,
      () => true,
      (doc, score) => out.set(doc, score),
    );
    return out;
  };

  it('ranks a shorter document above a longer one with the same term frequency (b = 0.75)', () => {
    const index = new LexicalIndex<string>();
    index.add('short', 'coffee grinder');
    index.add('long', 'coffee with oat milk sugar cinnamon vanilla syrup foam');
    index.add('other', 'green tea');
    const s = scores(index, 'coffee');
    expect(s.get('short')!).toBeGreaterThan(s.get('long')!);
    expect(s.has('other')).toBe(false);
  });

  it('rarer terms weigh more (idf), and removal takes a document out of every posting', () => {
    const index = new LexicalIndex<string>();
    for (let i = 0; i < 20; i++) index.add(`common${i}`, `user likes tea number${i}`);
    index.add('rare', 'user likes saffron');
    const s = scores(index, 'saffron tea', 30);
    expect(Math.max(...s.values())).toBe(s.get('rare'));
    index.remove('rare');
    expect(scores(index, 'saffron').size).toBe(0);
    expect(index.size).toBe(20);
  });

  it('pruning with a very common term keeps the exact top-k', () => {
    const index = new LexicalIndex<string>();
    for (let i = 0; i < 500; i++)
      index.add(`d${i}`, `the user mentioned ${i % 7 === 0 ? 'heron' : 'sparrow'} item${i}`);
    const all = scores(index, 'user heron', 1000);
    const top = [...all.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5);
    const pruned = scores(index, 'user heron', 5);
    for (const [doc, score] of top) expect(pruned.get(doc)).toBeCloseTo(score, 12);
  });
});
