/** Money amounts: compromise finds them (#Money, #Currency), this normalises them to "$2,400" / "€500". */
import nlp from 'compromise';
import { CURRENCIES } from './lexicon.js';

export interface Amount {
  /** Normalised, e.g. "$2,400", "€500", "$90,000". */
  readonly value: string;
  /** "per month", "per year", "per week" or null. */
  readonly period: string | null;
}

const NUMBER_FORMAT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

const MULTIPLIERS: Readonly<Record<string, number>> = {
  k: 1_000,
  thousand: 1_000,
  grand: 1_000,
  m: 1_000_000,
  mm: 1_000_000,
  million: 1_000_000,
};

const AMOUNT_RE =
  /([$€£¥₹])?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(k|m|mm|thousand|grand|million)?\b\s*(usd|dollars?|bucks|eur|euros?|gbp|pounds?|quid|yen|jpy|chf|francs|cad|aud|inr|rupees)?/i;

/** The first money amount in `text`, or null. Bare numbers count only next to a money word. */
export function findAmount(text: string): Amount | null {
  const doc = nlp(text);
  const money = doc.match('(#Money|#Value) #Currency?');
  if (!money.found) return null;
  for (const candidate of money.json() as { text: string }[]) {
    const m = AMOUNT_RE.exec(
      text.slice(
        Math.max(0, text.indexOf(candidate.text)),
        text.indexOf(candidate.text) + candidate.text.length + 24,
      ),
    );
    if (!m) continue;
    const symbol = m[1];
    const word = m[5]?.toLowerCase();
    if (
      !symbol &&
      !word &&
      !/\b(rent|salary|budget|income|mortgage|pay|paid|earn|make|savings|debt)\b/i.test(text)
    ) {
      continue;
    }
    const n = Number((m[2] ?? '').replace(/,/g, '') + (m[3] ?? ''));
    if (!Number.isFinite(n)) continue;
    const mult = m[4] ? (MULTIPLIERS[m[4].toLowerCase()] ?? 1) : 1;
    const currency = CURRENCIES[symbol ?? word ?? '$'] ?? '$';
    return { value: `${currency}${NUMBER_FORMAT.format(n * mult)}`, period: findPeriod(text) };
  }
  return null;
}

function findPeriod(text: string): string | null {
  if (/\b(a|per|each|every|\/)\s?(month|mo)\b|\bmonthly\b|\/mo\b/i.test(text)) return 'per month';
  if (/\b(a|per|each|every|\/)\s?(year|yr|annum)\b|\b(annually|yearly)\b|\/yr\b/i.test(text))
    return 'per year';
  if (/\b(a|per|each|every)\s?week\b|\bweekly\b/i.test(text)) return 'per week';
  if (/\b(an|per|each|every)\s?hour\b|\bhourly\b|\/h(r|our)?\b/i.test(text)) return 'per hour';
  return null;
}
