/**
 * The ports of what the engine calls besides its store: the extractor and the embedder (implemented by
 * `@mem01/openai` and `@mem01/local`), a host's capture policy, and the logger.
 */
import type { OutboxInput } from './ports.js';
import type { Belief, BeliefKind, CaptureDecision, Evidence, Scope, Usage } from './types.js';

/** One turn given to an extractor: an outbox entry's turn, without its scope (the request has it). */
export interface ExtractionTurn extends Omit<OutboxInput, 'scope'> {
  /** The outbox entry id; evidence refers to turns by it. */
  readonly id: string;
}

/** An existing belief offered to the extractor so it can confirm, supersede or retract it by id. */
export type CandidateBelief = Pick<
  Belief,
  'id' | 'kind' | 'subject' | 'attribute' | 'value' | 'statement' | 'confidence' | 'storedAt'
>;

export interface ExtractionRequest {
  readonly scope: Scope;
  /** Consecutive turns of one user, oldest first. Assistant turns are context, never evidence. */
  readonly turns: readonly ExtractionTurn[];
  /** The user's existing active beliefs most related to the turns. */
  readonly candidates: readonly CandidateBelief[];
  readonly now: string;
  readonly signal?: AbortSignal | undefined;
}

export interface OperationEvidence {
  /** Id of the user turn the quote comes from. */
  readonly turnId: string;
  /** Verbatim text from that turn. */
  readonly quote: string;
}

/** A new belief's claim, with the quotes that ground it. */
export interface AddOperation
  extends Pick<Belief, 'kind' | 'subject' | 'attribute' | 'value' | 'statement' | 'confidence'> {
  readonly op: 'add';
  readonly evidence: readonly OperationEvidence[];
  readonly validFrom?: string | null | undefined;
  readonly validTo?: string | null | undefined;
}

export interface ConfirmOperation {
  readonly op: 'confirm';
  readonly id: string;
  readonly confidence?: number | undefined;
  readonly evidence: readonly OperationEvidence[];
}

export interface SupersedeOperation {
  readonly op: 'supersede';
  /** The candidate being replaced. */
  readonly id: string;
  readonly value: string;
  readonly statement: string;
  readonly confidence: number;
  readonly evidence: readonly OperationEvidence[];
  readonly kind?: BeliefKind | undefined;
  readonly validFrom?: string | null | undefined;
}

export interface RetractOperation {
  readonly op: 'retract';
  readonly id: string;
  readonly evidence: readonly OperationEvidence[];
}

export type ExtractionOperation = AddOperation | ConfirmOperation | SupersedeOperation | RetractOperation;

export interface ExtractionResult {
  readonly operations: readonly ExtractionOperation[];
  readonly usage?: Usage | undefined;
}

/**
 * Turns conversation turns into belief operations. Must be side-effect free towards the store: the engine
 * validates every operation (ids among candidates, quotes grounded in user turns, kinds, confidences) and
 * commits. Throws `ExtractionError` for output that does not validate, `BudgetExceededError` when a budget is
 * spent (the turns stay queued), `ProviderError` for a failed call.
 */
export interface Extractor {
  readonly name: string;
  /**
   * Character budget for one batch of consecutive turns. The pipeline hands over up to this many characters
   * per call. Undefined or 0: one turn per call.
   */
  readonly batchChars?: number | undefined;
  extract(request: ExtractionRequest): Promise<ExtractionResult>;
}

/** Text to vectors. Deterministic for a given model. */
/** One turn of the conversation a {@link Summarizer} summarizes, oldest first. */
export interface SummaryTurn {
  /** The turn's id in this request; a summary's sources refer to turns by it. */
  readonly id: string;
  readonly position: number;
  readonly role: 'user' | 'assistant';
  readonly text: string;
  /** When the turn happened, ISO-8601 UTC. */
  readonly at: string;
}

export interface SummaryRequest {
  readonly scope: Scope;
  /** The conversation (session) summarized. */
  readonly sessionId: string;
  /** Its turns still remembered, oldest first (forgotten turns are not among them). */
  readonly turns: readonly SummaryTurn[];
  /** The longest summary the engine keeps, in UTF-8 bytes; a longer one is cut at a word. */
  readonly maxBytes: number;
  readonly now: string;
  readonly signal?: AbortSignal | undefined;
}

export interface SummaryResult {
  /** The summary, plain text. Empty: nothing worth a summary (none is kept). */
  readonly text: string;
  /**
   * The turns it draws on, each with a verbatim quote of the turn (the evidence forgetting follows). Default: every
   * user turn of the request.
   */
  readonly sources?: readonly OperationEvidence[] | undefined;
  readonly usage?: Usage | undefined;
}

/**
 * Writes the summary of one conversation: extractive offline (`extractiveSummarizer`, the engine's default) or by a
 * model (`@mem01/openai`). One call per summary; what it reports in `usage` counts in the user's budgets.
 */
export interface Summarizer {
  readonly name: string;
  summarize(request: SummaryRequest): Promise<SummaryResult>;
}

export interface Embedder {
  /** Model id; part of any cache key. */
  readonly model: string;
  readonly dimensions: number;
  /**
   * Cosine similarity below which a vector match alone does not make a belief relevant to a query.
   * Lexical-fuzzy embedders need a higher floor than semantic ones.
   */
  readonly minSimilarity: number;
  /**
   * `semantic` (default): similarity reflects meaning. `lexical`: similarity mostly reflects shared words and
   * character n-grams (feature hashing); recall then weights the lexical signal more.
   */
  readonly kind?: 'semantic' | 'lexical' | undefined;
  /** One vector per text, in order, each of length `dimensions`. */
  embed(
    texts: readonly string[],
    options?: {
      readonly signal?: AbortSignal | undefined;
      /** Whose text this is, for per-user budgets and accounting. Never part of a cache key. */
      readonly scope?: Scope | undefined;
      /**
       * Receives what the call used, before `embed` resolves: once per provider request (`embeddingCalls: 1` and
       * its `embeddingTokens`), or once with `embeddingCalls: 0` when the call was served without one (a cache).
       * The engine adds it to the user's budget counters (`config.budgets`); without a report it counts the call
       * as one. An embedder that cannot tell leaves it uncalled.
       */
      readonly onUsage?: ((usage: Usage) => void) | undefined;
    },
  ): Promise<Float32Array[]>;
}

/** The facts a {@link CapturePolicy} gets about one candidate, besides the candidate itself. */
export interface CaptureReview {
  readonly scope: Scope;
  /** The active belief the candidate would supersede (same subject and attribute, another value); null if none. */
  readonly supersedes: Belief | null;
  /** The candidate's confidence (as on the candidate). */
  readonly confidence: number;
  /** The quotes of user turns that ground it (as on the candidate; an episode's is its whole turn). */
  readonly evidence: readonly Evidence[];
  /** What the engine does without a policy: `active`, or `pending` below `config.pendingBelow`. */
  readonly proposed: 'active' | 'pending';
}

/**
 * A host's rule for what extraction may capture, run by the planner on every candidate belief (and episode) it would
 * insert, before the commit: `accept` commits it active (whatever its confidence), `pending` holds it for review
 * (it retires nothing until approved), `reject` drops it. Confirmations of a belief already held and retractions are
 * not candidates. A throw fails the extraction like an extractor's failure (the turns stay queued and are retried).
 */
export interface CapturePolicy {
  /** The host's name for this version of the policy (an id, at most 256 characters), recorded with each decision. */
  readonly revision: string;
  /** Decides about `candidate`, the belief as the engine would insert it. May be async. */
  decide(candidate: Belief, review: CaptureReview): CaptureDecision | Promise<CaptureDecision>;
}

/** Where the engine and adapters write diagnostics. Defaults to silence for the engine. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}
