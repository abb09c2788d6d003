/** Date phrases via chrono-node, resolved against the turn's time, in UTC so results are deterministic. */
import * as chrono from 'chrono-node';
import type { Span } from './text.js';

export interface DateMention {
  /** The phrase as written, e.g. "last month". */
  readonly text: string;
  readonly index: number;
  readonly validFrom: string;
  readonly validTo: string | null;
  /** A display form for statements: a day (2025-03-09) or a month (March 2025). */
  readonly label: string;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function dayStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/**
 * Date mentions in `text`, relative to `at` (ISO-8601). A month-precision phrase ("in May", "last month")
 * spans the whole month; a day-precision one the whole day; a range uses chrono's end.
 */
export function findDates(text: string, at: string): DateMention[] {
  const instant = new Date(at);
  if (Number.isNaN(instant.getTime())) return [];
  const results = chrono.parse(text, { instant, timezone: 0 });
  const out: DateMention[] = [];
  for (const r of results) {
    // Bare numbers and times of day are not the dates the rules care about ("I'm 34", "at 5").
    if (!/[a-z]/i.test(r.text)) continue;
    // Times of day alone ("400 a" read as 4:00 am in "$2,400 a month") are not dates.
    const dated = (['day', 'month', 'weekday', 'year'] as const).some((c) => r.start.isCertain(c));
    if (!dated && (r.start.isCertain('hour') || /^\d/.test(r.text))) continue;
    const start = r.start.date();
    if (
      !dated &&
      /^(this )?(morning|afternoon|evening|night|noon|midnight)s?$/i.test(r.text.trim()) &&
      !/^this/i.test(r.text)
    ) {
      continue;
    }
    const monthOnly =
      r.start.isCertain('month') && !r.start.isCertain('day') && !r.start.isCertain('weekday');
    const yearOnly = r.start.isCertain('year') && !r.start.isCertain('month') && !r.start.isCertain('day');
    let from: Date;
    let to: Date;
    let label: string;
    if (r.end) {
      from = dayStart(start);
      to = new Date(dayStart(r.end.date()).getTime() + 86_400_000 - 1);
      label = `${from.toISOString().slice(0, 10)} to ${to.toISOString().slice(0, 10)}`;
    } else if (yearOnly) {
      from = new Date(Date.UTC(start.getUTCFullYear(), 0, 1));
      to = new Date(Date.UTC(start.getUTCFullYear() + 1, 0, 1) - 1);
      label = String(start.getUTCFullYear());
    } else if (monthOnly) {
      from = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1));
      to = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1) - 1);
      label = `${MONTHS[start.getUTCMonth()]} ${start.getUTCFullYear()}`;
    } else {
      from = dayStart(start);
      to = new Date(from.getTime() + 86_400_000 - 1);
      label = from.toISOString().slice(0, 10);
    }
    out.push({
      text: r.text,
      index: r.index,
      validFrom: from.toISOString(),
      validTo: to.toISOString(),
      label,
    });
  }
  return out;
}

/** Dates within a clause span, as spans for value clean-up. */
export function dateSpans(dates: readonly DateMention[]): Span[] {
  return dates.map((d) => ({ text: d.text, start: d.index }));
}
