/**
 * The episodic tier: each user turn kept verbatim as an `episode` belief on a key of its own, so recall can return
 * what the user said as well as what was distilled from it.
 */
import { canonicalKey } from './belief.js';
import type { ExtractionOperation, ExtractionTurn } from './ports.js';
import { splitText } from './text.js';
import type { Evidence } from './types.js';
import { contentHash } from './util.js';

/** The subject every episode is filed under. */
export const EPISODE_SUBJECT = 'user';

/**
 * A key of a record of one conversation: `<prefix>:<session id><rest>`. Keys are canonical (lower case, `-` and spaces
 * as `_`), so a session id that is not canonical carries a hash of itself (`Trip-1` and `trip_1` are two
 * conversations), and one too long for a key is its hash alone.
 */
export function conversationKey(prefix: string, sessionId: string, rest = ''): string {
  const canonical = canonicalKey(sessionId);
  const key = `${prefix}:${canonical}${canonical === sessionId ? '' : `~${contentHash(sessionId)}`}${rest}`;
  return key.length <= 200 ? key : `${prefix}:~${contentHash(sessionId)}${rest}`;
}

/** The key of the episode of one turn (of part `part` of a turn split for length). */
export function episodeKey(sessionId: string, position: number, part = 0): string {
  return conversationKey('episode', sessionId, `:${position}${part > 0 ? `#${part}` : ''}`);
}

/** The key an episode had before {@link conversationKey} (stores written by earlier versions hold it). */
function legacyEpisodeKey(sessionId: string, position: number, part: number): string {
  return canonicalKey(`episode:${sessionId}:${position}${part > 0 ? `#${part}` : ''}`);
}

/** The keys of the episodes of the turns a belief's evidence points to, every part of each. */
export function episodeKeysOf(
  evidence: readonly Evidence[],
  parts = 1,
): { subject: string; attribute: string }[] {
  const keys: { subject: string; attribute: string }[] = [];
  for (const e of evidence) {
    for (let part = 0; part < parts; part++) {
      const key = episodeKey(e.sessionId, e.position, part);
      keys.push({ subject: EPISODE_SUBJECT, attribute: key });
      const legacy = legacyEpisodeKey(e.sessionId, e.position, part);
      if (legacy !== key) keys.push({ subject: EPISODE_SUBJECT, attribute: legacy });
    }
  }
  return keys;
}

/** A turn as extraction sees it: a whole turn, or part `part` of one split for length. */
export interface PartTurn extends ExtractionTurn {
  readonly part: number;
}

/**
 * The turns of a claim as extraction sees them: a user turn over `maxBytes` is split into parts of at most
 * `maxBytes` (same session, position, date and reference; ids `<entry id>#<part>`), each extracted and kept as an
 * episode of its own. Nothing of a long turn is dropped.
 */
export function partTurns(turns: readonly ExtractionTurn[], maxBytes: number): PartTurn[] {
  return turns.flatMap((t) => {
    const parts = t.role === 'user' ? splitText(t.text, maxBytes) : [t.text];
    if (parts.length === 1) return [{ ...t, part: 0 }];
    return parts.map((text, part) => ({ ...t, id: `${t.id}#${part}`, text, part }));
  });
}

/** The subject every reply is filed under. */
export const REPLY_SUBJECT = 'assistant';

/** The key of the reply of one assistant turn (of part `part` of a reply split for length). */
export function replyKey(sessionId: string, position: number, part = 0): string {
  return conversationKey('reply', sessionId, `:${position}${part > 0 ? `#${part}` : ''}`);
}

/**
 * One `add` of a reply for every assistant turn with text (split into parts of at most `maxBytes`, nothing dropped):
 * what the assistant said, kept verbatim and grounded in its own turn. A reply is never evidence about the user: the
 * extractor still reads assistant turns as context only.
 */
export function replyOperations(turns: readonly PartTurn[], maxBytes: number): ExtractionOperation[] {
  return turns
    .filter((t) => t.role === 'assistant' && t.text.trim() !== '')
    .flatMap((t) =>
      splitText(t.text, maxBytes).map((text, part) => ({
        op: 'add' as const,
        kind: 'reply' as const,
        subject: REPLY_SUBJECT,
        attribute: replyKey(t.sessionId, t.position, part),
        value: text,
        statement: text,
        confidence: 1,
        validFrom: t.at,
        evidence: [{ turnId: t.id, quote: text }],
      })),
    );
}

/** One `add` of an episode for every user turn (or part) with text. Assistant turns are never episodes. */
export function episodeOperations(turns: readonly PartTurn[]): ExtractionOperation[] {
  return turns
    .filter((t) => t.role === 'user' && t.text.trim() !== '')
    .map((t) => ({
      op: 'add' as const,
      kind: 'episode' as const,
      subject: EPISODE_SUBJECT,
      attribute: episodeKey(t.sessionId, t.position, t.part),
      value: t.text,
      statement: t.text,
      confidence: 1,
      validFrom: t.at,
      evidence: [{ turnId: t.id, quote: t.text }],
    }));
}
