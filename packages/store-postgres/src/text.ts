/**
 * Text as PostgreSQL stores it.
 *
 * PostgreSQL `text` cannot hold the NUL character (U+0000). Every text value this store writes to a text column
 * (belief content, outbox turns, error messages) has NUL replaced by U+FFFD, the Unicode replacement character.
 * Search words never hold NUL (it is not a letter: the store kit's splitter drops it). Transcript items are stored
 * as JSON text, where NUL is escaped as `\u0000`, so they round-trip exactly.
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
