/**
 * Text handling shared by storage and queries.
 *
 * PostgreSQL `text` cannot hold the NUL character (U+0000). Every text value this store writes to a text column
 * (belief content, outbox turns, error messages) and every lexical query has NUL replaced by U+FFFD, the
 * Unicode replacement character, so a stored value and a query built from the same input still match.
 * Transcript items are stored as JSON text, where NUL is escaped as `\u0000`, so they round-trip exactly.
 */

const NUL = /\u0000/g;

/** `text` with every NUL replaced by U+FFFD (see the module comment). */
export function pgText(text: string): string {
  return text.includes('\u0000') ? text.replace(NUL, '\uFFFD') : text;
}

/** Same as {@link pgText} for an optional value. */
export function pgTextOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : pgText(text);
}

const MAX_TERMS = 64;
const MAX_TERM_LENGTH = 100;

/**
 * Splits literal user text into search words: runs of letters and digits, lower-cased, deduplicated, at most
 * 64 of them. No character that tsquery treats as syntax (`& | ! : * ( ) < - > '` and backslash) survives, so
 * the words can be handed to `plainto_tsquery` one by one and OR-ed.
 */
export function searchTerms(query: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const match of pgText(query)
    .normalize('NFKC')
    .matchAll(/[\p{L}\p{N}]+/gu)) {
    const term = match[0].toLowerCase().slice(0, MAX_TERM_LENGTH);
    if (seen.has(term)) continue;
    seen.add(term);
    out.push(term);
    if (out.length >= MAX_TERMS) break;
  }
  return out;
}
