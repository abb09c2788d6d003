import {
  type ExtractionRequest,
  type ExtractionResult,
  type Extractor,
  InvalidInputError,
} from '@mem01/engine';
import {
  type CandidateBelief,
  canonicalKey,
  canonicalValue,
  type ExtractionOperation,
} from '@mem01/engine/store-kit';
import { type DateMention, findDates } from './dates.js';
import { type Intent, matchClause, type RuleContext } from './rules.js';
import { clausesOf, isInjection, isQuestion, looksLikeQuestion, sameValue, sentencesOf } from './text.js';

/** Options for {@link createLocalExtractor}. */
export interface LocalExtractorOptions {
  /** Confidence of a plain first-person statement. Default 0.9. */
  readonly confidence?: number;
  /** Confidence of a hedged statement ("I think I might…", "maybe"); keep it below the engine's pending threshold. Default 0.4. */
  readonly hedgedConfidence?: number;
  /** Characters per batch of turns handed over by the engine. Default 4000. */
  readonly batchChars?: number;
  /** Longest evidence quote, in characters; a longer sentence is quoted by its clause. Default 240. */
  readonly maxQuoteChars?: number;
}

interface Found extends Intent {
  readonly turnId: string;
  readonly quote: string;
  readonly confidence: number;
}

/**
 * A rule-based English extractor that runs offline: no key, no network, deterministic.
 *
 * It reads only user turns (assistant turns are context and never evidence), splits them into sentences and
 * clauses with compromise, resolves dates with chrono-node relative to each turn's `at`, and matches a fixed set
 * of first-person patterns (identity, home, work, preferences, goals, decisions, family, amounts, dated events)
 * onto canonical `subject`/`attribute` keys, so the engine can detect conflicts. Questions and sentences that
 * look like instructions to the model yield nothing. Negations ("I don't live in NYC anymore") retract the
 * matching candidate; a new value for a known key is emitted as an `add` that the engine turns into a
 * supersede. Every evidence quote is a verbatim substring of the user turn.
 *
 * It is recall-oriented for common phrasings and conservative otherwise: what it does not recognise it
 * ignores. Use an LLM extractor for open-ended conversations.
 */
export class LocalExtractor implements Extractor {
  readonly name = 'local-rules';
  readonly batchChars: number;
  readonly #confidence: number;
  readonly #hedged: number;
  readonly #maxQuote: number;

  constructor(options: LocalExtractorOptions = {}) {
    this.#confidence = checkUnit(options.confidence ?? 0.9, 'confidence');
    this.#hedged = checkUnit(options.hedgedConfidence ?? 0.4, 'hedgedConfidence');
    this.batchChars = checkPositive(options.batchChars ?? 4000, 'batchChars');
    this.#maxQuote = checkPositive(options.maxQuoteChars ?? 240, 'maxQuoteChars');
  }

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    request.signal?.throwIfAborted();
    if (!request || !Array.isArray(request.turns)) throw new InvalidInputError('turns', 'must be an array');
    const found: Found[] = [];
    for (const turn of request.turns) {
      if (turn.role !== 'user' || typeof turn.text !== 'string' || !turn.text.trim()) continue;
      request.signal?.throwIfAborted();
      found.push(...this.#extractTurn(turn.id, turn.text, turn.at || request.now));
    }
    return { operations: resolve(found, request.candidates ?? []), usage: { llmCalls: 0 } };
  }

  /** Intents of one user turn, with their quotes. Exposed for tests and tools through {@link LocalExtractor.extract}. */
  #extractTurn(turnId: string, text: string, at: string): Found[] {
    const out: Found[] = [];
    for (const sentence of sentencesOf(text)) {
      // A question yields nothing. The cheap signs are read first; compromise's judgement (the costly part of a
      // long turn) is asked below, only of a sentence that yields something.
      if (looksLikeQuestion(sentence.text) || isInjection(sentence.text)) continue;
      const found: Found[] = [];
      for (const clause of clausesOf(sentence)) {
        if (!clause.core) continue;
        const core = clause.core;
        let dates: DateMention[] | undefined;
        // Dates are resolved (chrono) only when a rule reads them, i.e. after one of its patterns matched.
        const ctx: RuleContext = {
          core,
          get dates() {
            dates ??= findDates(core, at);
            return dates;
          },
        };
        const intents = matchClause(core, ctx);
        if (intents.length === 0) continue;
        const quote = this.#quote(text, sentence.text, clause.span.text);
        for (const intent of intents) {
          const base = intent.confidence ?? this.#confidence;
          found.push({
            ...intent,
            subject: canonicalKey(intent.subject),
            attribute: canonicalKey(intent.attribute),
            confidence: clause.hedged ? Math.min(base, this.#hedged) : base,
            turnId,
            quote,
          });
        }
      }
      if (found.length > 0 && !isQuestion(sentence)) out.push(...found);
    }
    return out;
  }

  #quote(text: string, sentence: string, clause: string): string {
    const pick = sentence.length <= this.#maxQuote ? sentence : clause.trim().slice(0, this.#maxQuote);
    // Both come from slicing `text`; the check keeps that an invariant rather than an assumption.
    return text.includes(pick) ? pick : text.slice(0, this.#maxQuote);
  }
}

/** Creates a {@link LocalExtractor}. */
export function createLocalExtractor(options?: LocalExtractorOptions): LocalExtractor {
  return new LocalExtractor(options);
}

function checkUnit(v: number, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) {
    throw new InvalidInputError(field, `must be a number between 0 and 1, got ${String(v)}`);
  }
  return v;
}

function checkPositive(v: number, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new InvalidInputError(field, `must be a positive integer, got ${String(v)}`);
  }
  return v;
}

function keyOf(subject: string, attribute: string): string {
  return `${subject}\u0000${attribute}`;
}

function candidateMatches(c: CandidateBelief, f: Found): boolean {
  if (canonicalKey(c.subject) !== f.subject) return false;
  const attr = canonicalKey(c.attribute);
  if (f.attributePrefix) {
    if (!attr.startsWith(f.attributePrefix)) return false;
    if (attr === f.attribute) return true;
    // "I gave up on the marathon" retracts goal:run_marathon.
    const want = f.attribute.slice(f.attributePrefix.length).split('_');
    const have = new Set(attr.slice(f.attributePrefix.length).split('_'));
    return want.length > 0 && want.every((w) => have.has(w));
  }
  if (attr !== f.attribute) return false;
  if (f.anyValue) return true;
  return sameValue(c.value, f.value) || canonicalValue(c.value).includes(canonicalValue(f.value));
}

/**
 * Turns intents into operations against the candidates:
 * - a negation retracts every matching candidate (nothing when none matches: a bare "not X" is no belief);
 * - a value equal to a candidate's (also through a city alias, "NYC" = "New York City") confirms it;
 * - anything else is an `add`; the engine supersedes a candidate with the same key and another value.
 * Repeated adds of one key and value merge their evidence; a retract is dropped when the same key is
 * added later in the batch (the add supersedes, keeping the chain).
 */
function resolve(found: readonly Found[], candidates: readonly CandidateBelief[]): ExtractionOperation[] {
  type Mutable = { op: ExtractionOperation; key: string; order: number };
  const ops: Mutable[] = [];
  const addIndex = new Map<string, Mutable>();
  const confirmIndex = new Map<string, Mutable>();
  const retracted = new Set<string>();

  found.forEach((f, order) => {
    const evidence = [{ turnId: f.turnId, quote: f.quote }];
    const key = keyOf(f.subject, f.attribute);
    if (f.negated) {
      // A negation in the same batch undoes an earlier add of that value.
      const pending = addIndex.get(key);
      if (pending && pending.op.op === 'add' && (f.anyValue || sameValue(pending.op.value, f.value))) {
        ops.splice(ops.indexOf(pending), 1);
        addIndex.delete(key);
      }
      for (const c of candidates) {
        if (retracted.has(c.id) || !candidateMatches(c, f)) continue;
        retracted.add(c.id);
        ops.push({
          op: { op: 'retract', id: c.id, evidence },
          key: keyOf(f.subject, canonicalKey(c.attribute)),
          order,
        });
      }
      return;
    }
    const same = candidates.find(
      (c) =>
        canonicalKey(c.subject) === f.subject &&
        canonicalKey(c.attribute) === f.attribute &&
        sameValue(c.value, f.value) &&
        !retracted.has(c.id),
    );
    const prior = addIndex.get(key);
    if (same && !(prior && prior.op.op === 'add' && !sameValue(prior.op.value, f.value))) {
      const existing = confirmIndex.get(same.id);
      if (existing && existing.op.op === 'confirm') {
        existing.op = { ...existing.op, evidence: mergeEvidence(existing.op.evidence, evidence) };
        return;
      }
      const m: Mutable = {
        op: { op: 'confirm', id: same.id, confidence: f.confidence, evidence },
        key,
        order,
      };
      confirmIndex.set(same.id, m);
      ops.push(m);
      return;
    }
    if (prior && prior.op.op === 'add' && sameValue(prior.op.value, f.value)) {
      prior.op = {
        ...prior.op,
        confidence: Math.max(prior.op.confidence, f.confidence),
        evidence: mergeEvidence(prior.op.evidence, evidence),
      };
      return;
    }
    const m: Mutable = {
      op: {
        op: 'add',
        kind: f.kind,
        subject: f.subject,
        attribute: f.attribute,
        value: f.value,
        statement: f.statement,
        confidence: f.confidence,
        evidence,
        validFrom: f.validFrom ?? null,
        validTo: f.validTo ?? null,
      },
      key,
      order,
    };
    addIndex.set(key, m);
    ops.push(m);
  });

  return ops
    .filter(
      (m) =>
        !(
          m.op.op === 'retract' && ops.some((o) => o.op.op === 'add' && o.key === m.key && o.order > m.order)
        ),
    )
    .map((m) => m.op);
}

function mergeEvidence<T extends { turnId: string; quote: string }>(a: readonly T[], b: readonly T[]): T[] {
  const out = [...a];
  for (const e of b) if (!out.some((x) => x.turnId === e.turnId && x.quote === e.quote)) out.push(e);
  return out;
}
