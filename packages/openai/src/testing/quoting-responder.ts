import { extractionData } from './extraction-data.js';
import type { FakeResponsesHandler } from './fake-openai.js';

const STOP = new Set(
  'i my me a an the and to of in at on for is am are was be it this that with as we our you your hi so just now'.split(
    ' ',
  ),
);

function topic(text: string): string {
  const words = (text.toLowerCase().match(/[a-z]+/g) ?? []).filter((w) => !STOP.has(w) && w.length > 2);
  return words[0] ?? 'note';
}

function firstClause(text: string): string {
  const clause = text.split(/[.!?;]/).find((s) => s.trim().split(/\s+/).length >= 3) ?? text;
  return clause.trim().split(/\s+/).slice(0, 12).join(' ');
}

/**
 * A stand-in model for `/v1/responses` that answers mem01 extraction requests the way a frugal model would: one
 * operation per user turn, quoting the turn's first clause, keyed by the turn's first content word. A candidate
 * with that attribute is confirmed (same value) or superseded (different value); otherwise a `fact` is added.
 * Deterministic, so smoke runs and benchmarks produce beliefs and realistic output sizes. Not a language model.
 *
 * @example
 * ```ts
 * const fake = await startFakeOpenAI({ responses: quotingResponder() });
 * ```
 */
export function quotingResponder(): FakeResponsesHandler {
  return (request) => {
    const data = extractionData(request);
    const operations: unknown[] = [];
    for (const t of data.turns) {
      if (t.role !== 'user' || t.text.trim().split(/\s+/).length < 2) continue;
      const quote = firstClause(t.text);
      const attribute = topic(t.text);
      const value = quote.split(/\s+/).slice(-3).join(' ');
      const statement = `The user said: ${quote}.`;
      const evidence = [{ turn: t.id, quote }];
      const c = data.candidates.find((x) => x.attribute === attribute);
      if (c && c.value === value) operations.push({ op: 'confirm', id: c.id, confidence: null, evidence });
      else if (c)
        operations.push({
          op: 'supersede',
          id: c.id,
          kind: null,
          value,
          statement,
          confidence: 0.9,
          validFrom: null,
          evidence,
        });
      else
        operations.push({
          op: 'add',
          kind: 'fact',
          subject: 'user',
          attribute,
          value,
          statement,
          confidence: 0.9,
          validFrom: null,
          validTo: null,
          evidence,
        });
    }
    return { operations };
  };
}
