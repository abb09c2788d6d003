import type { Extractor } from '@mem01/engine';
import type { CandidateBelief, ExtractionOperation, ExtractionTurn } from '@mem01/engine/provider-kit';
import { groundQuote } from '@mem01/engine/provider-kit';
import { derivedStatement } from '../validate.js';
import { extractionData } from './extraction-data.js';
import type { FakeResponsesHandler } from './fake-openai.js';

/**
 * A stand-in model for `/v1/responses` that answers each mem01 extraction request with what `reference` (any other
 * `Extractor`, e.g. the offline `@mem01/local` one) draws from the same turns and candidates, written in the
 * extraction output schema. The output then says what a model would say about those turns, so its size measures
 * the schema's verbosity rather than a made-up answer (the ingest benchmark uses it this way). Not a language model.
 *
 * @example
 * ```ts
 * const fake = await startFakeOpenAI({ responses: extractorResponder(createLocalExtractor()) });
 * ```
 */
export function extractorResponder(reference: Extractor): FakeResponsesHandler {
  return async (request) => {
    const data = extractionData(request);
    const turns: ExtractionTurn[] = data.turns.map((t, i) => ({
      id: t.id,
      sessionId: 'fake',
      position: i,
      role: t.role,
      text: t.text,
      at: t.at,
    }));
    // The prompt sends no statement or storedAt for a candidate: the reference gets stand-ins.
    const candidates: CandidateBelief[] = data.candidates.map((c) => ({
      id: c.id,
      kind: c.kind as CandidateBelief['kind'],
      subject: c.subject,
      attribute: c.attribute,
      value: c.value,
      statement: derivedStatement(c.subject, c.attribute, c.value),
      confidence: 1,
      storedAt: data.now,
    }));
    const result = await reference.extract({ scope: { userId: 'fake' }, turns, candidates, now: data.now });
    const texts = new Map(turns.map((t) => [t.id, t.text]));
    const candidateOf = new Map(candidates.map((c) => [c.id, c]));
    return { ops: result.operations.map((op) => encode(op, texts, candidateOf)) };
  };
}

/** One operation in the output schema, as the instructions ask a model to write it. */
function encode(
  op: ExtractionOperation,
  texts: ReadonlyMap<string, string>,
  candidates: ReadonlyMap<string, CandidateBelief>,
): unknown {
  const ev = op.evidence.map((e) => ({ t: e.turnId, q: quoteReference(texts.get(e.turnId) ?? '', e.quote) }));
  switch (op.op) {
    case 'add':
      return {
        op: 'add',
        kind: op.kind,
        subj: op.subject,
        attr: op.attribute,
        val: op.value,
        stmt: op.statement === derivedStatement(op.subject, op.attribute, op.value) ? null : op.statement,
        conf: op.confidence,
        from: op.validFrom ?? null,
        to: op.validTo ?? null,
        ev,
      };
    case 'confirm':
      return { op: 'confirm', id: op.id, conf: op.confidence ?? null, ev };
    case 'supersede': {
      const c = candidates.get(op.id);
      const derived = c ? derivedStatement(c.subject, c.attribute, op.value) : null;
      return {
        op: 'supersede',
        id: op.id,
        kind: op.kind ?? null,
        val: op.value,
        stmt: op.statement === derived ? null : op.statement,
        conf: op.confidence,
        from: op.validFrom ?? null,
        ev,
      };
    }
    case 'retract':
      return { op: 'retract', id: op.id, ev };
  }
}

const SHORT_QUOTE_WORDS = 8;

/**
 * How the instructions ask a model to cite `quote` (verbatim text of `text`): as is up to 8 words, else as
 * `first words … last words`, with as many words on each side (3 or more) as it takes for the reference to name
 * exactly this span of the turn. Falls back to the quote itself when no shorter reference names it.
 */
export function quoteReference(text: string, quote: string): string {
  const words = quote.trim().split(/\s+/);
  if (words.length <= SHORT_QUOTE_WORDS) return quote;
  const target = groundQuote(text, quote);
  for (let n = 3; 2 * n < words.length; n++) {
    const ref = `${words.slice(0, n).join(' ')} … ${words.slice(-n).join(' ')}`;
    if (groundQuote(text, ref) === target) return ref;
  }
  return quote;
}
