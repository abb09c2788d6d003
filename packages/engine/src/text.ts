/**
 * Query text handling shared by every store: what counts as a content word. Policy (what is relevant) lives
 * in the engine, so a store's own tokenizer never decides whether "what is my" matches a belief.
 */
import { stemmer } from 'stemmer';

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
const APOSTROPHE = /['’]/;

/**
 * The content words of a text, in order: NFKC, lower case, words of letters and digits (every other character
 * is a separator, so no query character is ever syntax), possessive `'s` dropped, stop words removed.
 */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  // `match` with the global flag gives the words as strings, without a match object each (a long turn has thousands).
  for (const raw of text.normalize('NFKC').toLowerCase().match(WORD) ?? []) {
    // Most words hold no apostrophe: the two replacements are skipped for them.
    const word = APOSTROPHE.test(raw) ? raw.replace(/['’]s$/, '').replace(/['’]/g, '') : raw;
    if (word.length === 0 || STOP_WORDS.has(word)) continue;
    out.push(word);
  }
  return out;
}

/** Stems already computed: a conversation's vocabulary repeats, and Porter's rules cost far more than a lookup. */
const stems = new Map<string, string>();
/** Words whose stems are kept; past it the memo starts over (a bound on memory, not on correctness). */
const STEM_MEMO_SIZE = 200_000;

/** A content word reduced to its stem (Porter), so "lived", "lives" and "living" meet. Short words are kept. */
export function stem(word: string): string {
  if (word.length <= 2) return word;
  let s = stems.get(word);
  if (s === undefined) {
    s = stemmer(word);
    if (stems.size >= STEM_MEMO_SIZE) stems.clear();
    stems.set(word, s);
  }
  return s;
}

/** The stems of the content words of a text, in order. */
export function contentStems(text: string): string[] {
  return contentWords(text).map(stem);
}

const SENTENCES = new Intl.Segmenter('en', { granularity: 'sentence' });

/** The sentences of a text, trimmed, empty ones dropped (Unicode sentence boundaries). */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const s of SENTENCES.segment(text)) {
    const t = s.segment.trim();
    if (t !== '') out.push(t);
  }
  return out;
}

/** Words that open a question or a request ("Where do I live", "Remind me of …", "List my trips"). */
const ASKING = new Set(
  (
    'what whats where wheres when who whos whom whose why how hows which do does did is are was were am can could ' +
    'would will should shall may might have has had tell remind show list give find recommend suggest any anything'
  ).split(' '),
);
/** Words that open a statement about the speaker, even one that ends in a question ("My rent is $2,400, is that a lot?"). */
const SPEAKER = new Set("i i'm i've i'd i'll my me mine we we're we've we'd our".split(' '));
/** Closing punctuation, quotes, brackets and emoji that may follow a question mark. */
const TRAILING = /(?:[\s"'’”)\]}\p{Extended_Pictographic}]|\uFE0F)+$/u;

/**
 * Whether a text only asks: every sentence ends with a question mark or opens with a question or request word,
 * and none says anything about the speaker otherwise ("Where do I live?", "Remind me what my rent is."). "I moved
 * to Denver. Any tips?" and "My rent is $2,400, is that a lot?" do not only ask.
 */
export function isQuestionOnly(text: string): boolean {
  const parts = sentences(text);
  return parts.length > 0 && parts.every(asks);
}

/** Whether one sentence asks or requests (and does not open as a statement about the speaker). */
function asks(sentence: string): boolean {
  const first = sentence.normalize('NFKC').toLowerCase().match(WORD)?.[0]?.replace(/’/g, "'");
  if (first === undefined || SPEAKER.has(first)) return false;
  return ASKING.has(first.replace(/'/g, '')) || sentence.replace(TRAILING, '').endsWith('?');
}

/** The stems of what a text is about: its content words but the words of asking ("remind", "list", "recommend"). */
export function topicStems(text: string): Set<string> {
  return new Set(
    contentWords(text)
      .filter((w) => !ASKING.has(w))
      .map(stem),
  );
}

/**
 * Whether `text` (a past turn) is the query said again, so it tells the model nothing the query does not: at least
 * `share` of its topic stems ({@link topicStems}; `queryStems` is the query's) are the query's, and either it only
 * asks ("Where do I live?" for "Where do I live now?"), or it asks as well and the query's stems are, for `share`
 * too, its own (a request said again: "I'm planning a trip to Denver. Any tips?" asked twice). A statement alone is
 * never an echo: it may be the answer. Such a turn is the best lexical match for the query and never its answer.
 */
export function echoesQuery(text: string, queryStems: ReadonlySet<string>, share = 0.8): boolean {
  if (queryStems.size === 0) return false;
  const own = topicStems(text);
  if (own.size === 0) return false;
  let shared = 0;
  for (const s of own) if (queryStems.has(s)) shared++;
  if (shared < share * own.size) return false;
  if (isQuestionOnly(text)) return true;
  // A statement holding the query's words may be its answer ("I live in Denver." for "Do I live in Denver?"): only a
  // turn that asks as well, and holds nearly all the query's words, is the query again.
  return shared >= share * queryStems.size && (text.includes('?') || sentences(text).some(asks));
}

const encoder = new TextEncoder();
const bytes = (s: string): number => encoder.encode(s).byteLength;

/** `text` cut to at most `maxBytes` UTF-8 bytes at a word boundary, with `…` when cut. */
export function clip(text: string, maxBytes: number): string {
  if (bytes(text) <= maxBytes) return text;
  const words = text.split(/(\s+)/);
  let out = '';
  for (const w of words) {
    if (bytes(`${out}${w}…`) > maxBytes) break;
    out += w;
  }
  out = out.trimEnd();
  if (out === '') {
    // One word longer than the limit: cut inside it, on a code point.
    for (const ch of text) {
      if (bytes(`${out}${ch}…`) > maxBytes) break;
      out += ch;
    }
  }
  return `${out}…`;
}

/**
 * The part of `text` that answers `query`, at most `maxBytes` UTF-8 bytes: the sentences holding the most query words
 * (by stem), in their order, joined with `…` where sentences were skipped; the first sentence when none match. The
 * best sentence is always in it: when it is longer than the limit, the snippet is the stretch of it that holds the
 * most query words, led by the few words before them (where an answer often sits: "last week I joined …").
 */
export function snippet(
  text: string,
  query: string,
  maxBytes: number,
  weights?: ReadonlyMap<string, number>,
): string {
  const all = sentences(text);
  if (all.length === 0) return '';
  const wanted = new Set(contentStems(query));
  const weight = (w: string) => (wanted.has(w) ? (weights?.get(w) ?? 1) : 0);
  const hits = (s: string) => [...new Set(contentStems(s))].reduce((n, w) => n + weight(w), 0);
  const scored = all.map((s, i) => ({ s, i, n: wanted.size > 0 ? hits(s) : 0 }));
  const matching = scored.filter((x) => x.n > 0);
  // The best sentences first (most query words, then earliest), kept while they fit, shown in text order.
  const order = (matching.length > 0 ? matching : scored.slice(0, 1)).sort((a, b) => b.n - a.n || a.i - b.i);
  const best = order[0]!;
  const marks = (x: { i: number }) => (x.i > 0 ? bytes('…') : 0);
  if (bytes(best.s) + marks(best) > maxBytes) {
    // `…` marks the sentences before it too, once.
    const cut = stretch(best.s, weight, maxBytes - marks(best));
    return best.i > 0 && !cut.startsWith('…') ? `…${cut}` : cut;
  }
  const chosen: { s: string; i: number }[] = [];
  let used = 0;
  for (const x of order) {
    const cost = bytes(x.s) + (chosen.length > 0 ? 2 : 0);
    if (used + cost > maxBytes) continue;
    chosen.push(x);
    used += cost;
  }
  chosen.sort((a, b) => a.i - b.i);
  let out = '';
  let prev = -1;
  // `…` marks the sentences left out before and between those shown; the end of a sentence needs none after it.
  for (const x of chosen) {
    if (out !== '') out += x.i === prev + 1 ? ' ' : ' … ';
    else if (x.i > 0) out += '…';
    out += x.s;
    prev = x.i;
  }
  return bytes(out) <= maxBytes ? out : clip(out, maxBytes);
}

/** Words of context kept before the first query word of a stretch. */
const LEAD_WORDS = 3;

/**
 * The stretch of one sentence, at most `maxBytes` with its `…` marks, that holds the most query words: it starts
 * {@link LEAD_WORDS} words before a query word (the earliest such stretch on a tie).
 */
function stretch(sentence: string, weight: (stem: string) => number, maxBytes: number): string {
  const words = sentence.split(/\s+/).filter((w) => w !== '');
  const worth = words.map((w) => contentStems(w).reduce((n, st) => n + weight(st), 0));
  const isHit = worth.map((n) => n > 0);
  let bestFrom = 0;
  let bestHits = -1;
  for (let h = 0; h < words.length; h++) {
    if (!isHit[h] && !(h === 0 && bestHits < 0)) continue;
    const from = Math.max(0, h - LEAD_WORDS);
    const lead = from > 0 ? '…' : '';
    let used = bytes(lead) + bytes('…');
    let n = 0;
    for (let j = from; j < words.length; j++) {
      used += bytes(words[j]!) + (j > from ? 1 : 0);
      if (used > maxBytes) break;
      n += worth[j]!;
    }
    if (n > bestHits) {
      bestHits = n;
      bestFrom = from;
    }
  }
  const lead = bestFrom > 0 ? '…' : '';
  return lead + clip(words.slice(bestFrom).join(' '), maxBytes - bytes(lead));
}

/**
 * `text` in consecutive parts of at most `maxBytes` UTF-8 bytes each, cut between sentences where it can, else
 * between words, else between code points. Joining the parts with single spaces gives the text back up to
 * whitespace. A text within the limit is one part.
 */
export function splitText(text: string, maxBytes: number): string[] {
  if (bytes(text) <= maxBytes) return [text];
  const pieces: string[] = [];
  for (const sentence of sentences(text)) {
    if (bytes(sentence) <= maxBytes) {
      pieces.push(sentence);
      continue;
    }
    // A sentence longer than a part: its words, and a word longer than a part in code points.
    let run = '';
    for (const word of sentence.split(/\s+/)) {
      const next = run === '' ? word : `${run} ${word}`;
      if (bytes(next) <= maxBytes) {
        run = next;
        continue;
      }
      if (run !== '') pieces.push(run);
      run = '';
      if (bytes(word) <= maxBytes) {
        run = word;
        continue;
      }
      let chunk = '';
      for (const ch of word) {
        if (bytes(chunk + ch) > maxBytes) {
          pieces.push(chunk);
          chunk = '';
        }
        chunk += ch;
      }
      run = chunk;
    }
    if (run !== '') pieces.push(run);
  }
  const parts: string[] = [];
  let current = '';
  for (const piece of pieces) {
    const next = current === '' ? piece : `${current} ${piece}`;
    if (bytes(next) <= maxBytes) current = next;
    else {
      parts.push(current);
      current = piece;
    }
  }
  if (current !== '') parts.push(current);
  return parts;
}
