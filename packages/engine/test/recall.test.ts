import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import {
  asksAboutReplies,
  collapseCovered,
  compareScored,
  DEFAULT_RANKING,
  LEXICAL_EMBEDDER_WEIGHTS,
  maxRecallTotal,
  rankHits,
  rankProfile,
  recencyScore,
  scaledScore,
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

describe('conversational context', () => {
  const at = (sessionId: string, position: number) => [
    { sessionId, position, role: 'user' as const, quote: 'q', at: T0 },
  ];
  // a (turn 4) matches the question strongly; b (turn 5, the answer) and c (turn 9, far away) weakly, equally.
  const a = belief('question', 'reading', { evidence: at('s1', 4) });
  const b = belief('answer', 'Sapiens', { evidence: at('s1', 5) });
  const c = belief('other', 'tea', { evidence: at('s1', 9) });
  const d = belief('elsewhere', 'x', { evidence: at('s2', 5) });
  const lexical = [
    { belief: a, score: 10 },
    { belief: b, score: 2 },
    { belief: c, score: 2 },
    { belief: d, score: 2 },
  ];
  const rank = (contextWeight: number) =>
    rankHits(lexical, [], { now, limit: 10, config: { ...DEFAULT_RANKING, contextWeight } });

  it('a result next to a strong match gains a share of its score; far turns and other sessions do not', () => {
    const off = new Map(rank(0).map((r) => [r.belief.id, r.score]));
    const on = rank(0.3);
    const score = new Map(on.map((r) => [r.belief.id, r.score]));
    expect(score.get(b.id)).toBeCloseTo(off.get(b.id)! + 0.3 * off.get(a.id)!, 10);
    expect(score.get(c.id)).toBe(off.get(c.id));
    expect(score.get(d.id)).toBe(off.get(d.id));
    // a's neighbour b lends it context too (a share of b's score before any bonus).
    expect(score.get(a.id)).toBeCloseTo(off.get(a.id)! + 0.3 * off.get(b.id)!, 10);
    expect(on.map((r) => r.belief.id).slice(0, 2)).toEqual([a.id, b.id]);
    for (const r of on) expect(r.signals!.total).toBe(r.score);
  });

  it('two positions away lends half as much; a result never boosts itself', () => {
    const near = belief('near', 'n', { evidence: at('s3', 2) });
    const far = belief('far', 'f', { evidence: at('s3', 4) });
    const alone = belief('alone', 'z', { evidence: [...at('s4', 1), ...at('s4', 2)] });
    const hits = [
      { belief: near, score: 10 },
      { belief: far, score: 1 },
      { belief: alone, score: 5 },
    ];
    const config = { ...DEFAULT_RANKING, contextWeight: 0.3 };
    const off = new Map(
      rankHits(hits, [], { now, limit: 10, config: { ...config, contextWeight: 0 } }).map((r) => [
        r.belief.id,
        r.score,
      ]),
    );
    const on = new Map(rankHits(hits, [], { now, limit: 10, config }).map((r) => [r.belief.id, r.score]));
    expect(on.get(far.id)).toBeCloseTo(off.get(far.id)! + 0.15 * off.get(near.id)!, 10);
    // `alone` covers turns 1 and 2 of its session: neighbours of each other, but both its own.
    expect(on.get(alone.id)).toBe(off.get(alone.id));
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
    tier: kind === 'episode' ? ('episode' as const) : ('belief' as const),
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

describe('scores in 0..1 and tiers', () => {
  const ev = (position: number) => [{ sessionId: 's', position, role: 'user' as const, quote: 'q', at: T0 }];
  const fresh = new Date(now).toISOString();

  it('the highest total is reached: the answer right after a question, both at their best on every signal', () => {
    // Default ranking: (1 weighted signals + 0.5 session) × (1 + 0.4 context × 2 after a question) = 2.7.
    expect(maxRecallTotal(DEFAULT_RANKING)).toBeCloseTo(2.7, 12);
    const question = belief('q', 'x', {
      statement: 'Which sapiens book?',
      confidence: 1,
      storedAt: fresh,
      evidence: ev(4),
    });
    const answer = belief('a', 'y', {
      statement: 'The sapiens book.',
      confidence: 1,
      storedAt: fresh,
      evidence: ev(5),
    });
    const ranked = rankHits(
      [
        { belief: question, score: 3 },
        { belief: answer, score: 3 },
      ],
      [
        { belief: question, score: 1 },
        { belief: answer, score: 1 },
      ],
      { now, limit: 10, config: DEFAULT_RANKING, query: 'sapiens book' },
    );
    expect(ranked[0]!.belief.id).toBe(answer.id);
    expect(ranked[0]!.score).toBeCloseTo(maxRecallTotal(DEFAULT_RANKING), 12);
    expect(scaledScore(ranked[0]!.score, maxRecallTotal(DEFAULT_RANKING))).toBeCloseTo(1, 12);
    // Over 1 before scaling, as recall's scores were; the explanation carries the scale.
    expect(ranked[1]!.score).toBeGreaterThan(1);
    expect(ranked[1]!.signals!.maxTotal).toBe(maxRecallTotal(DEFAULT_RANKING));
    expect(scaledScore(ranked[1]!.score, ranked[1]!.signals!.maxTotal)).toBeLessThan(1);
  });

  it('the bound follows the configuration: kind weights over 1, no floor (no session coverage), no context', () => {
    const config = {
      ...DEFAULT_RANKING,
      kindWeights: { ...DEFAULT_RANKING.kindWeights, identity: 1.5 },
      minCoverage: 0,
      contextWeight: 0,
    };
    expect(maxRecallTotal(config)).toBeCloseTo(1.5, 12);
    // A profile counts recency and confidence only; the lexical-fuzzy weights give them none.
    expect(maxRecallTotal(DEFAULT_RANKING, true)).toBeCloseTo(0.2, 12);
    expect(maxRecallTotal({ ...DEFAULT_RANKING, weights: LEXICAL_EMBEDDER_WEIGHTS }, true)).toBe(0);
    expect(scaledScore(0, 0)).toBe(0);
    expect(scaledScore(3, 2)).toBe(1);
  });

  it('says each result’s tier: an episode is an episode, every other kind a belief', () => {
    const ep = belief('e', 'x', { kind: 'episode', evidence: ev(1) });
    const fact = belief('f', 'x', { evidence: ev(7) });
    const note = belief('n', 'x', { kind: 'note', evidence: [] });
    const ranked = rankHits(
      [ep, fact, note].map((b) => ({ belief: b, score: 1 })),
      [],
      { now, limit: 10, config: DEFAULT_RANKING },
    );
    expect(Object.fromEntries(ranked.map((r) => [r.belief.kind, r.tier]))).toEqual({
      episode: 'episode',
      fact: 'belief',
      note: 'belief',
    });
    expect(rankProfile([ep], { now, limit: 1, config: DEFAULT_RANKING })[0]!.tier).toBe('episode');
  });
});

describe('asksAboutReplies: the questions that recall the assistant’s replies', () => {
  it('a question about what the assistant said in an earlier conversation', () => {
    for (const q of [
      'What did you recommend last time?',
      'In our previous chat, you suggested a few names. Can you remind me of the fourth?',
      "I'm looking back at our previous conversation about the cocktail bar: which bottle was the fifth?",
      'You mentioned tomato juice with lemon; how long did you say I should leave it on?',
      'What was the move you made after 27. Kg2?',
      'Can you repeat your previous answer?',
    ]) {
      expect(asksAboutReplies(q), q).toBe(true);
    }
  });

  it('not a request, nor a question about the user', () => {
    for (const q of [
      'Can you suggest some activities that I can do in the evening?',
      'Can you recommend a cultural event this weekend?',
      'Do you think it might be my living room?',
      'Where do I live and what is my rent?',
      'What did Caroline say about the adoption agency?',
      'When did I last talk to my sister?',
    ]) {
      expect(asksAboutReplies(q), q).toBe(false);
    }
  });

  it('replies are on by default and a boolean setting', () => {
    expect(resolveConfig(undefined, null).replies).toBe(true);
    expect(resolveConfig({ replies: false }, null).replies).toBe(false);
    expect(() => resolveConfig({ replies: 'yes' as never }, null)).toThrow(/config\.replies/);
  });
});
