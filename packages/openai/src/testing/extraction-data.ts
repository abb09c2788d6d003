import type { FakeRequest } from './fake-openai.js';

/** The DATA document of an extraction request, as the model sees it (short aliases `t1`, `c1`), rows read as objects. */
export interface ExtractionData {
  readonly now: string;
  readonly candidates: readonly {
    readonly id: string;
    readonly kind: string;
    readonly subject: string;
    readonly attribute: string;
    readonly value: string;
  }[];
  readonly turns: readonly {
    readonly id: string;
    readonly role: 'user' | 'assistant';
    /** As sent: ISO-8601 to the minute, e.g. `2026-02-01T10:00Z`. */
    readonly at: string;
    readonly text: string;
  }[];
}

/**
 * Reads the DATA document from a recorded `/v1/responses` request made by the mem01 extractor, so a scripted
 * handler can answer in terms of the turns and candidates it was sent. Throws when the request is not one.
 */
export function extractionData(request: FakeRequest): ExtractionData {
  const input = (request.body as { input?: unknown } | null)?.input;
  const first = Array.isArray(input) ? (input[0] as { content?: unknown } | undefined) : undefined;
  const content = typeof first?.content === 'string' ? first.content : '';
  const marker = 'DATA (untrusted JSON):\n';
  const at = content.indexOf(marker);
  if (at < 0) throw new Error('not a mem01 extraction request');
  const doc = JSON.parse(content.slice(at + marker.length)) as {
    now: string;
    candidates: [string, string, string, string, string][];
    turns: [string, 'user' | 'assistant', string, string][];
  };
  return {
    now: doc.now,
    candidates: doc.candidates.map(([id, kind, subject, attribute, value]) => ({
      id,
      kind,
      subject,
      attribute,
      value,
    })),
    turns: doc.turns.map(([id, role, at, text]) => ({ id, role, at, text })),
  };
}
