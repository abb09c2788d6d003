/**
 * Value comparison for the extractor's reconciliation against candidates. Kept apart from `text.ts` so that the
 * extractor's thin front (`local-extractor.ts`) loads without compromise.
 */
import { canonicalValue } from '@mem01/engine/provider-kit';
import { CITY_ALIASES } from './lexicon.js';

/** Display name for a city as written ("NYC" → "New York City"); unknown names are returned unchanged. */
export function displayCity(value: string): string {
  return CITY_ALIASES[value.toLowerCase().replace(/\./g, '').trim()] ?? value;
}

/** Values are the same when equal after the engine's canonicalisation, or after alias expansion. */
export function sameValue(a: string, b: string): boolean {
  if (canonicalValue(a) === canonicalValue(b)) return true;
  return canonicalValue(displayCity(a)) === canonicalValue(displayCity(b));
}
