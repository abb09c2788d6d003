// The compact prompt and output schema carry what extraction needs: a reference extractor's operations, written in
// the output schema by `extractorResponder` (short keys, derived statements, quotes by reference), come back out of
// the OpenAI extractor exactly as the reference made them.
import { readFileSync } from 'node:fs';
import type { CandidateBelief, ExtractionOperation, ExtractionTurn } from '@mem01/engine/provider-kit';
import { createLocalExtractor } from '@mem01/local';
import { afterAll, describe, expect, it } from 'vitest';
import { createOpenAIExtractor } from '../src/index.js';
import { extractorResponder, quoteReference, startFakeOpenAI } from '../src/testing/index.js';
import { API_KEY } from './helpers.js';

const local = createLocalExtractor();
const fake = await startFakeOpenAI({ responses: extractorResponder(local) });
afterAll(() => fake.close());

const { conversations } = JSON.parse(
  readFileSync(new URL('../../../fixtures/conversations.json', import.meta.url), 'utf8'),
) as { conversations: { id: string; at: string; user: string; assistant: string }[] };

const extra: [string, string][] = [
  [
    'long',
    'After years of renting in the city centre, I finally bought a small house with a garden in Bristol last March.',
  ],
  ['twice', 'I live in Leeds. Well, I really do live in Leeds now, since I live in Leeds for work.'],
];

describe('extractorResponder through the OpenAI extractor', () => {
  it('returns the reference extractor’s operations unchanged, turn after turn, with candidates', async () => {
    const extractor = createOpenAIExtractor({ apiKey: API_KEY, baseURL: fake.url });
    const candidates: CandidateBelief[] = [];
    const inputs = [
      ...conversations.map((c) => [c.id, c.user, c.at]),
      ...extra.map(([id, t]) => [id, t, NOW]),
    ];
    let compared = 0;
    let spans = 0;
    for (const [id, text, at] of inputs as [string, string, string][]) {
      const turns: ExtractionTurn[] = [{ id, sessionId: 's', position: compared, role: 'user', text, at }];
      const request = { scope: { userId: 'u' }, turns, candidates: [...candidates], now: at };
      const direct = await local.extract(request);
      const viaOpenAI = await extractor.extract(request);
      expect(viaOpenAI.dropped).toEqual([]);
      expect(viaOpenAI.operations).toEqual(direct.operations.map(normalize));
      for (const op of direct.operations) {
        for (const e of op.evidence) if (quoteReference(text, e.quote) !== e.quote) spans++;
        if (op.op === 'add')
          candidates.push({ ...op, id: `b${candidates.length}`, storedAt: at, confidence: op.confidence });
      }
      compared += direct.operations.length;
    }
    // The fixture exercises every kind of operation the reference makes, and quotes by reference.
    expect(compared).toBeGreaterThan(20);
    expect(spans).toBeGreaterThan(0);
  });

  it('cites a quote of more than 8 words by its first and last words, naming exactly that span', () => {
    const text = 'I live in Leeds. Well, I really do live in Leeds now, since I moved there for work in May.';
    expect(quoteReference(text, 'I live in Leeds.')).toBe('I live in Leeds.');
    const quote = 'I really do live in Leeds now, since I moved there for work';
    expect(quoteReference(text, quote)).toBe('I really do … there for work');
    // "I live in" occurs earlier, so the reference takes more words until it names this occurrence.
    const later = 'live in Leeds now, since I moved there for work in May.';
    expect(quoteReference(text, later)).toBe('live in Leeds now, … for work in May.');
  });
});

const NOW = '2026-02-01T12:00:00.000Z';

/** What the OpenAI extractor returns for a reference operation: optional fields made explicit. */
function normalize(op: ExtractionOperation): ExtractionOperation {
  if (op.op === 'add') return { ...op, validFrom: op.validFrom ?? null, validTo: op.validTo ?? null };
  return op;
}
