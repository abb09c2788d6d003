import { extractionData } from './extraction-data.js';
import type { FakeResponsesHandler } from './fake-openai.js';
import { isSummaryRequest, summaryData } from './summary-data.js';

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
 * A summary request is answered with the first clause of each user turn, dated, within the byte limit.
 * Deterministic, so smoke runs and benchmarks produce beliefs and realistic output sizes. Not a language model.
 *
 * @example
 * ```ts
 * const fake = await startFakeOpenAI({ responses: quotingResponder() });
 * ```
 */
export function quotingResponder(): FakeResponsesHandler {
  return (request) => {
    if (isSummaryRequest(request)) return quotingSummary(summaryData(request));
    const data = extractionData(request);
    const ops: unknown[] = [];
    for (const t of data.turns) {
      if (t.role !== 'user' || t.text.trim().split(/\s+/).length < 2) continue;
      const quote = firstClause(t.text);
      const attribute = topic(t.text);
      const value = quote.split(/\s+/).slice(-3).join(' ');
      const statement = `The user said: ${quote}.`;
      const ev = [{ t: t.id, q: quote }];
      const c = data.candidates.find((x) => x.attribute === attribute);
      if (c && c.value === value) ops.push({ op: 'confirm', id: c.id, conf: null, ev });
      else if (c)
        ops.push({
          op: 'supersede',
          id: c.id,
          kind: null,
          val: value,
          stmt: statement,
          conf: 0.9,
          from: null,
          ev,
        });
      else
        ops.push({
          op: 'add',
          kind: 'fact',
          subj: 'user',
          attr: attribute,
          val: value,
          stmt: statement,
          conf: 0.9,
          from: null,
          to: null,
          ev,
        });
    }
    return { ops };
  };
}

/** `On <day>, the user said: <first clause>; <first clause>; …`, within the byte limit, with the turns it quotes. */
function quotingSummary(data: ReturnType<typeof summaryData>): { summary: string; turns: number[] } {
  const user = data.turns.filter((t) => t.role === 'user' && t.text.trim().split(/\s+/).length >= 2);
  if (user.length === 0) return { summary: '', turns: [] };
  let summary = `On ${user[0]!.day}, the user said:`;
  const turns: number[] = [];
  for (const t of user) {
    const next = `${summary}${turns.length > 0 ? ';' : ''} ${firstClause(t.text)}`;
    if (Buffer.byteLength(`${next}.`) > data.maxBytes) break;
    summary = next;
    turns.push(t.n);
  }
  return turns.length === 0 ? { summary: '', turns: [] } : { summary: `${summary}.`, turns };
}
