/**
 * The heavy half of the local extractor: sentence and clause parsing (compromise), date resolution
 * (chrono-node) and the rules. `local-extractor.ts` imports this module on first use, so that importing
 * `@mem01/local` (and recalling with its embedder) never loads the NLP libraries.
 */
import { canonicalKey } from '@mem01/engine/provider-kit';
import { type DateMention, findDates } from './dates.js';
import { type Intent, matchClause, type RuleContext } from './rules.js';
import { clausesOf, isInjection, isQuestion, looksLikeQuestion, sentencesOf } from './text.js';

/** An intent of one user turn, with its evidence quote and final confidence. */
export interface Found extends Intent {
  readonly turnId: string;
  readonly quote: string;
  readonly confidence: number;
}

/** How {@link intentsOfTurn} scores and quotes (the extractor's resolved options). */
export interface TurnSettings {
  readonly confidence: number;
  readonly hedged: number;
  readonly maxQuote: number;
}

/** Intents of one user turn, with their quotes. */
export function intentsOfTurn(turnId: string, text: string, at: string, settings: TurnSettings): Found[] {
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
      const quote = quoteOf(text, sentence.text, clause.span.text, settings.maxQuote);
      for (const intent of intents) {
        const base = intent.confidence ?? settings.confidence;
        found.push({
          ...intent,
          subject: canonicalKey(intent.subject),
          attribute: canonicalKey(intent.attribute),
          confidence: clause.hedged ? Math.min(base, settings.hedged) : base,
          turnId,
          quote,
        });
      }
    }
    if (found.length > 0 && !isQuestion(sentence)) out.push(...found);
  }
  return out;
}

function quoteOf(text: string, sentence: string, clause: string, maxQuote: number): string {
  const pick = sentence.length <= maxQuote ? sentence : clause.trim().slice(0, maxQuote);
  // Both come from slicing `text`; the check keeps that an invariant rather than an assumption.
  return text.includes(pick) ? pick : text.slice(0, maxQuote);
}
