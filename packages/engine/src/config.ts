/** Engine configuration: every default is resolved here, once. */
import { InvalidInputError } from './errors.js';
import type { Embedder } from './ports.js';
import { DEFAULT_RANKING, LEXICAL_EMBEDDER_WEIGHTS, type RankingConfig, SEMANTIC_WEIGHTS } from './recall.js';
import { DEFAULT_BLOCK_BYTES, MIN_BLOCK_BYTES } from './render.js';
import { givenBlockBytes } from './util.js';

export interface EngineConfig {
  /** Raise pipeline failures at the next enqueue or read barrier of the same user. Default false (failure-open). */
  readonly strict: boolean;
  /** Extractions below this confidence become `pending`. Default 0.5. */
  readonly pendingBelow: number;
  /** Largest query or belief text in UTF-8 bytes; a longer accepted turn is split into parts of this size. Default 16384. */
  readonly maxTextBytes: number;
  /**
   * Largest accepted turn in UTF-8 bytes (a user may paste a document). A turn over `maxTextBytes` is extracted
   * and kept as episodes in parts of at most `maxTextBytes`. Default 262144 (256 KiB); at least `maxTextBytes`.
   */
  readonly maxTurnBytes: number;
  /**
   * Outbox lease: how long a claim holds a user's turns. Renewed every `leaseMs / 3` while they are processed
   * (`WriteOutbox.renew`), so it only runs out when the process holding it dies or stalls; another process then takes
   * the turns over after at most `leaseMs`. A store with `ownerLiveness` (SQLite, PostgreSQL) takes over the claims
   * of an exited process on the same host at once, without waiting for the lease. Default 10 s.
   */
  readonly leaseMs: number;
  /** Attempts before a turn is set aside as dead. Default 5. */
  readonly maxAttempts: number;
  /** Users processed at once. Default 4. */
  readonly concurrency: number;
  /** Most turns in one extraction batch (when the extractor batches). Default 8. */
  readonly maxBatchTurns: number;
  /** Size of the context block in UTF-8 bytes (not a spending cap: those are `budgets`). Default 800. */
  readonly blockBytes: number;
  /** @deprecated The earlier name of {@link EngineConfig.blockBytes} (always the same value); use `blockBytes`. */
  readonly budgetBytes: number;
  /** Beliefs recalled by default, and most memories in the block. Default 6. */
  readonly recallLimit: number;
  /**
   * Hits fetched from each index before fusion. Default 200: session coverage, conversational context and feedback
   * read the candidates, and see more of a conversation with more of them.
   */
  readonly candidateLimit: number;
  /** Existing beliefs offered to the extractor. Default 20. */
  readonly candidatesForExtraction: number;
  /**
   * Keep each user turn verbatim as a dated `episode` belief and recall episodes beside beliefs. Default true: with
   * the offline extractor beliefs hold a small part of what a user says (on LoCoMo 12% of the evidence questions
   * need; the turns themselves hold most of it). An episode is retired with the beliefs drawn from its turn.
   */
  readonly episodic: boolean;
  /**
   * Keep each assistant turn verbatim as a dated `reply`, recalled only for a question about what the assistant said
   * ("what did you recommend last time?", "in our previous chat you mentioned …"), labelled `[assistant said …]`.
   * A reply is never evidence about the user (the extractor reads assistant turns as context only) and takes no
   * candidate's place in other recalls (the store's searches leave replies out). Forgetting what the user said
   * forgets the replies that repeat it. Default true.
   */
  readonly replies: boolean;
  /**
   * Write each conversation's summary (a `summary` belief) in the write pipeline: when the conversation has grown by
   * `summaryAfterTurns` turns since its last summary, and when the user's next turn comes `summaryIdleMs` or more after
   * the conversation's last one (in that conversation or another). With the offline summarizer it costs no call;
   * with a model's, one call per summary, in the user's budgets. `summarize(scope, sessionId)` writes one on demand
   * either way. Default false: recall uses summaries only for a question about an earlier conversation as a whole,
   * so writing them for every conversation changes no default figure on either development set, and with a model's
   * summarizer costs a call each (see the engine README, Conversation summaries).
   */
  readonly autoSummaries: boolean;
  /** Turns a conversation grows by before `autoSummaries` writes its summary again. Default 40. */
  readonly summaryAfterTurns: number;
  /** How long a conversation is idle before `autoSummaries` summarizes it. Default 30 minutes. */
  readonly summaryIdleMs: number;
  /** Longest summary in UTF-8 bytes. Default 400. */
  readonly summaryBytes: number;
  /**
   * Near repeats: a belief that extraction draws on a new key (from a turn, or from `remember`'s free text) whose
   * statement's embedding has cosine similarity at or above this with an active belief of the same scope and kind
   * is a repeat of it, and is planned as an exact repeat is (the belief is confirmed: evidence merged, confidence
   * raised; nothing is inserted). Needs a semantic embedder (not a `lexical` one such as the offline hashing
   * embedder, whose similarity is shared words) and a store with vector search; episodes and a structured `remember`
   * (whose key the host names) follow the key rules alone. A number in (0, 1], or null (off). Default 0.9.
   */
  readonly duplicateSimilarity: number | null;
  /** When a budget is spent, retry the turns after this long. Default 60 s. */
  readonly budgetRetryMs: number;
  /**
   * How long `flush(scope)` waits for a user's turns that another worker's lease holds (a crashed process on another
   * host holds them until its lease expires, at most `leaseMs`) before it reports them. Default 30 s.
   */
  readonly flushTimeoutMs: number;
  /**
   * Refuse a mutation (`correct`, `forget`, `approve`, `reject`, `retract`) that does not give `expectedVersion`, with
   * `InvalidInputError`. Default false: the version is checked when given, and simple apps may leave it out.
   */
  readonly requireVersion: boolean;
  /**
   * Refuse a mutation (`remember`, `correct`, `forget`, `approve`, `reject`, `retract`) that does not give an operation
   * `key`, with `InvalidInputError`, so that every change a host makes can be retried safely and found in the
   * operation journal. Default false: a key is used when given.
   */
  readonly requireOperationKey: boolean;
  /**
   * Capture (`accept`, `appendTranscript` with turns, `remember`) only for a user + namespace with a valid capture
   * grant (`grantCapture`); otherwise `CaptureNotAuthorizedError`, and nothing is written. Default false. Needs a
   * store with capture grants (every mem01 store).
   */
  readonly requireCaptureGrant: boolean;
  /** Per-user budgets kept in the store, so that every worker sharing it respects one budget. Default: none. */
  readonly budgets: EngineBudgets;
  /**
   * Count how often recall returns each belief (`accessCount`, `lastAccessedAt`). Counted in memory, never on
   * recall's path, and written in one batch per scope at most every `accessFlushMs`, at `flush()` and at `close()`.
   * Default true (with a store that keeps counts; every mem01 store does).
   */
  readonly accessCounts: boolean;
  /** The longest a counted access waits in memory before it is written. Default 5 s. */
  readonly accessFlushMs: number;
  readonly ranking: RankingConfig;
}

/**
 * Per-user budgets, in fixed windows of `periodMs` aligned to the Unix epoch (every process computes the same
 * window), counted in the store. An extraction batch starts only while every counter of the user is under its limit;
 * what it used is added after the call, so one batch may go over a limit (the next waits for the window). A spent
 * budget leaves the turns queued until the window ends (`BudgetExceededError.resetAt`). Null: no limit.
 */
export interface EngineBudgets {
  /** Window length. Default one hour. */
  readonly periodMs: number;
  /** Extractor (LLM) calls per user per window, as the extractor reports them in `usage.llmCalls`. */
  readonly llmCallsPerUser: number | null;
  /** Input tokens per user per window (`usage.inputTokens`). */
  readonly inputTokensPerUser: number | null;
  /** Output tokens per user per window (`usage.outputTokens`). */
  readonly outputTokensPerUser: number | null;
  /**
   * Embedder calls per user per window: the provider requests the embedder reports (`usage.embeddingCalls`; a cache
   * hit is free), or one per call of the engine when it reports none (the offline embedder). Counted for the
   * user's writes (extraction's candidate search, the embeddings of what is committed, `remember`) and for recall
   * queries. When spent, extraction waits like the extractor budgets do, and recall goes on without vectors
   * (lexical only) until the window ends.
   */
  readonly embeddingCallsPerUser: number | null;
  /** Embedded input tokens per user per window, as the embedder reports them (`usage.embeddingTokens`). */
  readonly embeddingTokensPerUser: number | null;
  /**
   * Result capacity: the most active beliefs a user may hold, across namespaces, episodes left out (they are the
   * user's own turns, retired with the beliefs drawn from them). At the cap, extraction waits (retried after
   * `budgetRetryMs`) and `remember` fails with `BudgetExceededError`, until beliefs are retired, forgotten or erased.
   */
  readonly maxActiveBeliefsPerUser: number | null;
  /**
   * Result capacity in tokens: the most tokens the statements of a user's active beliefs may hold together, across
   * namespaces, episodes left out, estimated as their UTF-8 bytes divided by {@link BYTES_PER_TOKEN} (the engine
   * carries no tokenizer; four bytes a token is the usual rate of English text for OpenAI's tokenizers). At the cap,
   * extraction waits and `remember` fails as with `maxActiveBeliefsPerUser`.
   */
  readonly maxActiveTokensPerUser: number | null;
}

/** The estimate behind token capacities (`maxActiveTokensPerUser`): UTF-8 bytes per token. */
export const BYTES_PER_TOKEN = 4;

export type EngineConfigInput = Partial<Omit<EngineConfig, 'ranking' | 'budgets'>> & {
  readonly ranking?: Partial<RankingConfig> | undefined;
  readonly budgets?: Partial<EngineBudgets> | undefined;
};

/** No budget: every limit null. */
export const NO_BUDGETS: EngineBudgets = {
  periodMs: 3_600_000,
  llmCallsPerUser: null,
  inputTokensPerUser: null,
  outputTokensPerUser: null,
  embeddingCallsPerUser: null,
  embeddingTokensPerUser: null,
  maxActiveBeliefsPerUser: null,
  maxActiveTokensPerUser: null,
};

export const DEFAULT_CONFIG: Omit<EngineConfig, 'ranking' | 'budgets'> = {
  strict: false,
  pendingBelow: 0.5,
  maxTextBytes: 16_384,
  maxTurnBytes: 262_144,
  leaseMs: 10_000,
  maxAttempts: 5,
  concurrency: 4,
  maxBatchTurns: 8,
  blockBytes: DEFAULT_BLOCK_BYTES,
  budgetBytes: DEFAULT_BLOCK_BYTES,
  recallLimit: 6,
  candidateLimit: 200,
  candidatesForExtraction: 20,
  episodic: true,
  replies: true,
  autoSummaries: false,
  summaryAfterTurns: 40,
  summaryIdleMs: 1_800_000,
  summaryBytes: 400,
  duplicateSimilarity: 0.9,
  budgetRetryMs: 60_000,
  flushTimeoutMs: 30_000,
  requireVersion: false,
  requireOperationKey: false,
  requireCaptureGrant: false,
  accessCounts: true,
  accessFlushMs: 5_000,
};

/** Longest query text recall uses; a longer user message is cut (its head carries the question). */
export const MAX_QUERY_CHARS = 4000;

/** Merges `input` over the defaults and checks every field. The embedder supplies the similarity floor. */
export function resolveConfig(input: EngineConfigInput | undefined, embedder: Embedder | null): EngineConfig {
  const given = dropUndefined(input ?? {});
  const blockBytes = givenBlockBytes(given, 'config.blockBytes') ?? DEFAULT_CONFIG.blockBytes;
  const merged = { ...DEFAULT_CONFIG, ...given, blockBytes, budgetBytes: blockBytes };
  const ranking: RankingConfig = {
    ...DEFAULT_RANKING,
    ...(embedder
      ? {
          minSimilarity: embedder.minSimilarity,
          weights: embedder.kind === 'lexical' ? LEXICAL_EMBEDDER_WEIGHTS : SEMANTIC_WEIGHTS,
          vectorAlone: embedder.kind !== 'lexical',
        }
      : {}),
    ...dropUndefined(input?.ranking ?? {}),
  };
  const int = (name: keyof typeof DEFAULT_CONFIG, min: number, max: number): void => {
    const v = merged[name];
    if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) {
      throw new InvalidInputError(`config.${name}`, `must be an integer between ${min} and ${max}`);
    }
  };
  int('maxTextBytes', 64, 10_000_000);
  int('maxTurnBytes', merged.maxTextBytes, 1_000_000);
  int('leaseMs', 100, 86_400_000);
  int('maxAttempts', 1, 1000);
  int('concurrency', 1, 1024);
  int('maxBatchTurns', 1, 1000);
  int('blockBytes', MIN_BLOCK_BYTES, 1_000_000);
  int('recallLimit', 1, 1000);
  int('candidateLimit', 1, 10_000);
  int('candidatesForExtraction', 1, 1000);
  int('budgetRetryMs', 0, 86_400_000);
  int('flushTimeoutMs', 0, 86_400_000);
  int('accessFlushMs', 1, 86_400_000);
  int('summaryAfterTurns', 1, 100_000);
  int('summaryIdleMs', 0, 31_622_400_000);
  int('summaryBytes', 64, merged.maxTextBytes);
  for (const flag of [
    'requireVersion',
    'requireOperationKey',
    'requireCaptureGrant',
    'accessCounts',
    'autoSummaries',
  ] as const) {
    if (typeof merged[flag] !== 'boolean') throw new InvalidInputError(`config.${flag}`, 'must be a boolean');
  }
  const budgets = resolveBudgets(input?.budgets);
  if (typeof merged.pendingBelow !== 'number' || !(merged.pendingBelow >= 0 && merged.pendingBelow <= 1)) {
    throw new InvalidInputError('config.pendingBelow', 'must be a number between 0 and 1');
  }
  if (typeof merged.strict !== 'boolean') throw new InvalidInputError('config.strict', 'must be a boolean');
  if (typeof merged.episodic !== 'boolean')
    throw new InvalidInputError('config.episodic', 'must be a boolean');
  if (typeof merged.replies !== 'boolean') throw new InvalidInputError('config.replies', 'must be a boolean');
  const { duplicateSimilarity } = merged;
  if (
    duplicateSimilarity !== null &&
    !(typeof duplicateSimilarity === 'number' && duplicateSimilarity > 0 && duplicateSimilarity <= 1)
  ) {
    throw new InvalidInputError(
      'config.duplicateSimilarity',
      'must be a number above 0 and at most 1, or null',
    );
  }
  const { contextWeight, halfLifeDays, minCoverage, answerBoost } = ranking;
  if (typeof answerBoost !== 'number' || !(answerBoost >= 1 && answerBoost <= 10)) {
    throw new InvalidInputError('config.ranking.answerBoost', 'must be a number between 1 and 10');
  }
  if (typeof minCoverage !== 'number' || !(minCoverage >= 0 && minCoverage <= 1)) {
    throw new InvalidInputError('config.ranking.minCoverage', 'must be a number between 0 and 1');
  }
  if (typeof contextWeight !== 'number' || !(contextWeight >= 0 && contextWeight <= 1)) {
    throw new InvalidInputError('config.ranking.contextWeight', 'must be a number between 0 and 1');
  }
  if (typeof halfLifeDays !== 'number' || !(halfLifeDays > 0 && Number.isFinite(halfLifeDays))) {
    throw new InvalidInputError('config.ranking.halfLifeDays', 'must be a positive number');
  }
  return { ...merged, ranking, budgets };
}

function resolveBudgets(input: Partial<EngineBudgets> | undefined): EngineBudgets {
  if (input !== undefined && (input === null || typeof input !== 'object'))
    throw new InvalidInputError('config.budgets', 'must be an object');
  const b = { ...NO_BUDGETS, ...dropUndefined(input ?? {}) };
  if (!Number.isInteger(b.periodMs) || b.periodMs < 1000 || b.periodMs > 31_622_400_000)
    throw new InvalidInputError(
      'config.budgets.periodMs',
      'must be an integer from 1000 to 31622400000 (a year)',
    );
  for (const name of [
    'llmCallsPerUser',
    'inputTokensPerUser',
    'outputTokensPerUser',
    'embeddingCallsPerUser',
    'embeddingTokensPerUser',
    'maxActiveBeliefsPerUser',
    'maxActiveTokensPerUser',
  ] as const) {
    const v = b[name];
    if (v !== null && (!Number.isSafeInteger(v) || v < 1))
      throw new InvalidInputError(`config.budgets.${name}`, 'must be a positive integer or null');
  }
  return b;
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
