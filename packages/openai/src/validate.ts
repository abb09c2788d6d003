/** Validation of model output against the batch: grounding, ids, ranges. Pure; no I/O. */

import { canonicalKey, type ExtractionOperation, groundQuote } from '@mem01/engine/provider-kit';
import type { ExtractionOutput, PromptAliases } from './prompt.js';

/** A quote that grounds an added belief, with the turn it comes from. */
type OperationEvidence = Extract<ExtractionOperation, { op: 'add' }>['evidence'][number];

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

/** Longest quote the model may give, in characters (the prompt's limit); grounding itself is the engine's rule. */
const MAX_QUOTE = 400;
const MAX_FIELD = 200;
const MAX_STATEMENT = 1000;

/** The statement of a claim the model gave none for: `subject attribute: value`, as the instructions promise. */
export function derivedStatement(subject: string, attribute: string, value: string): string {
  return `${subject} ${attribute.replace(/[_:]+/g, ' ').trim()}: ${value}`;
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

  output.ops.forEach((raw, index) => {
    const drop = (reason: DropReason) => dropped.push({ op: raw.op, index, reason });

    // Evidence: each item must quote a user turn of this batch; ungrounded items are removed.
    const evidence: OperationEvidence[] = [];
    let firstFailure: DropReason | null = null;
    for (const e of raw.ev) {
      const turn = aliases.turns.get(e.t.trim());
      if (!turn) {
        firstFailure ??= 'unknown_turn';
        continue;
      }
      if (turn.role !== 'user') {
        firstFailure ??= 'assistant_evidence';
        continue;
      }
      const quote = e.q.trim().length > MAX_QUOTE ? null : groundQuote(turn.text, e.q);
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
      const subject = canonicalKey(cleanText(raw.subj, MAX_FIELD) ?? '');
      const attribute = canonicalKey(cleanText(raw.attr, MAX_FIELD) ?? '');
      const value = cleanText(raw.val, MAX_FIELD * 2);
      const statement = statementOf(raw.stmt, subject, attribute, value);
      if (!subject || !attribute || !value || !statement) {
        drop('empty_field');
        return;
      }
      operations.push({
        op: 'add',
        kind: raw.kind,
        subject,
        attribute,
        value,
        statement,
        confidence: raw.conf,
        evidence,
        validFrom: cleanDate(raw.from),
        validTo: cleanDate(raw.to),
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
        ...(raw.conf === null ? {} : { confidence: raw.conf }),
        evidence,
      });
    } else if (raw.op === 'supersede') {
      const value = cleanText(raw.val, MAX_FIELD * 2);
      const statement = statementOf(raw.stmt, candidate.subject, candidate.attribute, value);
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
        confidence: raw.conf,
        evidence,
        ...(raw.kind === null ? {} : { kind: raw.kind }),
        validFrom: cleanDate(raw.from),
      });
    } else {
      operations.push({ op: 'retract', id: candidate.id, evidence });
    }
  });
  return { operations, dropped };
}

/** The model's statement, or the derived one when it gave null; null when neither is usable. */
function statementOf(
  stmt: string | null,
  subject: string,
  attribute: string,
  value: string | null,
): string | null {
  if (stmt !== null) return cleanText(stmt, MAX_STATEMENT);
  if (!subject || !attribute || !value) return null;
  return cleanText(derivedStatement(subject, attribute, value), MAX_STATEMENT);
}
