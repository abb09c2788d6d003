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
} from '@mem01/engine/provider-kit';
import type { Found, TurnSettings } from './turn-intents.js';
import { sameValue } from './values.js';

type TurnIntents = typeof import('./turn-intents.js');

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
 *
 * Creating one is cheap: compromise and chrono-node are loaded by the first `extract()`, never at import, so a process that only recalls never loads them.
 */
export class LocalExtractor implements Extractor {
  readonly name = 'local-rules';
  readonly batchChars: number;
  readonly #settings: TurnSettings;
  #rules: Promise<TurnIntents> | null = null;

  constructor(options: LocalExtractorOptions = {}) {
    this.#settings = {
      confidence: checkUnit(options.confidence ?? 0.9, 'confidence'),
      hedged: checkUnit(options.hedgedConfidence ?? 0.4, 'hedgedConfidence'),
      maxQuote: checkPositive(options.maxQuoteChars ?? 240, 'maxQuoteChars'),
    };
    this.batchChars = checkPositive(options.batchChars ?? 4000, 'batchChars');
  }

  #load(): Promise<TurnIntents> {
    // Deferred: the recall path (store, embedder, engine) never needs the parser, and it dominates import time.
    // A failed load is not cached, so a later extraction retries it.
    this.#rules ??= import('./turn-intents.js').catch((err: unknown) => {
      this.#rules = null;
      throw err;
    });
    return this.#rules;
  }

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    request.signal?.throwIfAborted();
    if (!request || !Array.isArray(request.turns)) throw new InvalidInputError('turns', 'must be an array');
    const { intentsOfTurn } = await this.#load();
    const found: Found[] = [];
    for (const turn of request.turns) {
      if (turn.role !== 'user' || typeof turn.text !== 'string' || !turn.text.trim()) continue;
      request.signal?.throwIfAborted();
      found.push(...intentsOfTurn(turn.id, turn.text, turn.at || request.now, this.#settings));
    }
    return { operations: resolve(found, request.candidates ?? []), usage: { llmCalls: 0 } };
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
