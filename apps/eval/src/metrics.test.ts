import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bm25Tokens } from './bm25.js';
import { aggregate, answerWordsIn, breakdown, coverage, percentile, scoreQuestion } from './metrics.js';

describe('scoreQuestion', () => {
  it('counts each evidence turn a memory covers, at each k', () => {
    const ranked = [['D9:9'], ['D1:1', 'D1:2'], ['D3:3'], ['D2:2']];
    const s = scoreQuestion(ranked, ['D1:1', 'D2:2', 'D5:5'], [1, 2, 4], 4);
    expect(s.recall).toEqual({ 1: 0, 2: 1 / 3, 4: 2 / 3 });
    expect(s.allHit).toEqual({ 1: 0, 2: 0, 4: 0 });
    expect(s.reciprocalRank).toBe(1 / 2);
    expect(s.turnsCovered).toEqual({ 1: 1, 2: 3, 4: 5 });
  });

  it('all-evidence hit needs every turn; one memory may cover them all', () => {
    const s = scoreQuestion([['D1:1', 'D2:2']], ['D2:2', 'D1:1'], [1, 5], 1);
    expect(s.recall).toEqual({ 1: 1, 5: 1 });
    expect(s.allHit).toEqual({ 1: 1, 5: 1 });
    expect(s.reciprocalRank).toBe(1);
  });

  it('ignores ranks beyond the largest k and scores an empty result as zero', () => {
    const s = scoreQuestion([['x'], ['y'], ['D1:1']], ['D1:1'], [2], 2);
    expect(s.recall[2]).toBe(0);
    expect(s.reciprocalRank).toBe(0);
    const e = scoreQuestion([], ['D1:1'], [5], 2);
    expect(e).toMatchObject({
      recall: { 5: 0 },
      allHit: { 5: 0 },
      reciprocalRank: 0,
      turnsCovered: { 5: 0 },
    });
  });

  it('refuses empty evidence', () => {
    expect(() => scoreQuestion([], [], [5], 1)).toThrow(RangeError);
  });

  it('is bounded and monotone in k (property)', () => {
    const id = fc.constantFrom('D1:1', 'D1:2', 'D2:1', 'D2:2', 'D3:1');
    fc.assert(
      fc.property(
        fc.array(fc.array(id, { maxLength: 3 }), { maxLength: 12 }),
        fc.uniqueArray(id, { minLength: 1 }),
        (ranked, evidence) => {
          const ks = [1, 3, 5, 10];
          const s = scoreQuestion(ranked, evidence, ks, 1);
          let prev = -1;
          for (const k of ks) {
            const r = s.recall[k] as number;
            expect(r).toBeGreaterThanOrEqual(0);
            expect(r).toBeLessThanOrEqual(1);
            expect(r).toBeGreaterThanOrEqual(prev);
            prev = r;
            expect(s.allHit[k]).toBe(r === 1 ? 1 : 0);
            expect(s.turnsCovered[k]).toBeLessThanOrEqual(k * 3);
          }
          expect(s.reciprocalRank).toBeGreaterThanOrEqual(0);
          expect(s.reciprocalRank).toBeLessThanOrEqual(1);
          expect(s.reciprocalRank > 0).toBe((s.recall[10] as number) > 0);
        },
      ),
    );
  });
});

describe('aggregate and breakdown', () => {
  const q = (cat: number, r: number) => ({
    category: cat,
    recall: { 10: r },
    allHit: { 10: r === 1 ? 1 : 0 },
    reciprocalRank: r > 0 ? 1 : 0,
    turnsCovered: { 10: 10 },
  });

  it('averages per category, with and without adversarial', () => {
    const b = breakdown([q(1, 1), q(1, 0), q(5, 1), q(4, 0.5)], [10]);
    expect(Object.keys(b.byCategory)).toEqual(['1', '4', '5']);
    expect(b.byCategory['1']?.recall[10]).toBe(0.5);
    expect(b.allButAdversarial).toMatchObject({ questions: 3, recall: { 10: 0.5 }, allHit: { 10: 1 / 3 } });
    expect(b.all).toMatchObject({ questions: 4, recall: { 10: 0.625 }, mrr: 0.75 });
  });

  it('an empty group is zero, not NaN', () => {
    expect(aggregate([], [5])).toEqual({
      questions: 0,
      recall: { 5: 0 },
      allHit: { 5: 0 },
      mrr: 0,
      turnsCovered: { 5: 0 },
      blockRecall: null,
      answerInBlock: null,
    });
  });

  it("answer words in the block: the share of the answer's words the block's text holds, averaged where there is one", () => {
    expect(
      answerWordsIn('adoption agencies', '[user said 2023-05-25] Researching adoption agencies', bm25Tokens),
    ).toBe(1);
    expect(answerWordsIn('Pride parade, school speech', 'I went to the pride parade', bm25Tokens)).toBe(0.5);
    // A bare stop word gives nothing to look for.
    expect(answerWordsIn('the', 'anything', bm25Tokens)).toBeUndefined();
    const base = scoreQuestion([['D1:1']], ['D1:1'], [5], 1, [['D1:1']]);
    const scores = [
      { ...base, answerInBlock: 1 },
      { ...base, answerInBlock: 0.5 },
      base, // no answer: left out of the mean
    ];
    expect(aggregate(scores, [5]).answerInBlock).toBe(0.75);
  });

  it('block recall: the evidence covered by the block, in any order, averaged over questions with a block', () => {
    expect(coverage([['D9:9'], ['D1:2', 'D1:1']], ['D1:1', 'D1:2', 'D3:3', 'D4:4'])).toBe(0.5);
    expect(coverage([], ['D1:1'])).toBe(0);
    expect(() => coverage([['D1:1']], [])).toThrow(RangeError);
    const withBlock = scoreQuestion([['D1:1']], ['D1:1', 'D2:2'], [5], 4, [['D2:2'], ['D2:2']]);
    expect(withBlock.block).toBe(0.5);
    expect(scoreQuestion([['D1:1']], ['D1:1'], [5], 4).block).toBeUndefined();
    const noBlock = scoreQuestion([], ['D1:1'], [5], 4);
    expect(aggregate([withBlock, noBlock, { ...withBlock, block: 1 }], [5]).blockRecall).toBe(0.75);
    expect(aggregate([noBlock], [5]).blockRecall).toBeNull();
  });
});

describe('percentile', () => {
  it('nearest rank', () => {
    const v = [5, 1, 4, 2, 3, 6, 7, 8, 9, 10];
    expect(percentile(v, 50)).toBe(5);
    expect(percentile(v, 95)).toBe(10);
    expect(percentile(v, 0)).toBe(1);
    expect(percentile([], 50)).toBe(0);
  });
});
