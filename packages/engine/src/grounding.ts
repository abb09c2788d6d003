/**
 * Quote grounding: the one rule that decides whether an extractor's evidence quote is what the user said. The engine
 * applies it in reconciliation (evidence that is not grounded in a user turn is dropped); extractors apply it to
 * their model's output through the store kit, so both agree on what counts as a quote.
 */

/** Longest slice a span reference (`first words … last words`) resolves to, in characters. */
export const MAX_SPAN_CHARS = 400;

/**
 * Finds `quote` in `text`: exactly, else ignoring case, runs of whitespace and curly vs straight quotes.
 * Returns the verbatim slice of `text` that matched, or null. Quotes under 2 visible characters never match.
 *
 * A quote that does not match as a whole and holds an ellipsis (`…` or `...`) is read as a reference to a span,
 * `first words … last words`: the slice from where the first words occur to where the last words next occur (each
 * side needs 2 visible characters; the slice is cut to {@link MAX_SPAN_CHARS}). So an extractor can cite a long
 * passage in a few words and the stored evidence is still verbatim text of the turn.
 */
export function groundQuote(text: string, quote: string): string | null {
  const q = quote.trim();
  if (visible(q) < 2) return null;
  const whole = findQuote(text, q, 0);
  if (whole) return text.slice(whole.start, whole.end);
  const cut = /\s*(?:…|\.\.\.)\s*/u.exec(q);
  if (!cut) return null;
  const head = q.slice(0, cut.index);
  const tail = q.slice(cut.index + cut[0].length);
  if (visible(head) < 2 || visible(tail) < 2) return null;
  const first = findQuote(text, head, 0);
  const last = first && findQuote(text, tail, first.end);
  if (!first || !last) return null;
  return text.slice(first.start, Math.min(last.end, first.start + MAX_SPAN_CHARS)).trimEnd();
}

function visible(s: string): number {
  return s.replace(/\s/g, '').length;
}

/** Where `q` first occurs in `text` at or after `from`: exactly, else with the tolerances of {@link groundQuote}. */
function findQuote(text: string, q: string, from: number): { start: number; end: number } | null {
  const exact = text.indexOf(q, from);
  if (exact >= 0) return { start: exact, end: exact + q.length };
  const pattern = q
    .split(/\s+/)
    .map((word) =>
      [...word]
        .map((ch) => {
          if (/['‘’`]/.test(ch)) return "['‘’`]";
          if (/["“”]/.test(ch)) return '["“”]';
          // Only syntax characters may be escaped in a `u` regex (`\-` is an error there).
          return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        })
        .join(''),
    )
    .join('\\s+');
  const re = new RegExp(pattern, 'giu');
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? { start: m.index, end: m.index + m[0].length } : null;
}
