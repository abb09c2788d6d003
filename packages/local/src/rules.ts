/**
 * The rules: compromise match patterns over one clause, each turning a match into belief intents with
 * canonical subject/attribute keys. Every pattern is anchored at the clause start (`^`), so a first-person
 * claim only counts when the clause begins with it, not when it is embedded in something else
 * ("store that I am admin", "she said I live in Paris").
 */
import type { BeliefKind } from '@mem01/engine';
import nlp from 'compromise';
import { findAmount } from './amounts.js';
import type { DateMention } from './dates.js';
import {
  AMOUNTS,
  DIETS,
  OCCUPATIONS,
  RELATION_PLURALS,
  RELATIONS,
  RELATIONSHIP_STATUSES,
} from './lexicon.js';
import { capitalise, cleanValue, objectKey, type Span } from './text.js';
import { displayCity } from './values.js';

/** What a rule found, before it is matched against the candidates. */
export interface Intent {
  readonly kind: BeliefKind;
  readonly subject: string;
  readonly attribute: string;
  /** Empty only for negations that retract whatever value the key has. */
  readonly value: string;
  readonly statement: string;
  /** A negation: retract the matching candidate instead of adding. */
  readonly negated?: boolean;
  /** With `negated`: retract any candidate of the key, whatever its value. */
  readonly anyValue?: boolean;
  /** With `negated`: match candidates whose attribute starts with this prefix and whose key/value contains the value. */
  readonly attributePrefix?: string;
  readonly validFrom?: string | null;
  readonly validTo?: string | null;
  /** Overrides the default confidence (before hedging). */
  readonly confidence?: number;
}

export interface RuleContext {
  readonly core: string;
  /** Dates mentioned in the clause (chrono), relative to the turn time. */
  readonly dates: readonly DateMention[];
}

type View = ReturnType<typeof nlp>;
type Groups = Record<string, View>;

interface Rule {
  readonly name: string;
  readonly patterns: readonly string[];
  build(groups: Groups, ctx: RuleContext): Intent[] | null;
}

const who = (subject: string): string =>
  subject === 'user' ? 'The user' : `The user's ${subject.replace(/_/g, ' ')}`;

function text(groups: Groups, name: string, ctx: RuleContext, cut = true): string {
  const v = groups[name];
  if (!v?.found) return '';
  return cleanValue(
    v.text(),
    ctx.dates.map((d): Span => ({ text: d.text, start: d.index })),
    cut,
  );
}

function firstNumber(v: View): number | undefined {
  const got: unknown = v.numbers().get();
  const first: unknown = Array.isArray(got) ? got[0] : got;
  return typeof first === 'number' ? first : undefined;
}

function firstDate(ctx: RuleContext): DateMention | undefined {
  return ctx.dates[0];
}

const JOB_WORDS =
  /^(?:(?:my|the|a|an|this|that)\s+)?(?:current\s+|old\s+|day\s+)?(?:job|jobs|position|role|company|employer|work|gig)$/i;

function limitWords(v: string, n: number): string {
  return v.split(/\s+/).slice(0, n).join(' ');
}

// ---------- builders shared by several rules ----------

function homeCity(subject: string, place: string, ctx: RuleContext, moved: boolean): Intent[] | null {
  const value = limitWords(place, 6);
  if (!value || !/\p{L}/u.test(value)) return null;
  const d = moved ? firstDate(ctx) : undefined;
  const lives = subject === 'user' ? 'lives' : 'lives';
  return [
    {
      kind: subject === 'user' ? 'fact' : 'relationship',
      subject,
      attribute: 'home_city',
      value,
      statement: `${who(subject)} ${lives} in ${displayCity(value)}${d ? ` (moved ${d.label})` : ''}.`,
      validFrom: d?.validFrom ?? null,
    },
  ];
}

function employer(subject: string, raw: string, ctx: RuleContext, started: boolean): Intent[] | null {
  const out: Intent[] = [];
  let emp = raw;
  const asRole = /^(.*?)\s+as\s+(?:a|an|the)\s+(.+)$/i.exec(emp);
  if (asRole) {
    emp = cleanValue(asRole[1] ?? '');
    const occ = cleanValue(asRole[2] ?? '');
    if (occ) out.push(occupationIntent(subject, occ));
  }
  emp = limitWords(cleanValue(emp), 6);
  if (!emp || JOB_WORDS.test(emp)) return out.length ? out : null;
  if (/^(myself|my own)$/i.test(emp)) emp = 'self-employed';
  const d = started ? firstDate(ctx) : undefined;
  out.unshift({
    kind: subject === 'user' ? 'fact' : 'relationship',
    subject,
    attribute: 'employer',
    value: emp,
    statement:
      emp === 'self-employed' ? `${who(subject)} is self-employed.` : `${who(subject)} works at ${emp}.`,
    validFrom: d?.validFrom ?? null,
  });
  return out;
}

function occupationIntent(subject: string, occ: string): Intent {
  const value = limitWords(occ, 5);
  const article = /^[aeiou]/i.test(value) ? 'an' : 'a';
  return {
    kind: subject === 'user' ? 'identity' : 'relationship',
    subject,
    attribute: 'occupation',
    value,
    statement: `${who(subject)} is ${article} ${value}.`,
  };
}

/** The occupation part of "a nurse at Mercy", or null when the noun is not a person-role (compromise #Actor). */
function occupation(subject: string, group: View | undefined, ctx: RuleContext): Intent[] | null {
  if (!group?.found) return null;
  const raw = cleanValue(
    group.text(),
    ctx.dates.map((d) => ({ text: d.text, start: d.index })),
  );
  const [role, emp] = raw.split(/\s+(?:at|for|with)\s+/i) as [string, string | undefined];
  const lower = role.toLowerCase();
  const headText = lower.split(/\s+/).pop() ?? '';
  // Tagged in context (compromise tags "engineer" as #Actor inside the clause) or a known occupation.
  const actor = group.match(headText).has('#Actor') || OCCUPATIONS.has(headText) || OCCUPATIONS.has(lower);
  if (!actor || RELATIONS[headText] || /\b(fan|lover|person|guy|girl|bit|kind|type)\b/i.test(role)) {
    return null;
  }
  if (DIETS.includes(role.toLowerCase())) return null;
  const out: Intent[] = [occupationIntent(subject, role)];
  if (emp) out.push(...(employer(subject, emp, ctx, false) ?? []));
  return out;
}

function diet(value: string): string | null {
  const v = value.toLowerCase().replace(/\s+/g, ' ');
  return DIETS.find((d) => v === d || v.startsWith(`${d} `)) ?? null;
}

function dietIntent(d: string, negated = false): Intent {
  return {
    kind: 'identity',
    subject: 'user',
    attribute: 'diet',
    value: d,
    statement: `The user is ${d}.`,
    negated,
  };
}

/** "hiking, biking and swimming" → three preferences; a single object stays one. */
function preferences(subject: string, object: string, value: 'likes' | 'dislikes'): Intent[] | null {
  const parts = object
    .split(/\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+/i)
    .map((p) => cleanValue(p))
    .filter(Boolean);
  const out = parts.flatMap((p) => preference(subject, p, value) ?? []);
  return out.length ? out : null;
}

function preference(
  subject: string,
  object: string,
  value: 'likes' | 'dislikes' | 'prefers',
): Intent[] | null {
  const obj = limitWords(object, 6);
  const key = objectKey(obj);
  if (!key) return null;
  const verb = value === 'likes' ? 'likes' : value === 'dislikes' ? 'dislikes' : 'prefers';
  return [
    {
      kind: 'preference',
      subject,
      attribute: `preference:${key}`,
      value,
      statement: `${who(subject)} ${verb} ${obj}.`,
    },
  ];
}

/** One intent about the user themself; `more` adds a negation, dates or a confidence. */
function userIntent(
  kind: BeliefKind,
  attribute: string,
  value: string,
  statement: string,
  more: Partial<Intent> = {},
): Intent[] {
  return [{ kind, subject: 'user', attribute, value, statement, ...more }];
}

/** The user's favorite of category `c` is `v` (at most 6 words), unless `v` fails `names`. */
function favorite(g: Groups, ctx: RuleContext, names: (v: string) => boolean = () => true): Intent[] | null {
  const cat = text(g, 'c', ctx);
  const v = limitWords(text(g, 'v', ctx), 6);
  const key = objectKey(cat);
  if (!key || !v || !names(v)) return null;
  return userIntent('preference', `favorite:${key}`, v, `The user's favorite ${cat.toLowerCase()} is ${v}.`);
}

/** A phrase the user said of themselves, as a statement about the user: "my fitness" → "their fitness". */
function aboutTheUser(phrase: string): string {
  return phrase
    .replace(/\bmyself\b/gi, 'themselves')
    .replace(/\bmine\b/gi, 'theirs')
    .replace(/\bmy\b/gi, 'their');
}

function goal(phrase: string, ctx: RuleContext, negated = false, ongoing?: string): Intent[] | null {
  const value = limitWords(phrase, 10);
  const key = objectKey(value);
  if (!key) return null;
  const d = firstDate(ctx);
  // An ongoing activity ("I'm working on a novel") is said as one: the user is doing it, not wishing to.
  const said = aboutTheUser(ongoing === undefined ? `wants to ${value}` : `is ${limitWords(ongoing, 10)}`);
  return [
    {
      kind: 'goal',
      subject: 'user',
      attribute: `goal:${key}`,
      value,
      statement: `The user ${said}${d ? ` (${d.label})` : ''}.`,
      validFrom: d?.validFrom ?? null,
      validTo: d?.validTo ?? null,
      negated,
      attributePrefix: negated ? 'goal:' : undefined,
    },
  ];
}

function personName(raw: string): string {
  const words = raw.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (const w of words.slice(0, 3)) {
    if (/^(and|but|by|from|i|who|which|the|a|an|is|was)$/i.test(w)) break;
    out.push(w.replace(/[^\p{L}\p{M}'’.-]/gu, ''));
  }
  return capitalise(out.filter(Boolean).join(' '));
}

function relationOf(word: string): string | null {
  const w = word
    .toLowerCase()
    .replace(/['’]s$/, '')
    .trim();
  return RELATIONS[w] ?? null;
}

function nameIntent(subject: string, name: string, negated = false): Intent[] | null {
  if (!name) return null;
  return [
    {
      kind: subject === 'user' ? 'identity' : 'relationship',
      subject,
      attribute: 'name',
      value: name,
      statement:
        subject === 'user'
          ? `The user's name is ${name}.`
          : `The user's ${subject.replace(/_/g, ' ')} is named ${name}.`,
      negated,
    },
  ];
}

function amountIntent(attribute: string, noun: string, rest: string): Intent[] | null {
  const amount = findAmount(rest);
  if (!amount) return null;
  const what = noun.toLowerCase();
  return [
    {
      kind: 'fact',
      subject: 'user',
      attribute,
      value: amount.value,
      statement: `The user's ${what} is ${amount.value}${amount.period ? ` ${amount.period}` : ''}.`,
    },
  ];
}

function ageIntent(subject: string, group: View | undefined): Intent[] | null {
  if (!group?.found) return null;
  const n = firstNumber(group);
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n > 130) return null;
  return [
    {
      kind: subject === 'user' ? 'identity' : 'relationship',
      subject,
      attribute: 'age',
      value: String(n),
      statement: `${who(subject)} is ${n} years old.`,
    },
  ];
}

/** Rules about someone else ("my sister", "my wife"): applied to the rest of the clause after the relation. */
const THIRD_PERSON: readonly Rule[] = [
  {
    name: 'third.name',
    patterns: ['^(is called|is named|goes by) [<v>.+]'],
    build: (g, ctx) => nameIntent('?', personName(text(g, 'v', ctx))),
  },
  {
    name: 'third.employer',
    patterns: [
      '^(just|recently|now)? (works|is working|started) (at|for) [<v>.+]',
      '^(just|recently)? joined [<v>.+]',
    ],
    build: (g, ctx) => employer('?', text(g, 'v', ctx, false), ctx, false),
  },
  {
    name: 'third.home',
    patterns: [
      '^(still|now)? (lives|is living|is based|resides) in [<v>.+]',
      '^(just|recently)? (moved|relocated) to [<v>.+]',
    ],
    build: (g, ctx) => homeCity('?', text(g, 'v', ctx), ctx, false),
  },
  {
    name: 'third.age',
    patterns: ['^(is|just turned|turned) [<v>#Value] (years|year|yrs)? old?$'],
    build: (g) => ageIntent('?', g.v),
  },
  {
    name: 'third.occupation',
    patterns: ['^is (a|an) [<v>.+]', '^works as (a|an)? [<v>.+]'],
    build: (g, ctx) => occupation('?', g.v, ctx),
  },
  {
    name: 'third.likes',
    patterns: ['^(really)? (likes|loves|enjoys|adores) [<v>.+]'],
    build: (g, ctx) => preference('?', text(g, 'v', ctx), 'likes'),
  },
  {
    name: 'third.dislikes',
    patterns: ['^(really)? (hates|dislikes|detests) [<v>.+]', '^(does not|doesnt) (like|enjoy) [<v>.+]'],
    build: (g, ctx) => preference('?', text(g, 'v', ctx), 'dislikes'),
  },
];

function applyThirdPerson(subject: string, rest: string, ctx: RuleContext): Intent[] {
  if (!rest.trim()) return [];
  const intents = runRules(THIRD_PERSON, rest, { ...ctx, core: rest }) ?? [];
  return intents.map((i) => ({
    ...i,
    subject,
    kind: 'relationship',
    statement: i.statement.replace("The user's ?", `The user's ${subject.replace(/_/g, ' ')}`),
  }));
}

const REL_WORDS = Object.keys(RELATIONS)
  .filter((w) => !w.includes(' '))
  .join('|');
const PLURAL_WORDS = Object.keys(RELATION_PLURALS).join('|');
const AMOUNT_WORDS = Object.keys(AMOUNTS).join('|');

/** First-person rules, most specific first. The first rule that matches a clause wins. */
export const RULES: readonly Rule[] = [
  // ----- name and identity -----
  {
    name: 'name',
    patterns: [
      "^my name (is|'s) [<v>.+]",
      '^(i am|i go by) called [<v>.+]',
      '^(i go by|call me|everyone calls me|people call me) [<v>.+]',
    ],
    build: (g, ctx) => nameIntent('user', personName(text(g, 'v', ctx))),
  },
  {
    name: 'name.not',
    patterns: ["^my name (is|'s) not [<v>.+]"],
    build: (g, ctx) => nameIntent('user', personName(text(g, 'v', ctx)), true),
  },
  {
    name: 'pronouns',
    patterns: ['^my pronouns are [<v>.+]', '^i use [<v>.+] pronouns$'],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx)
        .toLowerCase()
        .replace(/\s*\/\s*/g, '/');
      if (!/^[a-z/ ]{2,30}$/.test(v)) return null;
      return userIntent('identity', 'pronouns', v, `The user's pronouns are ${v}.`);
    },
  },
  {
    name: 'age',
    patterns: [
      '^i am [<v>#Value] (years|year|yrs)? old?$',
      '^(i just turned|i turned) [<v>#Value]',
      '^my age is [<v>#Value]',
    ],
    build: (g) => ageIntent('user', g.v),
  },
  {
    name: 'relationship_status',
    patterns: [
      `^i am (now|happily)? [<v>(${RELATIONSHIP_STATUSES.join('|')})] to [<n>.+]`,
      '^i (just)? got [<v>(married|engaged)] to [<n>.+]',
      `^i am (now|happily)? [<v>(${RELATIONSHIP_STATUSES.join('|')})]`,
      '^i (just)? got [<v>(married|divorced|engaged)]',
    ],
    build: (g, ctx) => {
      const status = text(g, 'v', ctx).toLowerCase();
      const out: Intent[] = [
        {
          kind: 'relationship',
          subject: 'user',
          attribute: 'relationship_status',
          value: status,
          statement: `The user is ${status}.`,
          validFrom: firstDate(ctx)?.validFrom ?? null,
        },
      ];
      const name = personName(text(g, 'n', ctx));
      if (name && /^\p{Lu}/u.test(name))
        out.push(...(nameIntent(status === 'engaged' ? 'fiance' : 'spouse', name) ?? []));
      return out;
    },
  },
  {
    name: 'diet.not',
    patterns: ['^i am (not|no longer) (a|an)? [<v>.+]', '^i (stopped|quit) being (a|an)? [<v>.+]'],
    build: (g, ctx) => {
      const d = diet(text(g, 'v', ctx));
      return d ? [dietIntent(d, true)] : null;
    },
  },
  {
    name: 'diet',
    patterns: [
      '^i am (now|strictly|mostly|fully)? (a|an)? [<v>.+]',
      '^i have been (a|an)? [<v>.+]',
      '^i (went|have gone|became|have become|am going|turned) [<v>.+]',
      '^i eat [<v>.+]',
    ],
    build: (g, ctx) => {
      const d = diet(text(g, 'v', ctx));
      return d ? [dietIntent(d)] : null;
    },
  },
  {
    name: 'allergy',
    patterns: ['^i am (very|severely|deathly)? allergic to [<v>.+]', '^i have (a|an) [<v>.+] allergy'],
    build: (g, ctx) => {
      const v = limitWords(text(g, 'v', ctx), 4);
      const key = objectKey(v);
      if (!key) return null;
      return userIntent('fact', `allergy:${key}`, 'allergic', `The user is allergic to ${v}.`);
    },
  },

  // ----- where the user lives -----
  {
    name: 'home.not',
    patterns: [
      '^(i|we) (do not|no longer|dont) (live|reside) in [<v>.+]',
      '^(i|we) (am|are) no longer (living|based) in [<v>.+]',
      '^(i|we) (have)? (moved|relocated) (away from|out of) [<v>.+]',
    ],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx);
      if (!v) return null;
      return userIntent('fact', 'home_city', v, `The user lives in ${v}.`, { negated: true });
    },
  },
  {
    name: 'home.planned',
    patterns: [
      '^(i|we) (am|are) (moving|relocating) (back)? to [<v>.+]',
      '^(i|we) (will|am going to|are going to|plan to|want to|hope to|intend to) (move|relocate) (back)? to [<v>.+]',
      '^(i|we) (might|may|could) (move|relocate) (back)? to [<v>.+]',
      '^(i|we) (am|are) (planning|hoping|thinking about|considering) (to move|moving|relocating) (back)? to [<v>.+]',
    ],
    build: (g, ctx) => {
      const v = limitWords(text(g, 'v', ctx), 6);
      if (!v) return null;
      const d = firstDate(ctx);
      return userIntent(
        'goal',
        'planned_move',
        v,
        `The user plans to move to ${displayCity(v)}${d ? ` (${d.label})` : ''}.`,
        { validFrom: d?.validFrom ?? null, validTo: d?.validTo ?? null },
      );
    },
  },
  {
    name: 'home',
    patterns: [
      '^(i|we) (still|currently|now)? (live|reside) in [<v>.+]',
      '^(i|we) (am|are) (now|currently)? (based|living|located|settled) in [<v>.+]',
      '^(my|our) (home|house|apartment|flat|place) is in [<v>.+]',
      '^home is [<v>.+]',
    ],
    build: (g, ctx) => homeCity('user', text(g, 'v', ctx), ctx, false),
  },
  {
    name: 'home.moved',
    patterns: [
      '^(i|we) (have|had)? (just|recently|finally|now|also)? (moved|relocated) (back)? (to|into) [<v>.+]',
      '^(i|we) (just|recently|finally)? (moved|relocated) (back)? (to|into) [<v>.+]',
    ],
    build: (g, ctx) => homeCity('user', text(g, 'v', ctx), ctx, true),
  },

  // ----- work -----
  {
    name: 'work.left',
    patterns: [
      '^i (have)? (just)? (quit|left|resigned from|retired from) [<v>.+]',
      '^i (have)? (just)? (quit|resigned|retired)$',
      '^i (got|was|have been) (fired|laid off|let go) (from|by) [<v>.+]',
      '^i (got|was|have been) (fired|laid off|let go)',
      '^i (do not|no longer|dont) work (at|for) [<v>.+]',
      '^i am (no longer|not) (working|employed)? (at|with|for) [<v>.+]',
    ],
    build: (g, ctx) => {
      let v = text(g, 'v', ctx).replace(/^(?:my\s+)?(?:job|position|role)\s+(?:at|with)\s+/i, '');
      v = cleanValue(v);
      const any = !v || JOB_WORDS.test(v);
      return userIntent(
        'fact',
        'employer',
        any ? '' : v,
        any ? 'The user left their job.' : `The user works at ${v}.`,
        { negated: true, anyValue: any },
      );
    },
  },
  {
    name: 'work.as',
    patterns: [
      '^i (work|am working) as (a|an)? [<v>.+]',
      '^my (job|profession|occupation|role) is (a|an)? [<v>.+]',
    ],
    build: (g, ctx) => {
      const raw = text(g, 'v', ctx);
      const [role, emp] = raw.split(/\s+(?:at|for|with)\s+/i) as [string, string | undefined];
      if (!role) return null;
      const out: Intent[] = [occupationIntent('user', role)];
      if (emp) out.push(...(employer('user', emp, ctx, false) ?? []));
      return out;
    },
  },
  {
    name: 'work.at',
    patterns: [
      '^i (still|currently|now)? (work|am working) (at|for) [<v>.+]',
      '^i am (employed|hired) (at|by) [<v>.+]',
      '^my (employer|company) is [<v>.+]',
    ],
    build: (g, ctx) => employer('user', text(g, 'v', ctx, false), ctx, false),
  },
  {
    name: 'work.started',
    patterns: [
      '^i (have)? (just|recently)? (started|began) (working|a job|a new job)? (at|with|for) [<v>.+]',
      '^i (have)? (just|recently)? (joined|started at) [<v>.+]',
      '^i (have)? (just|recently)? (got|landed|accepted|have) (a|an|the)? (new)? (job|position|role|offer) (at|with|from) [<v>.+]',
      '^i (have)? (just)? (got|was|been) hired (at|by) [<v>.+]',
    ],
    build: (g, ctx) => employer('user', text(g, 'v', ctx, false), ctx, true),
  },
  {
    name: 'occupation.not',
    patterns: ['^i am (not|no longer) (a|an) [<v>.+]'],
    build: (g, ctx) => {
      const occ = occupation('user', g.v, ctx);
      const first = occ?.[0];
      return first ? [{ ...first, negated: true }] : null;
    },
  },
  {
    name: 'occupation',
    patterns: ['^i am (now)? (a|an) [<v>.+]', '^i have been (a|an) [<v>.+]'],
    build: (g, ctx) => occupation('user', g.v, ctx),
  },

  // ----- amounts -----
  {
    name: 'amount.pay',
    patterns: ['^(i|we) (pay|spend) [<v>.+]'],
    build: (g, ctx) => {
      const rest = text(g, 'v', ctx);
      const noun = new RegExp(`\\b(${AMOUNT_WORDS})\\b`, 'i').exec(rest)?.[1]?.toLowerCase();
      if (!noun) return null;
      return amountIntent(AMOUNTS[noun] ?? 'rent_amount', noun, rest);
    },
  },
  {
    name: 'amount.cost',
    patterns: ['^(i|we) (pay|spend) [<v>.+?] (for|on) (my|our|the) [<n>.+]'],
    build: (g, ctx) => {
      const what = limitWords(text(g, 'n', ctx).replace(/\s+(?:each|every|a|per)\s+\w+$/i, ''), 4);
      const key = objectKey(what);
      if (!key) return null;
      const amount = findAmount(`${g.v?.text() ?? ''} ${g.n?.text() ?? ''}`);
      if (!amount) return null;
      return userIntent(
        'fact',
        `${key}_cost`,
        amount.value,
        `The user pays ${amount.value}${amount.period ? ` ${amount.period}` : ''} for their ${what}.`,
      );
    },
  },
  {
    name: 'amount.earn',
    patterns: ['^i (earn|make|take home|get paid) [<v>.+]'],
    build: (g, ctx) => amountIntent('salary_amount', 'salary', text(g, 'v', ctx)),
  },
  {
    name: 'amount.budget',
    patterns: ['^(i|we) have a budget of [<v>.+]'],
    build: (g, ctx) => amountIntent('budget_amount', 'budget', text(g, 'v', ctx)),
  },
  {
    name: 'amount.my',
    patterns: [`^(my|our) (monthly|annual|yearly|new|current|total)? [<n>(${AMOUNT_WORDS})] [<v>.+]`],
    build: (g, ctx) => {
      const noun = text(g, 'n', ctx).toLowerCase();
      return amountIntent(AMOUNTS[noun] ?? `${noun}_amount`, noun, text(g, 'v', ctx));
    },
  },

  // ----- family and relationships -----
  {
    name: 'rel.name',
    patterns: ["^my (best)? [<r>.] name (is|'s) [<v>.+]", '^my (best)? [<r>.] is (called|named) [<v>.+]'],
    build: (g, ctx) => {
      const best = /^my best\b/i.test(ctx.core);
      const rel = relationOf(g.r?.text() ?? '');
      if (!rel) return null;
      return nameIntent(best && rel === 'friend' ? 'best_friend' : rel, personName(text(g, 'v', ctx)));
    },
  },
  {
    name: 'rel.named',
    patterns: [
      '^my (best)? [<r>#Noun] [<n>#ProperNoun+] [<rest>.*]',
      '^my (best)? [<r>#Noun] , [<n>#ProperNoun+] ,? [<rest>.*]',
    ],
    build: (g, ctx) => {
      const relWord = g.r?.text() ?? '';
      let rel = relationOf(relWord);
      if (!rel && /^friend$/i.test(relWord) && /^my best\b/i.test(ctx.core)) rel = 'best_friend';
      if (!rel) return null;
      const name = personName(g.n?.text() ?? '');
      if (!name) return null;
      return [...(nameIntent(rel, name) ?? []), ...applyThirdPerson(rel, g.rest?.text() ?? '', ctx)];
    },
  },
  {
    name: 'rel.about',
    patterns: [`^my (best)? [<r>(${REL_WORDS}|friend)] [<rest>.+]`],
    build: (g, ctx) => {
      let rel = relationOf(g.r?.text() ?? '');
      if (!rel && /^my best friend\b/i.test(ctx.core)) rel = 'best_friend';
      if (!rel) return null;
      const out = applyThirdPerson(rel, g.rest?.text() ?? '', ctx);
      return out.length ? out : null;
    },
  },
  {
    name: 'rel.is_my',
    patterns: [`^[<n>.+?] is my (best)? [<r>(${REL_WORDS}|friend)]$`],
    build: (g, ctx) => {
      const raw = g.n?.text() ?? '';
      if (!/^\p{Lu}/u.test(raw)) return null;
      let rel = relationOf(g.r?.text() ?? '');
      if (!rel && /\bmy best friend$/i.test(ctx.core)) rel = 'best_friend';
      return rel ? nameIntent(rel, personName(raw)) : null;
    },
  },
  {
    name: 'rel.count',
    patterns: [`^(i|we) have [<c>#Value] [<r>(${PLURAL_WORDS})]`],
    build: (g, ctx) => {
      const n = g.c ? firstNumber(g.c) : undefined;
      const attribute = RELATION_PLURALS[(g.r?.text() ?? '').toLowerCase()];
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || !attribute) return null;
      const what = (g.r?.text() ?? '').toLowerCase();
      return [
        {
          kind: 'relationship',
          subject: 'user',
          attribute,
          value: String(n),
          statement: `The user has ${n} ${what}.`,
          validFrom: firstDate(ctx)?.validFrom ?? null,
        },
      ];
    },
  },
  {
    name: 'rel.have.not',
    patterns: [`^(i|we) (do not|no longer|dont) have (a|an) [<r>(${REL_WORDS})]`],
    build: (g) => {
      const rel = relationOf(g.r?.text() ?? '');
      if (!rel) return null;
      return userIntent('relationship', `has:${rel}`, 'yes', `The user has a ${rel}.`, {
        negated: true,
        anyValue: true,
      });
    },
  },
  {
    name: 'rel.have',
    patterns: [
      `^(i|we) have (a|an|one) [<r>(${REL_WORDS})] (named|called) [<v>.+]`,
      `^(i|we) have (a|an|one) [<r>(${REL_WORDS})]$`,
    ],
    build: (g, ctx) => {
      const rel = relationOf(g.r?.text() ?? '');
      if (!rel) return null;
      const out: Intent[] = [
        {
          kind: 'relationship',
          subject: 'user',
          attribute: `has:${rel}`,
          value: 'yes',
          statement: `The user has a ${rel.replace(/_/g, ' ')}.`,
        },
      ];
      const name = personName(text(g, 'v', ctx));
      if (name) out.push(...(nameIntent(rel, name) ?? []));
      return out;
    },
  },

  // ----- preferences -----
  {
    name: 'favorite',
    patterns: ['^my (favorite|favourite|fave) [<c>.+?] (is|are) [<v>.+]'],
    build: (g, ctx) => favorite(g, ctx),
  },
  {
    name: 'favorite.inverse',
    patterns: ['^[<v>.+?] (is|are) my (favorite|favourite|fave) [<c>.+]'],
    // "That is my favorite song": a pronoun names nothing.
    build: (g, ctx) => favorite(g, ctx, (v) => !/^(it|this|that|what|which|who)$/i.test(v)),
  },
  {
    name: 'goal.not',
    patterns: [
      '^i (do not|no longer|dont) (want|plan|intend|hope) to [<v>.+]',
      '^i (have)? (gave|given) up (on)? [<v>.+]',
      '^i am (no longer|not) (planning|trying|hoping|going) to [<v>.+]',
    ],
    build: (g, ctx) => goal(text(g, 'v', ctx).replace(/^(?:on\s+)/i, ''), ctx, true),
  },
  {
    name: 'dislike',
    patterns: [
      '^i (really|absolutely|truly|totally|kind of|kinda)? (hate|dislike|detest|loathe|despise|abhor) [<v>.+]',
      '^i (can not|cannot|cant) (stand|bear|tolerate) [<v>.+]',
      '^i (do not|dont|no longer|never) (really|particularly)? (like|enjoy|love|care for) [<v>.+]',
      '^i (stopped|quit) (liking|enjoying|loving) [<v>.+]',
      '^i am (not|no longer) (a|an)? (big|huge)? (fan of|into) [<v>.+]',
      '^i am (sick|tired) of [<v>.+]',
    ],
    build: (g, ctx) => preferences('user', text(g, 'v', ctx), 'dislikes'),
  },
  {
    name: 'goal',
    patterns: [
      '^i (really|still)? (want|hope|plan|intend|aim|need|wish) to [<v>.+]',
      '^i would (really)? (like|love) to [<v>.+]',
      '^i am (planning|hoping|trying|aiming|intending|working|saving up|saving) to [<v>.+]',
      '^i am (going|gonna) to [<v>#Infinitive .*]',
      '^(my|one of my) (main|big|biggest|new)? (goal|goals|dream|plan|aim|resolution|ambition|objective) (is|for this year is) to [<v>.+]',
      '^(my|one of my) (main|big|biggest|new)? (goal|goals|dream|plan|aim|resolution|ambition|objective) (is|for this year is) [<v>.+]',
      '^i (might|may|could|will) (try to|start to)? [<v>#Infinitive .*]',
    ],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx);
      // "I'd like to know …", "I want to ask …" are requests to the assistant, not goals.
      if (/^(know|ask|say|see|check|confirm|tell|clarify|mention|remind|add|remember|make sure)\b/i.test(v))
        return null;
      return goal(v, ctx);
    },
  },
  {
    // "I'm working on a novel": an ongoing project, kept as a goal in progress (`goal:work_on_novel`), said as what
    // the user is doing ("The user is working on a novel."), not as a wish.
    name: 'working-on',
    patterns: ['^(i|we) am (currently|still|now)? (working on|busy with) [<v>.+]'],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx);
      if (/^(it|this|that|something|stuff|things)\b/i.test(v)) return null;
      return goal(`work on ${v}`, ctx, false, `working on ${v}`);
    },
  },
  {
    // "I'm building a treehouse", "I'm writing a novel": a project under way (`goal:build_treehouse`).
    name: 'building',
    patterns: ['^(i|we) am (currently|still|now)? (building|writing|making|restoring|renovating) [<v>.+]'],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx);
      if (
        /^(it|this|that|something|stuff|things|sure|up|out|progress|plans?|time|money|mistakes?)\b/i.test(v)
      )
        return null;
      const verb = /\b(building|writing|making|restoring|renovating)\b/i.exec(ctx.core)?.[1]?.toLowerCase();
      if (!verb) return null;
      const base = {
        building: 'build',
        writing: 'write',
        making: 'make',
        restoring: 'restore',
        renovating: 'renovate',
      }[verb];
      return goal(`${base} ${v}`, ctx, false, `${verb} ${v}`);
    },
  },
  {
    name: 'decision',
    patterns: [
      '^(i|we) (have|finally)? (decided|chose|opted|elected|committed|resolved) to [<v>.+]',
      '^(i|we) (have|finally)? (decided on|chose|chosen|picked|selected|settled on|went with|opted for|booked|bought) [<v>.+]',
      '^(i|we) (am|are|will|will be) (going with|go with) [<v>.+]',
    ],
    build: (g, ctx) => {
      const v = limitWords(text(g, 'v', ctx), 10);
      const key = objectKey(v);
      if (!key) return null;
      const verb = /\b(decided|chose|opted|elected|committed|resolved)\s+to\b/i.test(ctx.core)
        ? 'decided to'
        : 'decided on';
      return userIntent('decision', `decision:${key}`, v, `The user ${verb} ${v}.`, {
        validFrom: firstDate(ctx)?.validFrom ?? null,
      });
    },
  },
  {
    name: 'prefer',
    patterns: [
      '^i (really|generally|usually|always|much|strongly|definitely)? prefer [<v>.+]',
      '^i would (much)? prefer [<v>.+]',
    ],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx).split(/\s+(?:over|to|rather than|instead of|than)\s+|\s*,\s*/i)[0] ?? '';
      return preference('user', cleanValue(v), 'prefers');
    },
  },
  {
    name: 'like',
    patterns: [
      '^i (really|absolutely|just|also|truly|totally|still|do|kind of|kinda|actually)? (like|love|enjoy|adore|dig) [<v>.+]',
      '^i am (a|an)? (big|huge|great|massive)? fan of [<v>.+]',
      '^i am (really|very|super)? (into|passionate about|obsessed with|crazy about) [<v>.+]',
    ],
    build: (g, ctx) => {
      const v = text(g, 'v', ctx).replace(/^to\s+/i, '');
      // "I love it/that" refers to something outside the clause.
      if (/^(it|that|this|them|you|those|these)$/i.test(v)) return null;
      return preferences('user', v, 'likes');
    },
  },

  // ----- events (conservative: a dated first-person past action or appointment) -----
  {
    name: 'trip',
    patterns: ['^(i|we) (am|are|will be) (going|flying|traveling|travelling|heading|driving) to [<v>.+]'],
    build: (g, ctx) => {
      const d = firstDate(ctx);
      const v = limitWords(text(g, 'v', ctx), 5);
      if (!d || !v) return null;
      return userIntent(
        'event',
        `trip:${objectKey(v)}`,
        `${v} (${d.label})`,
        `The user is travelling to ${displayCity(v)} (${d.label}).`,
        { validFrom: d.validFrom, validTo: d.validTo, confidence: 0.8 },
      );
    },
  },
  {
    name: 'event',
    patterns: ['^(i|we) [<v>#PastTense .+]', '^(i|we) have (a|an) [<v>.+]'],
    build: (g, ctx) => {
      const d = firstDate(ctx);
      if (!d) return null;
      const phrase = limitWords(text(g, 'v', ctx), 10);
      const key = objectKey(phrase);
      if (!key || phrase.split(/\s+/).length < 2) return null;
      const have = /^(i|we) have (a|an)\b/i.test(ctx.core);
      const day = d.validFrom.slice(0, 10);
      return [
        {
          kind: 'event',
          subject: 'user',
          attribute: `event:${key}:${day}`,
          value: have ? `${phrase} (${d.label})` : `${phrase} (${d.label})`,
          statement: have
            ? `The user has ${/^[aeiou]/i.test(phrase) ? 'an' : 'a'} ${phrase} (${d.label}).`
            : `The user ${phrase} (${d.label}).`,
          validFrom: d.validFrom,
          validTo: d.validTo,
          confidence: 0.8,
        },
      ];
    },
  },
];

/**
 * Words a clause must contain for a rule to be tried at all: a cheap string test in front of the compromise
 * matcher, which is the slow part. A rule without an entry is always tried.
 */
const TRIGGERS: Readonly<Record<string, RegExp>> = {
  'third.name': /\b(called|named|goes)\b/i,
  'third.employer': /\b(works?|working|started|joined)\b/i,
  'third.home': /\b(lives|living|based|resides|moved|relocated)\b/i,
  'third.age': /\d|\b(is|turned)\b/i,
  'third.occupation': /\b(is|works)\b/i,
  'third.likes': /\b(likes|loves|enjoys|adores)\b/i,
  'third.dislikes': /\b(hates|dislikes|detests|like|enjoy)\b/i,
  name: /\b(name|called|call|go by)\b/i,
  'name.not': /\bname/i,
  pronouns: /\bpronouns\b/i,
  age: /\b(old|turned|age|\d+)\b|\b(i am|i'm|im) \w+$/i,
  relationship_status: /\b(married|single|divorced|engaged|widowed|separated)\b/i,
  'diet.not': /\b(not|no longer|stopped|quit|n't)\b/i,
  diet: /\b(vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten|dairy|lactose|kosher|halal|carnivore|flexitarian)\b/i,
  allergy: /\ballerg/i,
  'home.not': /\b(live|reside|living|based|moved|relocated)\b/i,
  'home.planned': /\b(move|moving|relocate|relocating)\b/i,
  home: /\b(live|reside|based|living|located|settled|home)\b/i,
  'home.moved': /\b(moved|relocated)\b/i,
  'work.left': /\b(quit|left|resigned|retired|fired|laid off|let go|work|working|employed)\b/i,
  'work.as': /\b(work|working|job|profession|occupation|role)\b/i,
  'work.at': /\b(work|working|employed|hired|employer|company)\b/i,
  'work.started': /\b(started|began|joined|job|position|role|offer|hired)\b/i,
  'occupation.not': /\b(not|no longer|n't)\b/i,
  occupation: /\b(a|an)\b/i,
  'amount.pay': /\b(pay|spend)\b/i,
  'amount.cost': /\b(pay|spend)\b/i,
  'amount.earn': /\b(earn|make|take home|paid)\b/i,
  'amount.budget': /\bbudget\b/i,
  'amount.my': /\b(rent|salary|budget|income|pay|wage|mortgage|savings|debt)\b/i,
  'rel.name': /\bname/i,
  'rel.named': /^my\b/i,
  'rel.about': /^my\b/i,
  'rel.is_my': /\bis my\b/i,
  'rel.count': /\bhave\b/i,
  'rel.have.not': /\bhave\b/i,
  'rel.have': /\bhave\b/i,
  favorite: /\b(favou?rite|fave)\b/i,
  'favorite.inverse': /\b(favou?rite|fave)\b/i,
  'goal.not': /\b(want|plan|intend|hope|gave|given|planning|trying|hoping|going)\b/i,
  dislike:
    /\b(hate|dislike|detest|loathe|despise|abhor|stand|bear|tolerate|like|enjoy|love|care|fan|into|sick|tired)\b/i,
  goal: /\b(want|hope|plan|intend|aim|need|wish|like|love|planning|hoping|trying|aiming|intending|working|saving|going|gonna|goal|goals|dream|aim|resolution|ambition|objective|might|may|could|will|'ll)\b/i,
  decision:
    /\b(decided|chose|chosen|opted|elected|committed|resolved|picked|selected|settled|went|booked|bought|going with|go with)\b/i,
  prefer: /\bprefer/i,
  like: /\b(like|love|enjoy|adore|dig|fan|into|passionate|obsessed|crazy)\b/i,
  trip: /\b(going|flying|traveling|travelling|heading|driving)\b/i,
  event: /\b(i|we)\b/i,
};

const compiled = new WeakMap<Rule, ReturnType<typeof nlp.parseMatch>[]>();

function runRules(rules: readonly Rule[], core: string, ctx: RuleContext): Intent[] | null {
  let doc: View | undefined;
  for (const rule of rules) {
    const trigger = TRIGGERS[rule.name];
    if (trigger && !trigger.test(core)) continue;
    doc ??= nlp(core);
    let patterns = compiled.get(rule);
    if (!patterns) {
      patterns = rule.patterns.map((p) => nlp.parseMatch(p));
      compiled.set(rule, patterns);
    }
    for (const p of patterns) {
      const m = doc.match(p);
      if (!m.found) continue;
      const groups = m.groups() as Groups;
      const intents = rule.build(groups, ctx);
      if (intents && intents.length > 0) return intents;
    }
  }
  return null;
}

/**
 * The first words a clause must start with for a pattern of {@link RULES} to match: every pattern is anchored at the
 * start, with `i`, `we`, `my`, `our`, `one of my`, `home`, `call me`, `everyone calls me` or `people call me`, or
 * names something that `is my` sister or favourite (the clause then holds "my"). The forms compromise expands into
 * `i` (`im`, `ive`, …) are let through too. It is a superset: it lets through every clause a pattern could match, and
 * skips the compromise parse of the others (most clauses of a long turn), which is the slow part of extraction.
 */
const FIRST_WORD = /^[^\p{L}]*(\p{L}+)/u;
const CAN_START = new Set([
  'i',
  'im',
  'ive',
  'id',
  'ill',
  'ima',
  'imma',
  'we',
  'weve',
  'were',
  'my',
  'our',
  'one',
  'home',
  'call',
  'everyone',
  'people',
]);

/** Whether a pattern of {@link RULES} could match the clause at all (see {@link CAN_START}). */
function mayMatch(core: string): boolean {
  const first = FIRST_WORD.exec(core)?.[1]?.toLowerCase();
  if (first !== undefined && CAN_START.has(first)) return true;
  // `<name> is my sister`, `<thing> is my favorite <category>`: the patterns that start with something else.
  return /\bmy\b/i.test(core);
}

/** Applies the first-person rules to a clause core; [] when nothing matches. */
export function matchClause(core: string, ctx: RuleContext): Intent[] {
  if (!mayMatch(core)) return [];
  return runRules(RULES, core, ctx) ?? [];
}
