/**
 * Query text handling shared by every store: what counts as a content word. Policy (what is relevant) lives
 * in the engine, so a store's own tokenizer never decides whether "what is my" matches a belief.
 */

/**
 * English stop words: the function words of the Snowball/Lucene English lists plus common auxiliaries and
 * question words.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing down during each few for from further had has have having he her here hers ' +
    'herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on ' +
    'once only or other our ours ourselves out over own same she should so some such than that the their theirs them ' +
    'themselves then there these they this those through to too under until up very was we were what when where which ' +
    'while who whom why will with would you your yours yourself yourselves s t don shall may might must also ' +
    'im ive id ill youre dont doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt tell know please'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/**
 * The content words of a text, in order: NFKC, lower case, words of letters and digits (every other character
 * is a separator, so no query character is ever syntax), possessive `'s` dropped, stop words removed.
 */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const word = m[0].replace(/['’]s$/, '').replace(/['’]/g, '');
    if (word.length === 0 || STOP_WORDS.has(word)) continue;
    out.push(word);
  }
  return out;
}
