import { describe, expect, it } from 'vitest';
import { FORGOTTEN_MARKER, forgetNeedles, mayContainNeedle, redactTranscriptItem } from '../src/redact.js';
import { assistantMessageItem } from '../src/testing/index.js';

const userTurn = (text: string) => ({ role: 'user', content: text });
const assistantTurn = assistantMessageItem;

describe('forgetNeedles', () => {
  it('keeps the statement and value, trimmed, distinct and at least 3 characters long', () => {
    expect(forgetNeedles({ value: ' Lisbon ', statement: 'The user lives in Lisbon.' })).toEqual([
      'The user lives in Lisbon.',
      'Lisbon',
    ]);
    expect(forgetNeedles({ value: 'no', statement: 'no' })).toEqual([]);
    expect(forgetNeedles({ value: 'same', statement: 'same' })).toEqual(['same']);
  });
});

describe('redactTranscriptItem', () => {
  it('an evidence turn loses all its text but keeps its structure', () => {
    expect(redactTranscriptItem(userTurn('I moved to Lisbon in May'), { whole: true, needles: [] })).toEqual(
      userTurn(FORGOTTEN_MARKER),
    );
    const out = redactTranscriptItem(assistantTurn('Lisbon is lovely'), { whole: true, needles: [] });
    expect(out).toEqual(assistantTurn(FORGOTTEN_MARKER));
  });

  it('other items lose each whole-word occurrence of a needle, in any case, and nothing else', () => {
    const item = assistantTurn('So LISBON it is: lisbon, Lisbon! Not Lisbonne.');
    expect(redactTranscriptItem(item, { whole: false, needles: ['Lisbon'] })).toEqual(
      assistantTurn(`So ${FORGOTTEN_MARKER} it is: ${FORGOTTEN_MARKER}, ${FORGOTTEN_MARKER}! Not Lisbonne.`),
    );
    // Needles are literal text, never patterns.
    expect(
      redactTranscriptItem(userTurn('price is $2,400 (monthly)'), {
        whole: false,
        needles: ['$2,400 (monthly)'],
      }),
    ).toEqual(userTurn(`price is ${FORGOTTEN_MARKER}`));
  });

  it('returns null when nothing changes, including an already-redacted evidence turn', () => {
    expect(redactTranscriptItem(userTurn('I like tea'), { whole: false, needles: ['Lisbon'] })).toBeNull();
    expect(redactTranscriptItem(userTurn(FORGOTTEN_MARKER), { whole: true, needles: [] })).toBeNull();
    expect(
      redactTranscriptItem({ type: 'function_call', callId: 'c1' }, { whole: true, needles: [] }),
    ).toBeNull();
  });

  it('does not change the input', () => {
    const item = userTurn('I moved to Lisbon');
    const copy = structuredClone(item);
    redactTranscriptItem(item, { whole: true, needles: ['Lisbon'] });
    expect(item).toEqual(copy);
  });
});

describe('mayContainNeedle', () => {
  it('finds needles in serialised JSON case-insensitively, including escaped characters', () => {
    expect(mayContainNeedle(JSON.stringify(userTurn('I live in LISBON')), ['Lisbon'])).toBe(true);
    expect(mayContainNeedle(JSON.stringify(userTurn('say "hi" to Ana')), ['"hi" to'])).toBe(true);
    expect(mayContainNeedle(JSON.stringify(userTurn('I like tea')), ['Lisbon'])).toBe(false);
  });
});
