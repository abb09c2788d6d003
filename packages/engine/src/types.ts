/**
 * The belief model. A belief is one durable claim about a user, with a lifecycle.
 * Every timestamp is an ISO-8601 UTC string with millisecond precision (`Date#toISOString()`).
 */

/** Who a belief is about. `userId` is required; `namespace` separates projects or agents of one user. */
export interface Scope {
  readonly userId: string;
  /** Optional project/agent partition. The empty string and `undefined` are the same namespace. */
  readonly namespace?: string | undefined;
}

/** Kinds the extractor may confirm, supersede or retract (episodes, replies and notes are the engine's own). */
export const EXTRACTABLE_KINDS = [
  'identity',
  'preference',
  'goal',
  'decision',
  'fact',
  'relationship',
  'event',
] as const;

export const BELIEF_KINDS = [
  ...EXTRACTABLE_KINDS,
  /** A raw user turn kept as episodic memory, beside the extracted beliefs. */
  'episode',
  /**
   * An assistant reply kept verbatim (`config.replies`): never evidence about the user, recalled only for a question
   * about what the assistant said ("what did you recommend last time?"), labelled as the assistant's.
   */
  'reply',
  /**
   * A compressed, dated summary of one conversation (`summarize(sessionId)`, or `config.autoSummaries`): the sentences
   * that carry the most of it offline, or a model's summary with a key. Derived from the conversation's turns, never a
   * claim of its own; forgetting a turn it drew on retires it (and the engine writes it again from what is left).
   */
  'summary',
  /** A host's free text kept as written, when `remember` draws no belief from it. */
  'note',
] as const;
export type BeliefKind = (typeof BELIEF_KINDS)[number];

/** Whether a belief of `kind` keeps a turn verbatim (an episode or a reply). */
export function isVerbatim(kind: BeliefKind): boolean {
  return kind === 'episode' || kind === 'reply';
}

/**
 * The kinds drawn from a conversation's turns rather than claimed about the user: the turns kept verbatim and the
 * conversation summaries. They are retired with the turns they keep or draw on, and left out of result capacity.
 */
export const CONVERSATION_KINDS = ['episode', 'reply', 'summary'] as const satisfies readonly BeliefKind[];

/** Whether a belief of `kind` is drawn from a conversation (an episode, a reply or a summary). */
export function isConversational(kind: BeliefKind): boolean {
  return kind === 'episode' || kind === 'reply' || kind === 'summary';
}

export const BELIEF_STATUSES = ['active', 'pending', 'superseded', 'retracted', 'forgotten'] as const;
export type BeliefStatus = (typeof BELIEF_STATUSES)[number];

export const BELIEF_SOURCES = ['extracted', 'correction', 'manual', 'tool', 'import'] as const;
export type BeliefSource = (typeof BELIEF_SOURCES)[number];

export type TurnRole = 'user' | 'assistant';

/** Where a belief came from: one turn of one session, and the quote that grounds it. */
export interface Evidence {
  readonly sessionId: string;
  /** Position of the item in the session transcript (0-based, assigned by the transcript store). */
  readonly position: number;
  readonly role: TurnRole;
  /** A short verbatim quote from the turn's text. Empty for manual/correction sources. */
  readonly quote: string;
  /** When the turn happened (or was accepted), ISO-8601 UTC. */
  readonly at: string;
  /** Optional external reference for the turn (for example a dataset's dialogue id). */
  readonly ref?: string | undefined;
}

/** A JSON value inside host {@link BeliefMetadata}. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/**
 * Host metadata of a belief: a small JSON object (at most `MAX_METADATA_BYTES` as JSON, checked by every store). The
 * engine never reads it; stores keep and return it. Forgetting the belief removes it.
 */
export type BeliefMetadata = { readonly [key: string]: JsonValue };

/** Where a host says a belief came from (`remember`'s `source` and `sourceRef`): its own label, and a reference. */
export interface BeliefOrigin {
  /** A short label of the host's choosing, e.g. `crm` or `settings-page` (letters, digits, `._:/-`, at most 64). */
  readonly label: string;
  /** An external reference, e.g. a ticket id (at most 1024 bytes). */
  readonly ref?: string | undefined;
}

/** What a capture policy decided for a candidate (see `CapturePolicy`). */
export type CaptureDecision = 'accept' | 'pending' | 'reject';

export interface Belief {
  /** Time-ordered id (UUIDv7). */
  readonly id: string;
  readonly scope: Scope;
  readonly kind: BeliefKind;
  /** Who/what the claim is about; `user` for the user themself, else e.g. `sister`, `employer`. */
  readonly subject: string;
  /** Canonical key conflicts are detected on, e.g. `home_city`, `rent_amount`, `preference:aisle_seat`. */
  readonly attribute: string;
  readonly value: string;
  /** The natural sentence, e.g. "The user lives in San Francisco." */
  readonly statement: string;
  /** 0..1 */
  readonly confidence: number;
  readonly status: BeliefStatus;
  readonly supersedes: string | null;
  readonly supersededBy: string | null;
  /** Starts at 1; every change bumps it. */
  readonly version: number;
  /** When the claim is true in the world, if known. */
  readonly validFrom: string | null;
  readonly validTo: string | null;
  /** When the system learnt it. */
  readonly storedAt: string;
  /** When the system last changed this record. */
  readonly updatedAt: string;
  /** When the system retired it (superseded, retracted, forgotten). */
  readonly invalidatedAt: string | null;
  readonly evidence: readonly Evidence[];
  readonly source: BeliefSource;
  /** Host metadata; absent when the host gave none. Forgetting removes it. */
  readonly metadata?: BeliefMetadata | undefined;
  /** The host's label and reference, for a belief it remembered with `source`; absent otherwise. Forgetting removes it. */
  readonly origin?: BeliefOrigin | undefined;
  /**
   * How many times recall returned this belief, absent while never. Counted in memory and written in batches, never on
   * recall's own path, so the count may trail by the writes not flushed yet (see the engine README).
   */
  readonly accessCount?: number | undefined;
  /** When recall last returned it (as of the last written batch), absent while never. */
  readonly lastAccessedAt?: string | undefined;
  /**
   * The capture grant it was captured under (provenance): the grant its turns were accepted under, or that was active
   * when it was remembered. Absent when none was (no grant recorded, a correction, or stored before grants were bound
   * to captures). While that grant is revoked or expired, recall, the block and `list` leave the belief out and it
   * cannot be approved; `get`, `history` and the audit log still show it. Kept on the forgotten tombstone (an id).
   */
  readonly grantId?: string | undefined;
}

/**
 * The memory tier a recalled item comes from: `belief` (a claim extracted or remembered about the user, its `kind`
 * on the belief), `episode` (a turn kept verbatim: the user's, or a reply of the assistant's) or `summary` (a
 * conversation summary, see {@link BeliefKind} `summary`).
 */
export const RECALL_TIERS = ['belief', 'episode', 'summary'] as const;
export type RecallTier = (typeof RECALL_TIERS)[number];

/** A belief as scored by recall. */
export interface ScoredBelief {
  readonly belief: Belief;
  /**
   * From `recall` and `context`: relevance in 0..1, higher is better. The fused total of the signals divided by the
   * highest total the ranking configuration allows (`signals.maxTotal`), so results keep the order of their totals
   * and one configuration's scores compare across queries (what `minScore` is held against).
   */
  readonly score: number;
  /** Which memory tier the item comes from. */
  readonly tier: RecallTier;
  readonly signals?: RecallSignals | undefined;
}

/** The per-signal scores recall fused; returned by `explain`. */
export interface RecallSignals {
  /** Lexical relevance normalised to 0..1 within the candidate set (0 when absent). */
  readonly lexical: number;
  /** Raw store lexical score (BM25-like, higher is better), if any. */
  readonly lexicalRaw: number | null;
  /** Cosine similarity -1..1, or null without an embedder. */
  readonly vector: number | null;
  /** 0..1 decay by age of `storedAt`. */
  readonly recency: number;
  readonly confidence: number;
  /** Weight of the belief's kind. */
  readonly kind: number;
  /** The fused total of the signals (with session coverage and conversational context), before scaling to 0..1. */
  readonly total: number;
  /**
   * The highest total the ranking configuration allows (see `maxRecallTotal`); recall's `score` is
   * `total / maxTotal`, held to 0..1.
   */
  readonly maxTotal: number;
}

/** A turn to accept into the outbox. */
export interface OutboxInput {
  readonly scope: Scope;
  readonly sessionId: string;
  readonly position: number;
  readonly role: TurnRole;
  /** The turn text. In an {@link OutboxEntry}, erased (empty string) once the entry is done. */
  readonly text: string;
  /** When the turn happened, ISO-8601 UTC. */
  readonly at: string;
  readonly ref?: string | undefined;
  /**
   * The capture grant the turn was accepted under (the engine sets it); absent when none. A claim never mixes turns of
   * different grants, so what a claim's extraction writes carries one grant.
   */
  readonly grantId?: string | undefined;
}

/** An accepted turn waiting for extraction. */
export interface OutboxEntry extends OutboxInput {
  readonly id: string;
  /** `${sessionId}:${position}:${sha-like hash of text}`; enqueuing an existing key is a no-op. */
  readonly idempotencyKey: string;
  readonly acceptedAt: string;
  /** Global acceptance order within the store (monotonic). */
  readonly seq: number;
  readonly attempts: number;
  readonly status: 'queued' | 'claimed' | 'done' | 'dead';
  readonly lastError: string | null;
}

/** A content-free record of a change, kept for audit. Never contains belief text. */
export interface AuditEvent {
  readonly at: string;
  readonly scope: Scope;
  readonly beliefId: string | null;
  readonly action:
    | 'add'
    | 'confirm'
    | 'supersede'
    | 'retract'
    | 'forget'
    | 'approve'
    | 'reject'
    | 'correct'
    | 'erase'
    | 'import';
  readonly actor: string;
  /**
   * Set when a capture policy decided about the candidate: the policy's revision (the host's string) and its decision.
   * A rejected candidate leaves an event with action `reject` and no belief id.
   */
  readonly policy?: { readonly revision: string; readonly decision: CaptureDecision } | undefined;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque cursor for the next page; null when this is the last page. */
  readonly nextCursor: string | null;
}

/** Usage reported by an extractor or embedder call. */
export interface Usage {
  readonly llmCalls?: number;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly embeddingCalls?: number;
  readonly embeddingTokens?: number;
}
