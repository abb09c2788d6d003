/**
 * Turns literal user text into a safe FTS5 MATCH expression. The text is never handed to FTS5 as syntax: it is
 * split into words here, each word is quoted as an FTS5 string, and the words are OR-ed.
 */
import { STOP_WORDS } from '@mem01/engine';

/** At most this many distinct terms are used, so a pasted essay cannot build a huge query. */
const MAX_TERMS = 64;

/** The distinct searchable words of `text`: letters, digits and combining marks, lower-cased, stop words dropped. */
export function queryTerms(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const word of words) {
    if (STOP_WORDS.has(word) || seen.has(word)) continue;
    seen.add(word);
    out.push(word);
    if (out.length >= MAX_TERMS) break;
  }
  return out;
}

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
