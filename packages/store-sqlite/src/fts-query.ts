/**
 * Builds safe FTS5 MATCH expressions from the store kit's query terms: each term is quoted as an FTS5 string and the
 * terms are OR-ed, so no character of the user's text is ever FTS5 syntax.
 */

/** Quotes one term as an FTS5 string (a `"` inside is doubled). */
export function quoteTerm(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/** The MATCH expression for already-split terms (quoted and OR-ed), or null when there are none. */
export function buildMatch(terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  return terms.map(quoteTerm).join(' OR ');
}

/** Decodes a SQLite/FTS5 varint at the start of `bytes` (the first field of the FTS5 averages record). */
export function readVarint(bytes: Uint8Array): number | null {
  let value = 0;
  for (let i = 0; i < 9 && i < bytes.length; i++) {
    const b = bytes[i]!;
    if (i === 8) return value * 256 + b;
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) return value;
  }
  return null;
}
