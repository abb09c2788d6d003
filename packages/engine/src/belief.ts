import { InvalidInputError } from './errors.js';
import {
  BELIEF_KINDS,
  type Belief,
  type BeliefKind,
  type BeliefMetadata,
  type BeliefOrigin,
  type Evidence,
} from './types.js';
import { assertText, newId, normalizeScope } from './util.js';

/** A new belief's claim, as a {@link Belief} has it; the lifecycle fields are optional and default. */
export interface NewBeliefInput
  extends Pick<
    Belief,
    'scope' | 'kind' | 'subject' | 'attribute' | 'value' | 'statement' | 'confidence' | 'source'
  > {
  readonly evidence?: readonly Evidence[];
  readonly status?: Belief['status'];
  readonly supersedes?: string | null;
  readonly validFrom?: string | null;
  readonly validTo?: string | null;
  readonly at: string;
  readonly id?: string;
  /** Host metadata, checked by the caller (`validateMetadata`). */
  readonly metadata?: BeliefMetadata | undefined;
  /** The host's source label and reference, checked by the caller (`validateOrigin`). */
  readonly origin?: BeliefOrigin | undefined;
  /** The capture grant it is captured under, if any. */
  readonly grantId?: string | undefined;
}

/** Canonical form of a subject or attribute key: trimmed, lower case, inner whitespace and dashes as `_`. */
export function canonicalKey(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
    .replace(/_+/g, '_');
}

/** Canonical form of a value for "is this the same value" comparisons. */
export function canonicalValue(text: string): string {
  return text
    .normalize('NFKC')
    .trim()
    .toLowerCase()
    .replace(/[\s]+/g, ' ')
    .replace(/[.!?]+$/, '');
}

export function isBeliefKind(value: unknown): value is BeliefKind {
  return typeof value === 'string' && (BELIEF_KINDS as readonly string[]).includes(value);
}

/** Throws `InvalidInputError` unless `value` is a finite number in 0..1. */
export function assertConfidence(value: unknown, field = 'confidence'): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new InvalidInputError(field, `must be a finite number between 0 and 1, got ${String(value)}`);
  }
}

/** Builds a new, validated belief record (version 1). */
export function createBelief(input: NewBeliefInput, maxTextBytes = 8192): Belief {
  const scope = normalizeScope(input.scope);
  if (!isBeliefKind(input.kind))
    throw new InvalidInputError('kind', `unknown kind ${JSON.stringify(input.kind)}`);
  assertText(input.subject, 'subject', 256);
  assertText(input.attribute, 'attribute', 256);
  assertText(input.value, 'value', maxTextBytes);
  assertText(input.statement, 'statement', maxTextBytes);
  assertConfidence(input.confidence);
  return {
    id: input.id ?? newId(),
    scope,
    kind: input.kind,
    subject: canonicalKey(input.subject),
    attribute: canonicalKey(input.attribute),
    value: input.value.trim(),
    statement: input.statement.trim(),
    confidence: input.confidence,
    status: input.status ?? 'active',
    supersedes: input.supersedes ?? null,
    supersededBy: null,
    version: 1,
    validFrom: input.validFrom ?? null,
    validTo: input.validTo ?? null,
    storedAt: input.at,
    updatedAt: input.at,
    invalidatedAt: null,
    evidence: input.evidence ? [...input.evidence] : [],
    source: input.source,
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    ...(input.origin === undefined ? {} : { origin: input.origin }),
    ...(input.grantId === undefined ? {} : { grantId: input.grantId }),
  };
}
