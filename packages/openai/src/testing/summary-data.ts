import type { FakeRequest } from './fake-openai.js';

/** The DATA document of a summary request, as the model sees it, rows read as objects. */
export interface SummaryData {
  /** The byte limit the request gives. */
  readonly maxBytes: number;
  /** Earlier turns left out of the request (0 when none were). */
  readonly omitted: number;
  readonly turns: readonly {
    /** The turn's number, as the model names it in `turns`. */
    readonly n: number;
    readonly role: 'user' | 'assistant';
    /** The day of the turn, `YYYY-MM-DD`. */
    readonly day: string;
    readonly text: string;
  }[];
}

/** Whether a recorded `/v1/responses` request was made by the mem01 summarizer (its `text.format` name). */
export function isSummaryRequest(request: FakeRequest): boolean {
  const format = (request.body as { text?: { format?: { name?: unknown } } } | null)?.text?.format;
  return format?.name === 'conversation_summary';
}

/**
 * Reads the DATA document from a recorded `/v1/responses` request made by the mem01 summarizer, so a scripted handler
 * can answer in terms of the turns it was sent. Throws when the request is not one.
 */
export function summaryData(request: FakeRequest): SummaryData {
  const input = (request.body as { input?: unknown } | null)?.input;
  const first = Array.isArray(input) ? (input[0] as { content?: unknown } | undefined) : undefined;
  const content = typeof first?.content === 'string' ? first.content : '';
  const m = /^Limit: (\d+) bytes\.\nDATA \(untrusted JSON\):\n/.exec(content);
  if (!m || !isSummaryRequest(request)) throw new Error('not a mem01 summary request');
  const doc = JSON.parse(content.slice(m[0].length)) as {
    omitted?: number;
    turns: (string | [number, 'u' | 'a', string])[];
  };
  const turns: { n: number; role: 'user' | 'assistant'; day: string; text: string }[] = [];
  let day = '';
  for (const row of doc.turns) {
    if (typeof row === 'string') day = row;
    else turns.push({ n: row[0], role: row[1] === 'u' ? 'user' : 'assistant', day, text: row[2] });
  }
  return { maxBytes: Number(m[1]), omitted: doc.omitted ?? 0, turns };
}
