import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groundQuote } from '../src/index.js';

describe('groundQuote', () => {
  it('finds every substring of a text and returns a verbatim slice', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.nat(), fc.nat(), (text, a, b) => {
        const start = a % (text.length + 1);
        const end = Math.min(text.length, start + (b % 120));
        const quote = text.slice(start, end);
        const found = groundQuote(text, quote);
        if (quote.replace(/\s/g, '').length < 2) return found === null;
        return found !== null && text.includes(found);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws and only returns slices of the text, whatever the quote', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.string({ maxLength: 60 }), (text, quote) => {
        const found = groundQuote(text, quote);
        return found === null || text.includes(found);
      }),
      { numRuns: 500 },
    );
  });

  it('tolerates case, spacing and quote styles but not different words', () => {
    const text = 'Well — I’m moving to São Paulo (Brazil) in 2026-03, for real.';
    expect(groundQuote(text, "i'm moving to são paulo")).toBe('I’m moving to São Paulo');
    expect(groundQuote(text, 'São Paulo (Brazil) in 2026-03')).toBe('São Paulo (Brazil) in 2026-03');
    expect(groundQuote(text, 'Paulo  (brazil)  in 2026-03,')).toBe('Paulo (Brazil) in 2026-03,');
    expect(groundQuote(text, 'moving to Rio')).toBeNull();
    expect(groundQuote(text, 'a')).toBeNull();
  });
});

describe('groundQuote with a span reference ("first words … last words")', () => {
  const text = 'Well — I’m moving to São Paulo (Brazil) in 2026-03, for real. My sister stays in Lisbon.';

  it('returns the verbatim slice from the first words to the next occurrence of the last words', () => {
    expect(groundQuote(text, 'I’m moving … for real')).toBe(
      'I’m moving to São Paulo (Brazil) in 2026-03, for real',
    );
    expect(groundQuote(text, "i'm moving...(brazil)")).toBe('I’m moving to São Paulo (Brazil)');
    expect(groundQuote(text, 'São Paulo … in Lisbon.')).toBe(
      'São Paulo (Brazil) in 2026-03, for real. My sister stays in Lisbon.',
    );
  });

  it('names nothing when a side is missing, too short, or the last words do not follow the first', () => {
    expect(groundQuote(text, 'I’m moving … to Rio')).toBeNull();
    expect(groundQuote(text, 'for real … I’m moving')).toBeNull();
    expect(groundQuote(text, '… for real')).toBeNull();
    expect(groundQuote(text, 'I’m moving … a')).toBeNull();
  });

  it('matches an ellipsis the turn itself holds as a plain quote', () => {
    expect(groundQuote('I was like... wow, a new job!', 'like... wow')).toBe('like... wow');
  });

  it('only returns slices of the text, at most 400 characters', () => {
    const long = `I said ${'very '.repeat(200)}much indeed.`;
    const found = groundQuote(long, 'I said … much indeed');
    expect(found).not.toBeNull();
    expect(long.startsWith(found!)).toBe(true);
    expect(found!.length).toBeLessThanOrEqual(400);
    fc.assert(
      fc.property(
        fc.string({ maxLength: 120 }),
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        (t, a, b) => {
          const found = groundQuote(t, `${a} … ${b}`);
          return found === null || t.includes(found);
        },
      ),
      { numRuns: 500 },
    );
  });
});
