/**
 * LoCoMo-shaped data: parsing, validation and the evidence-id normalisation the data README asks for.
 * Nothing here assumes ten conversations, particular speaker names or session counts.
 */
import { InvalidInputError } from '@mem01/engine';

/** One dialogue turn as the eval feeds it to the engine. */
export interface Turn {
  /** The dataset's dialogue id, normalised (`D<session>:<turn>`). */
  readonly diaId: string;
  readonly speaker: string;
  /**
   * The turn's real role, when the file's speakers are `user` and `assistant` (LongMemEval); null when both speakers
   * are people (LoCoMo), whose turns the eval accepts as the user's.
   */
  readonly role: 'user' | 'assistant' | null;
  readonly text: string;
  /** Caption of a shared image, when the turn shares one. */
  readonly imageCaption?: string | undefined;
}

export interface Session {
  /** The session number N of `session_N`. */
  readonly index: number;
  /** The raw `session_N_date_time` string. */
  readonly dateText: string;
  /** Parsed session date, ISO-8601 UTC. See {@link parseSessionDate} for the fallback. */
  readonly at: string;
  readonly turns: readonly Turn[];
}

export interface Question {
  readonly question: string;
  readonly category: number;
  /** Normalised evidence ids, deduplicated, in order. Never empty (questions without usable evidence are skipped). */
  readonly evidence: readonly string[];
  /** LongMemEval's `question_type` (e.g. `single-session-assistant`), when the file gives one. */
  readonly questionType?: string | undefined;
  /** When the question is asked (LongMemEval's `question_date`), ISO-8601 UTC, when the file gives one. */
  readonly questionDate?: string | undefined;
  /** The reference answer (`answer`, a string or a number), when the file gives one; adversarial questions have none. */
  readonly answer?: string | undefined;
}

export interface Conversation {
  readonly sampleId: string;
  readonly speakers: readonly string[];
  /** The speakers are `user` and `assistant` and every turn carries its real role (see {@link Turn.role}). */
  readonly realRoles: boolean;
  readonly sessions: readonly Session[];
  readonly questions: readonly Question[];
}

/** What normalisation did to the questions of a file. */
export interface DataReport {
  readonly conversations: number;
  readonly sessions: number;
  readonly turns: number;
  readonly questions: number;
  /** Questions dropped because no evidence id survived normalisation. */
  readonly skippedNoEvidence: number;
  /** Evidence ids that had to be repaired (split, colon stripped, zeros dropped). */
  readonly repairedIds: number;
  /** Evidence tokens that could not be read as an id at all (e.g. `D`). */
  readonly droppedIds: number;
  /** Well-formed evidence ids naming no turn of their conversation (they can never be found). */
  readonly unknownIds: number;
}

/**
 * What the file's category numbers mean. LoCoMo numbers five categories (5 adversarial); the LongMemEval file
 * numbers four of its own (no adversarial), recognised by its questions' `question_type`.
 */
export interface CategoryScheme {
  /** `locomo` or `longmemeval`. */
  readonly dataset: 'locomo' | 'longmemeval';
  /** The name of each category number. */
  readonly names: Readonly<Record<string, string>>;
  /** The column order of reports. */
  readonly order: readonly number[];
  /** The adversarial category (its answer is not in the conversation), or null when the file has none. */
  readonly adversarial: number | null;
}

/** LoCoMo's category numbers (per its evaluation code and issue 29). */
export const LOCOMO_CATEGORIES: CategoryScheme = {
  dataset: 'locomo',
  names: { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' },
  order: [4, 1, 2, 3, 5],
  adversarial: 5,
};

/** The LongMemEval development set's category numbers (data README: `longmemeval-s-dev60.json.gz`). */
export const LONGMEMEVAL_CATEGORIES: CategoryScheme = {
  dataset: 'longmemeval',
  names: {
    1: 'multi-session',
    2: 'temporal',
    3: 'preference',
    4: 'single-session + knowledge-update',
  },
  order: [1, 2, 3, 4],
  adversarial: null,
};

export interface LocomoData {
  readonly conversations: readonly Conversation[];
  readonly report: DataReport;
  /** What the category numbers mean in this file. */
  readonly categories: CategoryScheme;
}

/**
 * Normalises one raw evidence entry into zero or more `D<s>:<t>` ids: splits on `;`, `,` and whitespace, strips a
 * stray colon after the `D` (`D:11:26`), and drops leading zeros (`D30:05`). Tokens that still do not read as an
 * id (`D`) are reported in `dropped`.
 */
export function normalizeEvidenceId(raw: string): { ids: string[]; repaired: boolean; dropped: number } {
  const tokens = raw
    .split(/[;,\s]+/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const ids: string[] = [];
  let dropped = 0;
  for (const token of tokens) {
    const m = /^D:?(\d+):(\d+)$/i.exec(token);
    if (!m) {
      dropped++;
      continue;
    }
    ids.push(`D${Number(m[1])}:${Number(m[2])}`);
  }
  const repaired = !(ids.length === 1 && ids[0] === raw && dropped === 0);
  return { ids, repaired: repaired && ids.length > 0, dropped };
}

/** Normalises a question's evidence list: every entry through {@link normalizeEvidenceId}, deduplicated. */
export function normalizeEvidence(raw: readonly unknown[]): {
  ids: string[];
  repaired: number;
  dropped: number;
} {
  const seen = new Set<string>();
  let repaired = 0;
  let dropped = 0;
  for (const entry of raw) {
    if (typeof entry !== 'string') {
      dropped++;
      continue;
    }
    const r = normalizeEvidenceId(entry);
    if (r.repaired) repaired++;
    dropped += r.dropped;
    for (const id of r.ids) seen.add(id);
  }
  return { ids: [...seen], repaired, dropped };
}

const MONTHS: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};

/**
 * Parses a LoCoMo session date (`1:56 pm on 8 May, 2023`) or a LongMemEval one (`2023/05/20 (Sat) 02:21`) as UTC.
 * Other formats go through `Date.parse`; null when none works.
 */
export function parseSessionDate(text: string): string | null {
  const lme = /^\s*(\d{4})\/(\d{1,2})\/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*$/.exec(text);
  if (lme) {
    const [, y, mo, d, hh, mm] = lme.map(Number) as [number, number, number, number, number, number];
    const date = new Date(Date.UTC(y, mo - 1, d, hh, mm));
    // Date.UTC rolls 2023/02/30 over into March: such a date is not read.
    if (date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && hh < 24 && mm < 60)
      return date.toISOString();
    return null;
  }
  const m = /^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (m) {
    const [, hh, mm, ampm, day, monthName, year] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const month = MONTHS[monthName.slice(0, 3).toLowerCase()];
    if (month !== undefined) {
      let hour = Number(hh) % 12;
      if (ampm.toLowerCase() === 'pm') hour += 12;
      const d = new Date(Date.UTC(Number(year), month, Number(day), hour, Number(mm)));
      if (!Number.isNaN(d.getTime())) return d.toISOString();
    }
  }
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A date for sessions whose date cannot be read: one day after the previous session (or 2000-01-01). */
const FALLBACK_START = Date.UTC(2000, 0, 1);

/**
 * Reads a LoCoMo-shaped document (already JSON-parsed). Throws `InvalidInputError` naming the first malformed
 * field. `observation`, `event_summary` and `session_summary` are ignored on purpose: they are reference
 * material, never input to the system under test.
 */
export function parseLocomo(doc: unknown): LocomoData {
  if (!Array.isArray(doc)) throw new InvalidInputError('data', 'must be a JSON array of conversations');
  if (doc.length === 0) throw new InvalidInputError('data', 'holds no conversation');
  let sessionsN = 0;
  let turnsN = 0;
  let questionsN = 0;
  let skippedNoEvidence = 0;
  let repairedIds = 0;
  let droppedIds = 0;
  let unknownIds = 0;
  const sampleIds = new Set<string>();
  const conversations = doc.map((raw, ci): Conversation => {
    const where = `data[${ci}]`;
    if (!isRecord(raw)) throw new InvalidInputError(where, 'must be an object');
    const sampleId = typeof raw.sample_id === 'string' && raw.sample_id !== '' ? raw.sample_id : `conv-${ci}`;
    if (sampleIds.has(sampleId)) throw new InvalidInputError(`${where}.sample_id`, `duplicate ${sampleId}`);
    sampleIds.add(sampleId);
    const conv = raw.conversation;
    if (!isRecord(conv)) throw new InvalidInputError(`${where}.conversation`, 'must be an object');
    const speakers = ['speaker_a', 'speaker_b']
      .map((k) => conv[k])
      .filter((s): s is string => typeof s === 'string' && s !== '');
    const realRoles = speakers.length === 2 && speakers.includes('user') && speakers.includes('assistant');
    const sessionNumbers = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    if (sessionNumbers.length === 0) throw new InvalidInputError(`${where}.conversation`, 'has no session_N');
    let previous = FALLBACK_START - 86_400_000;
    const diaIds = new Set<string>();
    const sessions = sessionNumbers.map((n): Session => {
      const sw = `${where}.conversation.session_${n}`;
      const turnsRaw = conv[`session_${n}`];
      if (!Array.isArray(turnsRaw)) throw new InvalidInputError(sw, 'must be an array of turns');
      const dateText =
        typeof conv[`session_${n}_date_time`] === 'string' ? (conv[`session_${n}_date_time`] as string) : '';
      const parsed = parseSessionDate(dateText);
      const at = parsed ?? new Date(previous + 86_400_000).toISOString();
      previous = Date.parse(at);
      const turns = turnsRaw.map((t, ti): Turn => {
        const tw = `${sw}[${ti}]`;
        if (!isRecord(t)) throw new InvalidInputError(tw, 'must be an object');
        if (typeof t.speaker !== 'string') throw new InvalidInputError(`${tw}.speaker`, 'must be a string');
        if (typeof t.text !== 'string') throw new InvalidInputError(`${tw}.text`, 'must be a string');
        if (realRoles && t.speaker !== 'user' && t.speaker !== 'assistant') {
          throw new InvalidInputError(
            `${tw}.speaker`,
            `must be "user" or "assistant" (the speakers of ${sampleId}), not ${JSON.stringify(t.speaker.slice(0, 40))}`,
          );
        }
        const rawId = typeof t.dia_id === 'string' ? normalizeEvidenceId(t.dia_id).ids : [];
        const diaId = rawId.length === 1 && rawId[0] ? rawId[0] : `D${n}:${ti + 1}`;
        diaIds.add(diaId);
        const caption =
          typeof t.blip_caption === 'string' && t.blip_caption.trim() !== ''
            ? t.blip_caption.trim()
            : undefined;
        const role = realRoles ? (t.speaker as 'user' | 'assistant') : null;
        return {
          diaId,
          speaker: t.speaker,
          role,
          text: t.text,
          ...(caption ? { imageCaption: caption } : {}),
        };
      });
      sessionsN++;
      turnsN += turns.length;
      return { index: n, dateText, at, turns };
    });
    const qaRaw = raw.qa ?? [];
    if (!Array.isArray(qaRaw)) throw new InvalidInputError(`${where}.qa`, 'must be an array');
    const questions: Question[] = [];
    qaRaw.forEach((q, qi) => {
      const qw = `${where}.qa[${qi}]`;
      if (!isRecord(q)) throw new InvalidInputError(qw, 'must be an object');
      if (typeof q.question !== 'string' || q.question.trim() === '') {
        throw new InvalidInputError(`${qw}.question`, 'must be a non-empty string');
      }
      const category = Number(q.category);
      if (!Number.isInteger(category)) throw new InvalidInputError(`${qw}.category`, 'must be an integer');
      const ev = normalizeEvidence(Array.isArray(q.evidence) ? q.evidence : []);
      repairedIds += ev.repaired;
      droppedIds += ev.dropped;
      if (ev.ids.length === 0) {
        skippedNoEvidence++;
        return;
      }
      let questionType: string | undefined;
      if (q.question_type !== undefined) {
        if (typeof q.question_type !== 'string' || q.question_type === '') {
          throw new InvalidInputError(`${qw}.question_type`, 'must be a non-empty string');
        }
        questionType = q.question_type;
      }
      let questionDate: string | undefined;
      if (q.question_date !== undefined) {
        const parsed = typeof q.question_date === 'string' ? parseSessionDate(q.question_date) : null;
        if (parsed === null) {
          throw new InvalidInputError(
            `${qw}.question_date`,
            `is not a readable date: ${JSON.stringify(q.question_date)}`,
          );
        }
        questionDate = parsed;
      }
      unknownIds += ev.ids.filter((id) => !diaIds.has(id)).length;
      const answer =
        typeof q.answer === 'string' && q.answer.trim() !== ''
          ? q.answer
          : typeof q.answer === 'number' && Number.isFinite(q.answer)
            ? String(q.answer)
            : undefined;
      questions.push({
        question: q.question,
        category,
        evidence: ev.ids,
        ...(questionType !== undefined ? { questionType } : {}),
        ...(questionDate !== undefined ? { questionDate } : {}),
        ...(answer !== undefined ? { answer } : {}),
      });
    });
    questionsN += questions.length;
    return { sampleId, speakers, realRoles, sessions, questions };
  });
  // LongMemEval's categories are its own, told by its questions' question_type; a file must not mix the two.
  const typed = conversations.flatMap((c) => c.questions).filter((q) => q.questionType !== undefined).length;
  const all = questionsN;
  if (typed > 0 && typed < all) {
    throw new InvalidInputError(
      'data',
      `${typed} of ${all} questions have a question_type: all or none must`,
    );
  }
  const categories = typed > 0 ? LONGMEMEVAL_CATEGORIES : LOCOMO_CATEGORIES;
  for (const c of conversations) {
    for (const q of c.questions) {
      if (categories.names[String(q.category)] === undefined && categories.dataset === 'longmemeval') {
        throw new InvalidInputError(
          `data (${c.sampleId})`,
          `category ${q.category} is not one of LongMemEval's (${Object.keys(categories.names).join(', ')})`,
        );
      }
    }
  }
  return {
    categories,
    conversations,
    report: {
      conversations: conversations.length,
      sessions: sessionsN,
      turns: turnsN,
      questions: questionsN,
      skippedNoEvidence,
      repairedIds,
      droppedIds,
      unknownIds,
    },
  };
}

/** Options of {@link sliceData}. */
export interface SliceOptions {
  /** Keep the first N conversations (of those `ids` keeps). */
  readonly conversations?: number | undefined;
  /** Keep only the conversations with these sample ids, in file order; an unknown id is an `InvalidInputError`. */
  readonly ids?: readonly string[] | undefined;
  /** Keep the first N sessions of each conversation, and only the questions whose evidence all lies in them. */
  readonly sessions?: number | undefined;
  /**
   * Keep the first N turns of each conversation (a session cut short keeps its first turns), and only the questions
   * whose evidence all lies in them.
   */
  readonly turns?: number | undefined;
  /** Keep the first N questions of each conversation (after the cuts above). */
  readonly questions?: number | undefined;
}

/** A smaller data set, for smoke runs: the report counts are recomputed. */
export function sliceData(data: LocomoData, options: SliceOptions): LocomoData {
  let picked = data.conversations;
  if (options.ids !== undefined) {
    const known = new Set(picked.map((c) => c.sampleId));
    const unknown = options.ids.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new InvalidInputError('--conversations', `no conversation with sample id ${unknown.join(', ')}`);
    }
    const wanted = new Set(options.ids);
    picked = picked.filter((c) => wanted.has(c.sampleId));
  }
  const convs = picked.slice(0, options.conversations ?? picked.length);
  const trimmed = convs.map((c): Conversation => {
    let sessions = c.sessions.slice(0, options.sessions ?? c.sessions.length);
    if (options.turns !== undefined) {
      let left = options.turns;
      sessions = sessions
        .map((s) => {
          const turns = s.turns.slice(0, Math.max(0, left));
          left -= turns.length;
          return { ...s, turns };
        })
        .filter((s) => s.turns.length > 0);
    }
    const cut = options.sessions !== undefined || options.turns !== undefined;
    const ids = new Set(sessions.flatMap((s) => s.turns.map((t) => t.diaId)));
    const questions = cut ? c.questions.filter((q) => q.evidence.every((e) => ids.has(e))) : c.questions;
    return { ...c, sessions, questions: questions.slice(0, options.questions ?? questions.length) };
  });
  const ids = trimmed.map((c) => new Set(c.sessions.flatMap((s) => s.turns.map((t) => t.diaId))));
  return {
    categories: data.categories,
    conversations: trimmed,
    report: {
      ...data.report,
      conversations: trimmed.length,
      sessions: trimmed.reduce((n, c) => n + c.sessions.length, 0),
      turns: trimmed.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0),
      questions: trimmed.reduce((n, c) => n + c.questions.length, 0),
      unknownIds: trimmed.reduce(
        (n, c, i) =>
          n + c.questions.reduce((m, q) => m + q.evidence.filter((e) => !ids[i]?.has(e)).length, 0),
        0,
      ),
    },
  };
}
