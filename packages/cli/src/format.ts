/** Plain-text rendering for the terminal: tables, receipts and timelines. */
import type { Belief, ScoredBelief } from '@mem01/engine';

/** A left-aligned table; cells are made single-line, columns padded to the widest cell. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
  const all = [headers.map(clean), ...rows.map((r) => r.map(clean))];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - [...c].length)))
      .join('  ')
      .trimEnd();
  return `${[line(all[0] ?? []), ...all.slice(1).map(line)].join('\n')}\n`;
}

/** Shortens text for a table cell. */
export function clip(text: string, max: number): string {
  const chars = [...text.replace(/\s+/g, ' ')];
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

export function num(value: number | null, digits = 3): string {
  return value === null ? '-' : value.toFixed(digits);
}

/** The day of an ISO time (`YYYY-MM-DD`). */
function day(iso: string): string {
  return iso.slice(0, 10);
}

/**
 * The date of the conversation a summary summarizes, from its first turn to its last (`2026-03-02`, or
 * `2026-03-02 to 2026-03-04` when it ran over more than one day); null for a belief of another kind.
 */
export function conversationDate(
  b: Pick<Belief, 'kind' | 'validFrom' | 'validTo' | 'storedAt'>,
): string | null {
  if (b.kind !== 'summary') return null;
  const from = day(b.validFrom ?? b.storedAt);
  const to = b.validTo ? day(b.validTo) : from;
  return to === from ? from : `${from} to ${to}`;
}

/** The statement as listed: a summary's is labelled with its conversation's date, as the injected block labels it. */
export function listedStatement(b: Belief): string {
  const date = conversationDate(b);
  return date === null ? b.statement : `[conversation ${date}] ${b.statement}`;
}

/** One belief as a short line: `id status kind subject.attribute = value`. */
export function beliefKey(b: Belief): string {
  return `${b.subject}.${b.attribute}`;
}

export function signalCells(s: ScoredBelief['signals']): string[] {
  if (!s) return ['-', '-', '-', '-', '-'];
  return [num(s.lexical), num(s.vector), num(s.recency), num(s.confidence, 2), num(s.kind, 2)];
}
