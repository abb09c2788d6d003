/** Validation of model output against the batch: grounding, ids, ranges. Pure; no I/O. */

import type { OperationEvidence } from '@mem01/engine/store-kit';
import { canonicalKey, type ExtractionOperation } from '@mem01/engine/store-kit';
import type { ExtractionOutput, PromptAliases } from './prompt.js';

/** Why an operation was dropped. No content, so it can be logged. */
export type DropReason =
  | 'ungrounded_quote'
  | 'assistant_evidence'
  | 'unknown_turn'
  | 'unknown_candidate'
  | 'empty_field'
  | 'duplicate_target'
  | 'no_evidence';

export interface RejectedOperation {
  readonly op: ExtractionOperation['op'];
  readonly index: number;
  readonly reason: DropReason;
}

const MAX_QUOTE = 400;
const MAX_FIELD = 200;
const MAX_STATEMENT = 1000;

/**
 * Finds `quote` in `text`: exactly, else ignoring case, runs of whitespace and curly vs straight quotes.
 * Returns the verbatim slice of `text` that matched, or null. Quotes under 2 visible characters never match.
 */
export function groundQuote(text: string, quote: string): string | null {
  const q = quote.trim();
  if (q.replace(/\s/g, '').length < 2 || q.length > MAX_QUOTE) return null;
  if (text.includes(q)) return q;
  const pattern = q
    .split(/\s+/)
    .map((word) =>
      [...word]
        .map((ch) => {
          if (/['‘’`]/.test(ch)) return "['‘’`]";
          if (/["“”]/.test(ch)) return '["“”]';
          // Only syntax characters may be escaped in a `u` regex (`\-` is an error there).
          return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        })
        .join(''),
    )
    .join('\\s+');
  const m = new RegExp(pattern, 'iu').exec(text);
  return m ? m[0] : null;
}

function cleanText(value: string, max: number): string | null {
  const v = value.trim().replace(/\s+/g, ' ');
  if (v.length === 0 || v.length > max) return null;
  return v;
}

function cleanDate(value: string | null): string | null {
  if (value === null) return null;
  const t = Date.parse(value);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

/**
 * Turns schema-valid model output into engine operations. Operations whose evidence is not grounded in a user
 * turn of this batch, or that name unknown candidates, are dropped (reported in `dropped`).
 */
export function validateOperations(
  output: ExtractionOutput,
  aliases: PromptAliases,
): { operations: ExtractionOperation[]; dropped: RejectedOperation[] } {
  const operations: ExtractionOperation[] = [];
  const dropped: RejectedOperation[] = [];
  const targeted = new Set<string>();

  output.operations.forEach((raw, index) => {
    const drop = (reason: DropReason) => dropped.push({ op: raw.op, index, reason });

    // Evidence: each item must quote a user turn of this batch; ungrounded items are removed.
    const evidence: OperationEvidence[] = [];
    let firstFailure: DropReason | null = null;
    for (const e of raw.evidence) {
      const turn = aliases.turns.get(e.turn.trim());
      if (!turn) {
        firstFailure ??= 'unknown_turn';
        continue;
      }
      if (turn.role !== 'user') {
        firstFailure ??= 'assistant_evidence';
        continue;
      }
      const quote = groundQuote(turn.text, e.quote);
      if (quote === null) {
        firstFailure ??= 'ungrounded_quote';
        continue;
      }
      if (!evidence.some((x) => x.turnId === turn.id && x.quote === quote))
        evidence.push({ turnId: turn.id, quote });
    }
    if (evidence.length === 0) {
      drop(firstFailure ?? 'no_evidence');
      return;
    }

    if (raw.op === 'add') {
      const subject = cleanText(raw.subject, MAX_FIELD);
      const attribute = cleanText(raw.attribute, MAX_FIELD);
      const value = cleanText(raw.value, MAX_FIELD * 2);
      const statement = cleanText(raw.statement, MAX_STATEMENT);
      if (
        !subject ||
        !attribute ||
        !value ||
        !statement ||
        !canonicalKey(attribute) ||
        !canonicalKey(subject)
      ) {
        drop('empty_field');
        return;
      }
      operations.push({
        op: 'add',
        kind: raw.kind,
        subject: canonicalKey(subject),
        attribute: canonicalKey(attribute),
        value,
        statement,
        confidence: raw.confidence,
        evidence,
        validFrom: cleanDate(raw.validFrom),
        validTo: cleanDate(raw.validTo),
      });
      return;
    }

    const candidate = aliases.candidates.get(raw.id.trim());
    if (!candidate) {
      drop('unknown_candidate');
      return;
    }
    if (targeted.has(candidate.id)) {
      drop('duplicate_target');
      return;
    }
    targeted.add(candidate.id);

    if (raw.op === 'confirm') {
      operations.push({
        op: 'confirm',
        id: candidate.id,
        ...(raw.confidence === null ? {} : { confidence: raw.confidence }),
        evidence,
      });
    } else if (raw.op === 'supersede') {
      const value = cleanText(raw.value, MAX_FIELD * 2);
      const statement = cleanText(raw.statement, MAX_STATEMENT);
      if (!value || !statement) {
        targeted.delete(candidate.id);
        drop('empty_field');
        return;
      }
      operations.push({
        op: 'supersede',
        id: candidate.id,
        value,
        statement,
        confidence: raw.confidence,
        evidence,
        ...(raw.kind === null ? {} : { kind: raw.kind }),
        validFrom: cleanDate(raw.validFrom),
      });
    } else {
      operations.push({ op: 'retract', id: candidate.id, evidence });
    }
  });
  return { operations, dropped };
}
