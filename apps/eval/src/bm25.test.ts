import { describe, expect, it } from 'vitest';
import { Bm25Index, bm25Baseline, bm25Tokens, STOP_WORDS } from './bm25.js';
import { parseLocomo } from './locomo-data.js';

describe('bm25Tokens', () => {
  it('lower-cases, splits on anything but letters and digits, drops stop words, does not stem', () => {
    expect(bm25Tokens("The cat's CAT sat — on 8 May, 2023!")).toEqual([
      'cat',
      'cat',
      'sat',
      '8',
      'may',
      '2023',
    ]);
    expect(bm25Tokens('Running runs, ran')).toEqual(['running', 'runs', 'ran']);
    expect(bm25Tokens('Zoë went to Kraków')).toEqual(['zoë', 'went', 'kraków']);
    expect(bm25Tokens("I don't, and you wouldn't")).toEqual([]);
    expect(STOP_WORDS.size).toBe(153);
  });
});

describe('Bm25Index', () => {
  // Three documents, 10 tokens, average length 10/3. k1 1.2, b 0.75.
  const index = new Bm25Index([
    ['cat', 'sat', 'mat'],
    ['dog', 'sat'],
    ['cat', 'cat', 'dog', 'ran', 'far'],
  ]);

  it('matches a hand-computed example', () => {
    // idf(cat) = ln(1 + (3 − 2 + 0.5) / (2 + 0.5)) = ln 1.6 = 0.4700036…
    expect(index.idf('cat')).toBeCloseTo(0.4700036292457356, 12);
    // A term in no document: ln(1 + 3.5 / 0.5) = ln 8.
    expect(index.idf('owl')).toBeCloseTo(Math.log(8), 12);
    // d0: tf 1, length 3 → norm 1.2 × (0.25 + 0.75 × 3 / (10/3)) = 1.11; ln 1.6 × 1 × 2.2 / (1 + 1.11) = 0.49005…
    // d2: tf 2, length 5 → norm 1.2 × (0.25 + 0.75 × 5 / (10/3)) = 1.65; ln 1.6 × 2 × 2.2 / (2 + 1.65) = 0.56657…
    const [d0, d1, d2] = index.scores(['cat']);
    expect(d0).toBeCloseTo(0.4900511774126154, 12);
    expect(d1).toBe(0);
    expect(d2).toBeCloseTo(0.5665797174469143, 12);
    // d1 for "dog": tf 1, length 2 → norm 1.2 × (0.25 + 0.75 × 2 / (10/3)) = 0.84; ln 1.6 × 2.2 / 1.84 = 0.56196…
    expect(index.scores(['cat', 'dog'])[1]).toBeCloseTo(0.5619608610546839, 12);
    // Terms add up: d2 has both.
    expect(index.scores(['cat', 'dog'])[2]).toBeCloseTo(
      (index.scores(['cat'])[2] ?? 0) + (index.scores(['dog'])[2] ?? 0),
      12,
    );
  });

  it('counts a repeated query term once, returns only positive scores, best first, ties in document order', () => {
    expect(index.scores(['cat', 'cat'])).toEqual(index.scores(['cat']));
    expect(index.search(['cat'], 10).map((h) => h.index)).toEqual([2, 0]);
    expect(index.search(['cat'], 1).map((h) => h.index)).toEqual([2]);
    expect(index.search(['owl'], 10)).toEqual([]);
    const twins = new Bm25Index([['a', 'b'], ['x'], ['a', 'b']]);
    expect(twins.search(['a'], 10).map((h) => h.index)).toEqual([0, 2]);
  });
});

describe('bm25Baseline', () => {
  it('ranks the turns of each conversation (date and speaker in the text) and scores them like the mem01 rows', () => {
    const data = parseLocomo([
      {
        sample_id: 'x',
        conversation: {
          speaker_a: 'Ana',
          speaker_b: 'Sol',
          session_1_date_time: '2:00 pm on 5 May, 2020',
          session_1: [
            { speaker: 'Ana', dia_id: 'D1:1', text: 'I adopted a greyhound.' },
            { speaker: 'Sol', dia_id: 'D1:2', text: 'I bake sourdough bread.' },
          ],
          session_2_date_time: '2:00 pm on 9 June, 2020',
          session_2: [{ speaker: 'Sol', dia_id: 'D2:1', text: 'The bakery closed.' }],
        },
        qa: [
          { question: 'What does Sol bake?', answer: 'sourdough', evidence: ['D1:2'], category: 4 },
          // Only the session date links the question to its turn.
          {
            question: 'What happened in June 2020?',
            answer: 'the bakery closed',
            evidence: ['D2:1'],
            category: 2,
          },
          { question: 'Which pet and which loaf?', answer: '', evidence: ['D1:1', 'D1:2'], category: 1 },
        ],
      },
    ]);
    const b = bm25Baseline(data, [1, 2]);
    expect(b.ks).toEqual([1, 2]);
    expect(b.scores.byCategory['4']?.recall).toEqual({ 1: 1, 2: 1 });
    expect(b.scores.byCategory['2']?.recall).toEqual({ 1: 1, 2: 1 });
    // "pet" and "loaf" appear in no turn, "which" and "and" are stop words: nothing is retrieved.
    expect(b.scores.byCategory['1']?.recall).toEqual({ 1: 0, 2: 0 });
    expect(b.scores.all.questions).toBe(3);
    expect(b.scores.all.blockRecall).toBeNull();
  });
});
