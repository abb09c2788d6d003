/**
 * What forgetting does to the transcript: the policy every store applies inside its `forget` transaction.
 *
 * - The items a belief came from (its evidence turns) lose all their text: every text field becomes
 *   {@link FORGOTTEN_MARKER}. The belief may paraphrase the turn ("lives in Lisbon" from "I moved to Lisbon"), so
 *   removing only the belief's words would leave the fact readable.
 * - Every other item of the same user loses each occurrence of the belief's value and statement (whole words, any
 *   case), so an assistant reply that repeated it does not keep it either.
 *
 * Item structure (types, roles, call ids) is kept, so the session stays a valid Agents SDK history.
 */

/** What replaces forgotten text in a transcript item. */
export const FORGOTTEN_MARKER = '[forgotten]';

/** Needles shorter than this (after trimming) are not searched for: "tea" would be cut out of "steam". */
export const MIN_FORGET_NEEDLE_CHARS = 3;

/** The keys whose string values are text a person or a model wrote (as opposed to ids, types and roles). */
const TEXT_KEYS = new Set(['content', 'text', 'output', 'arguments', 'transcript', 'refusal', 'summary']);

/** The texts to cut out of a user's other transcript items when a belief with this value and statement is
 * forgotten: distinct, trimmed, long enough. */
export function forgetNeedles(belief: { readonly value: string; readonly statement: string }): string[] {
  const out: string[] = [];
  for (const raw of [belief.statement, belief.value]) {
    const needle = raw.trim();
    if (needle.length >= MIN_FORGET_NEEDLE_CHARS && !out.includes(needle)) out.push(needle);
  }
  return out;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One case-insensitive pattern matching any needle as whole words (not inside a longer word). */
function needlePattern(needles: readonly string[]): RegExp | null {
  if (needles.length === 0) return null;
  const alternatives = [...needles].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
}

/**
 * A redacted copy of one transcript item, or `null` when nothing in it changes.
 * `whole`: the item is an evidence turn; every text field becomes the marker. Otherwise each occurrence of a needle
 * in any string of the item becomes the marker.
 */
export function redactTranscriptItem(
  item: unknown,
  rule: { readonly whole: boolean; readonly needles: readonly string[] },
): unknown | null {
  const pattern = needlePattern(rule.needles);
  let changed = false;
  const visit = (value: unknown, key: string | null): unknown => {
    if (typeof value === 'string') {
      if (rule.whole && key !== null && TEXT_KEYS.has(key)) {
        if (value === FORGOTTEN_MARKER) return value;
        changed = true;
        return FORGOTTEN_MARKER;
      }
      if (!pattern) return value;
      const next = value.replace(pattern, FORGOTTEN_MARKER);
      if (next !== value) changed = true;
      return next;
    }
    if (Array.isArray(value)) return value.map((v) => visit(v, key));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = visit(v, k);
      return out;
    }
    return value;
  };
  const result = visit(item, null);
  return changed ? result : null;
}

/**
 * A quick prefilter for stores: could this serialised item contain one of the needles? Lower-cases ASCII only (as
 * SQL `lower()` does), so it may say yes too often but never no wrongly for ASCII text.
 */
export function mayContainNeedle(serialised: string, needles: readonly string[]): boolean {
  const hay = serialised.toLowerCase();
  return needles.some((n) => hay.includes(JSON.stringify(n).slice(1, -1).toLowerCase()));
}
