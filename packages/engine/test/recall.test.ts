import { describe, expect, it } from 'vitest';
import {
  collapseCovered,
  compareScored,
  DEFAULT_RANKING,
  rankHits,
  rankProfile,
  recencyScore,
} from '../src/recall.js';
import { belief, T0 } from './helpers.js';

const now = Date.parse('2026-01-02T00:00:00.000Z');

describe('rankHits', () => {
  it('fuses lexical and vector relevance, and explains each signal', () => {
    const a = belief('home_city', 'SF');
    const b = belief('rent', '$2,400');
    const ranked = rankHits(
      [
        { belief: a, score: 4 },
        { belief: b, score: 1 },
      ],
      [{ belief: b, score: 0.9 }],
      { now, limit: 10, config: DEFAULT_RANKING },
    );
    expect(ranked.map((r) => r.belief.id)).toEqual([a.id, b.id]);
    const sa = ranked[0]!.signals!;
    expect(sa.lexical).toBe(1);
    expect(sa.lexicalRaw).toBe(4);
    expect(sa.vector).toBeNull();
    expect(ranked[1]!.signals!.vector).toBeCloseTo(0.9);
    expect(ranked[1]!.signals!.lexical).toBeCloseTo(0.25);
    expect(sa.total).toBe(ranked[0]!.score);
  });

  it('returns nothing relevant when only vector similarity below the floor matches', () => {
    const a = belief('home_city', 'SF');
    expect(rankHits([], [{ belief: a, score: 0.1 }], { now, limit: 5, config: DEFAULT_RANKING })).toEqual([]);
  });

  it('breaks ties deterministically: newer storedAt first, then id', () => {
    const x = { ...belief('a', '1'), id: '0001', storedAt: T0 };
    const y = { ...belief('b', '1'), id: '0002', storedAt: T0 };
    const z = { ...belief('c', '1'), id: '0000', storedAt: '2026-01-01T12:00:00.000Z' };
    const hits = [y, x, z].map((b) => ({ belief: { ...b, confidence: 0.5 }, score: 1 }));
    const ranked = rankHits(hits, [], { now, limit: 5, config: { ...DEFAULT_RANKING, halfLifeDays: 1e9 } });
    expect(ranked.map((r) => r.belief.id)).toEqual(['0000', '0001', '0002']);
    expect([...ranked].sort(compareScored)).toEqual(ranked);
  });

  it('respects the limit and the kind weights', () => {
    const ep = { ...belief('e', 'x'), kind: 'episode' as const };
    const fact = belief('f', 'x');
    const ranked = rankHits(
      [
        { belief: ep, score: 1 },
        { belief: fact, score: 1 },
      ],
      [],
      { now, limit: 1, config: DEFAULT_RANKING },
    );
    expect(ranked.map((r) => r.belief.id)).toEqual([fact.id]);
  });
});

describe('recency and profile', () => {
  it('halves after one half-life', () => {
    const day = 86_400_000;
    expect(recencyScore(T0, Date.parse(T0), 10)).toBe(1);
    expect(recencyScore(T0, Date.parse(T0) + 10 * day, 10)).toBeCloseTo(0.5);
  });
  it('profile ranks by recency and confidence', () => {
    const old = { ...belief('a', '1'), storedAt: '2020-01-01T00:00:00.000Z' };
    const fresh = belief('b', '1');
    expect(
      rankProfile([old, fresh], { now, limit: 5, config: DEFAULT_RANKING }).map((r) => r.belief.id),
    ).toEqual([fresh.id, old.id]);
  });
});

describe('collapseCovered', () => {
  const ev = (position: number) => ({ sessionId: 's', position, role: 'user' as const, quote: 'q', at: T0 });
  const scored = (kind: 'episode' | 'fact', positions: number[], id: string) => ({
    belief: { ...belief('a', id), id, kind, evidence: positions.map(ev) },
    score: 1,
  });
  it('drops an episode whose turn is covered, and a belief whose turns a better episode covers', () => {
    const ranked = [
      scored('fact', [1], 'f1'),
      scored('episode', [1], 'e1'),
      scored('episode', [2], 'e2'),
      scored('fact', [2], 'f2'),
      scored('fact', [1, 3], 'f3'),
      scored('fact', [4], 'f4'),
    ];
    expect(collapseCovered(ranked, 10).map((r) => r.belief.id)).toEqual(['f1', 'e2', 'f3', 'f4']);
    expect(collapseCovered(ranked, 2).map((r) => r.belief.id)).toEqual(['f1', 'e2']);
  });
  it('keeps beliefs without episodes: two facts from one turn both stay', () => {
    const ranked = [scored('fact', [1], 'a'), scored('fact', [1], 'b')];
    expect(collapseCovered(ranked, 10).map((r) => r.belief.id)).toEqual(['a', 'b']);
  });
});
