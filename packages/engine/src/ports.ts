/**
 * Ports: what the engine needs from the outside world. Stores, extractors and embedders implement these.
 * Stores hold no policy: what supersedes what, what is a duplicate and what is recalled first is decided by the
 * engine. Stores enforce the generic invariants written in each contract (atomicity, versions, scope
 * isolation, one active belief per key) so that racing writers cannot break them.
 *
 * This module has the store ports the pipeline runs on and `FullStore`; the governance ports (operation keys,
 * grants, budgets, access counts) are in `governance-ports.ts`, the extractor, embedder, capture policy and logger in
 * `provider-ports.ts`. Every one is exported from here.
 */
import type {
  AccessStore,
  BudgetStore,
  CaptureGrantStore,
  OperationJournal,
  OperationRecord,
} from './governance-ports.js';
import type {
  AuditEvent,
  Belief,
  BeliefKind,
  BeliefStatus,
  OutboxEntry,
  OutboxInput,
  Page,
  Scope,
  TurnRole,
} from './types.js';

export type * from './governance-ports.js';
export type * from './provider-ports.js';
export type { OutboxInput } from './types.js';

/** What a store can do. Missing optional capabilities fail loudly with a `CapabilityError` naming the store. */
export interface StoreCapabilities {
  /** `index`: an approximate/ANN vector index (sqlite-vec, pgvector HNSW); `exact`: exact cosine over the
   * scope's candidates; `none`: no vector search. */
  readonly vectorSearch: 'index' | 'exact' | 'none';
  /** Human-readable name of the active vector mode, e.g. `sqlite-vec`, `pgvector-hnsw`, `exact-cosine`. */
  readonly vectorIndex: string;
  /** Name of the lexical index, e.g. `fts5-bm25`, `tsvector-gin`, `inverted-bm25`. */
  readonly lexicalIndex: string;
  /** Accepted turns survive a process crash. */
  readonly durableOutbox: boolean;
  /** Several processes may use the same database at once. */
  readonly multiProcess: boolean;
  /**
   * Claims record the process that holds them, and a claim of a process on the same host that has exited counts as
   * expired at once (a restarted process takes over its crashed predecessor's turns without waiting out the lease).
   * A lease of a process on another host, or of one whose liveness cannot be told, runs until it expires.
   */
  readonly ownerLiveness: boolean;
}

export interface BeliefInsert {
  readonly belief: Belief;
  /** Embedding of `belief.statement`; its length must equal the store's dimensions. */
  readonly embedding?: Float32Array | null | undefined;
}

/** Fields of a belief that may change after insert. Content fields never change: a new value is a new belief. */
export interface BeliefPatch {
  readonly status?: BeliefStatus;
  readonly supersededBy?: string | null;
  readonly invalidatedAt?: string | null;
  readonly validTo?: string | null;
  readonly confidence?: number;
  readonly evidence?: Belief['evidence'];
  readonly updatedAt: string;
}

export interface BeliefUpdate {
  readonly id: string;
  /** The version the engine read. The store refuses the whole commit if the stored version differs. */
  readonly expectedVersion: number;
  readonly set: BeliefPatch;
}

/** The outcome of one reconciliation, committed all-or-nothing. */
export interface CommitRequest {
  /** Every insert and update belongs to this scope. */
  readonly scope: Scope;
  readonly inserts: readonly BeliefInsert[];
  readonly updates: readonly BeliefUpdate[];
  /** Content-free audit records, written in the same transaction. */
  readonly audit: readonly AuditEvent[];
  /** Outbox entries this commit completes, in the same transaction. The claim must still be held. */
  readonly complete?: { readonly claimId: string; readonly entryIds: readonly string[] } | undefined;
  /**
   * The operation key this commit carries out, recorded in the same transaction (a store that implements
   * {@link OperationJournal}; the engine sends it to no other). Its scope is the commit's.
   */
  readonly operation?: OperationRecord | undefined;
}

export interface SearchOptions {
  /** Maximum hits. */
  readonly limit: number;
  /** Statuses to search. Default `['active']`. */
  readonly statuses?: readonly BeliefStatus[] | undefined;
  /**
   * Leave out beliefs whose `grantId` is one of these (the engine passes the scope's grants that ended, so that what
   * they captured is not recalled). Beliefs without a grant are never left out. Default: none.
   */
  readonly excludeGrants?: readonly string[] | undefined;
}

export interface ListOptions {
  /** Default `['active']`. */
  readonly statuses?: readonly BeliefStatus[] | undefined;
  /** Page size, 1..1000. Default 100. */
  readonly limit?: number | undefined;
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string | null | undefined;
  /** Leave out beliefs whose `grantId` is one of these, as {@link SearchOptions.excludeGrants}. Default: none. */
  readonly excludeGrants?: readonly string[] | undefined;
  /** Only beliefs of these kinds (a non-empty array). Default: every kind. */
  readonly kinds?: readonly BeliefKind[] | undefined;
  /** Only beliefs with at least one evidence item from this session (conversation). Default: any. */
  readonly sessionId?: string | undefined;
}

export interface LexicalHit {
  readonly belief: Belief;
  /** Higher is better (BM25 with the sign made positive). Scale is store-specific. */
  readonly score: number;
}

export interface VectorHit {
  readonly belief: Belief;
  /** Cosine similarity, -1..1. */
  readonly score: number;
}

export interface ScopeSummary {
  readonly scope: Scope;
  readonly counts: Readonly<Record<BeliefStatus, number>>;
}

export interface EraseReceipt {
  readonly beliefs: number;
  readonly outboxEntries: number;
  readonly transcriptItems: number;
  readonly auditEvents: number;
  /** Recorded operation keys. */
  readonly operations: number;
  /** Capture grants, revoked and expired ones included. */
  readonly grants: number;
}

/** What {@link ClearAllStore.clearAll} deleted. */
export interface ClearAllReceipt extends EraseReceipt {
  /** Distinct users that had anything in the store. */
  readonly users: number;
}

export interface StoreInfo {
  readonly name: string;
  readonly schemaVersion: number;
  readonly capabilities: StoreCapabilities;
  /** Fixed embedding dimension, or null while no embedding has been written and none was configured. */
  readonly dimensions: number | null;
  readonly outbox: OutboxBacklog;
}

export interface OutboxBacklog {
  readonly queued: number;
  readonly claimed: number;
  readonly dead: number;
  /**
   * Claimed entries whose lease has expired (a worker died or stalled), or whose holder the store can tell has exited
   * (see {@link StoreCapabilities.ownerLiveness}).
   */
  readonly staleLeases: number;
  /**
   * The earliest time at which a queued or claimed entry that cannot be claimed now becomes claimable: the expiry of
   * a live lease (another worker holds the entries) or a retry time set by `fail`/`release`, ISO-8601 UTC. Null when
   * no entry waits for either.
   */
  readonly nextClaimableAt: string | null;
}

/**
 * Durable beliefs. Every method is scoped: nothing of one scope (`userId` + `namespace`) is ever returned
 * through another, and an id from another scope behaves as "not found".
 */
export interface BeliefStore {
  /** Short adapter name used in errors and logs, e.g. `sqlite`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;

  /**
   * Applies inserts, updates, audit records and outbox completion in one transaction. Each updated belief's
   * `version` becomes `expectedVersion + 1`; inserted beliefs keep the version they carry (1 when new).
   *
   * All-or-nothing. Refuses the whole request, writing nothing, when:
   * - an update's `expectedVersion` differs from the stored version, or its id is not in `scope`
   *   → `VersionConflictError` / `NotFoundError`;
   * - afterwards two beliefs with status `active` would share scope + subject + attribute, including
   *   against a racing writer → `DuplicateActiveBeliefError`;
   * - an insert id already exists → `StoreError`;
   * - an embedding's length differs from the store's dimensions → `DimensionMismatchError`;
   * - `complete` names entries not held by `claimId` (the lease was taken over) → `LeaseLostError`;
   * - `operation.key` is recorded already in `scope` (see {@link OperationJournal}) → `DuplicateOperationError`.
   * Completed outbox entries become `done` and their text is erased. With `operation`, the record is written in the
   * same transaction.
   */
  commit(request: CommitRequest): Promise<void>;

  /** The belief with this id in this scope, in any status (a forgotten one is a content-free tombstone); null if none. */
  get(scope: Scope, id: string): Promise<Belief | null>;

  /** Active beliefs matching any of these subject + attribute keys (exact match). */
  getActiveByKeys(
    scope: Scope,
    keys: readonly { readonly subject: string; readonly attribute: string }[],
  ): Promise<Belief[]>;

  /**
   * Beliefs of the scope with the given statuses (and, when asked, kinds and evidence session), newest first (id
   * descending), paged by an opaque cursor.
   */
  list(scope: Scope, options?: ListOptions): Promise<Page<Belief>>;

  /**
   * Lexical search over statement, value, subject and attribute. `query` is literal user text: it is never
   * interpreted as query syntax (SQL, FTS5 or tsquery operators are plain words). Terms are OR-ed and
   * ranked by BM25 or the nearest equivalent. Best first; ties by id descending. An empty or all-stop-word
   * query returns [].
   */
  searchLexical(scope: Scope, query: string, options: SearchOptions): Promise<LexicalHit[]>;

  /**
   * Nearest beliefs by cosine similarity to `vector`, best first. Beliefs without an embedding are skipped.
   * Throws `CapabilityError` when `capabilities.vectorSearch` is `none`; `DimensionMismatchError` on a
   * wrong-length vector.
   */
  searchVector(scope: Scope, vector: Float32Array, options: SearchOptions): Promise<VectorHit[]>;

  /**
   * History including retired beliefs, oldest first (storedAt, then id). With `id`, the lifecycle chain that
   * contains it (following `supersedes` and `supersededBy` both ways); an unknown id gives [].
   */
  history(scope: Scope, options?: { readonly id?: string | undefined }): Promise<Belief[]>;

  /**
   * Forgets a belief: its content (subject, attribute, value, statement, evidence, embedding) is removed from
   * the row, the lexical and vector indexes and any outbox payload, leaving a content-free tombstone with
   * status `forgotten`, `invalidatedAt = at` and version + 1. Returns the tombstone.
   * `NotFoundError` for an unknown id; `VersionConflictError` when `expectedVersion` is given and differs.
   * Forgetting a tombstone again is a no-op that returns it. Host `metadata` and `origin` leave with the content.
   *
   * In the same transaction, the rest of forget's policy, decided by the store kit's `planForget`: the store hands it
   * the episodes of `scope` (at least those `forgetCandidates` lets through) and forgets every episode the plan names
   * the same way (a tombstone, out of both indexes; the belief's own version check only), erases the outbox text of
   * the plan's turns, and redacts the user's transcript with `redactTranscriptItem`: the plan's turns whole, the
   * plan's needles in every other item of the user's sessions. Nothing of another scope's beliefs changes, and no
   * other user's session.
   *
   * With `operation` (a store that implements {@link OperationJournal}), the record is written in the same
   * transaction, also when the belief was forgotten already; `DuplicateOperationError` when its key is recorded
   * already in `scope`, and nothing is forgotten.
   */
  forget(
    scope: Scope,
    id: string,
    options: {
      readonly at: string;
      readonly expectedVersion?: number | undefined;
      readonly operation?: OperationRecord | undefined;
    },
  ): Promise<Belief>;

  /**
   * The stored embeddings of these beliefs of `scope`, by id, for export. Ids without an embedding, unknown
   * ids, forgotten beliefs and ids of other scopes are absent from the map. A store may keep vectors normalised
   * to unit length; cosine similarity is unchanged by that.
   */
  getEmbeddings(scope: Scope, ids: readonly string[]): Promise<Map<string, Float32Array>>;

  /**
   * Restores exported beliefs verbatim (ids, versions, lifecycle, evidence, embeddings). Ids already present
   * are skipped, so a repeated import is a no-op. All-or-nothing; the one-active-per-key rule holds.
   */
  importBeliefs(records: readonly BeliefInsert[]): Promise<{ inserted: number; skipped: number }>;

  /**
   * Hard delete of everything of a user, in every namespace, in one transaction: beliefs, audit, outbox, transcripts
   * owned by the user, and (in a store that keeps them) recorded operation keys, capture grants and budget counters.
   */
  eraseUser(userId: string): Promise<EraseReceipt>;

  /**
   * Hard delete of one scope (`userId` + `namespace`) in one transaction: its beliefs in every status (episodes and
   * tombstones included) with their embeddings and index entries, its audit records and outbox entries (queued,
   * claimed, dead and done: a claim held on them is lost), and (in a store that keeps them) its recorded operation
   * keys and capture grants. Transcripts are not touched (`transcriptItems` is 0), nor is anything of another
   * namespace of the same user or of another user; budget counters, which are the user's across namespaces, stay.
   * An unknown scope erases nothing.
   */
  eraseScope(scope: Scope): Promise<EraseReceipt>;

  /** Every scope with beliefs, with counts by status. Sorted by userId, then namespace. */
  listScopes(): Promise<ScopeSummary[]>;

  /** Content-free audit records of a scope, oldest first. */
  auditLog(
    scope: Scope,
    options?: { readonly beliefId?: string; readonly limit?: number },
  ): Promise<AuditEvent[]>;

  /** Schema version, capabilities, dimensions and outbox backlog. */
  info(): Promise<StoreInfo>;

  /** Releases what the store opened. Objects passed in by the caller (pools, handles) stay open. Idempotent. */
  close(): Promise<void>;
}

/** A turn to accept together with a transcript append; its position is that of batch item `index`. */
export interface AppendEnqueue {
  /** Index of the item in the appended batch. */
  readonly index: number;
  readonly role: TurnRole;
  readonly text: string;
  readonly at: string;
  readonly ref?: string | undefined;
  /** The capture grant the turn is accepted under, as {@link OutboxInput.grantId}. */
  readonly grantId?: string | undefined;
}

export interface OutboxClaim {
  readonly claimId: string;
  readonly worker: string;
  readonly scope: Scope;
  /** Consecutive entries of one user, oldest first. */
  readonly entries: readonly OutboxEntry[];
  readonly leaseUntil: string;
}

export interface ClaimOptions {
  readonly worker: string;
  /** Lease length; an unfinished claim becomes claimable again after it, unless {@link WriteOutbox.renew}ed. */
  readonly leaseMs: number;
  /** Current time, ISO-8601 UTC. */
  readonly now: string;
  /** Only this user's entries. Without it, any user's (oldest accepted first). */
  readonly userId?: string | undefined;
  /** At most this many entries. Default 1. */
  readonly maxEntries?: number | undefined;
  /** Stop adding entries once their text exceeds this many characters (the first entry is always taken). */
  readonly maxChars?: number | undefined;
}

/**
 * Accepted turns waiting for extraction. Per user, entries are handed out strictly in acceptance order,
 * and at most one claim per user is in flight at a time (across processes, for a multi-process store).
 */
export interface WriteOutbox {
  /**
   * Accepts turns, atomically. The idempotency key is session id + position + content hash: an entry whose
   * key exists already is skipped (`duplicates`), so a retried batch converges.
   */
  enqueue(entries: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }>;

  /**
   * Claims the oldest queued entries of one user whose previous claim is not in flight: the oldest queued entry
   * of that user and following entries of the same scope and the same capture grant (`grantId`, or none), up to
   * `maxEntries`/`maxChars`. Entries under an
   * expired lease count as queued (their lease is taken over, and the old claim's commit will fail with
   * `LeaseLostError`); so do entries whose holder has exited, in a store with
   * {@link StoreCapabilities.ownerLiveness}. Entries waiting for a retry time (`fail`'s `retryAt`) block the user's
   * later entries until then. `dead` entries are skipped. Returns null when nothing is claimable.
   */
  claim(options: ClaimOptions): Promise<OutboxClaim | null>;

  /**
   * Extends a claim's lease to `now + leaseMs` (the heartbeat of a worker whose extraction outlasts a short lease).
   * Returns the new end of the lease. A claim holds its entries until another claim takes them over, `fail` or
   * `release` gives them back, or a commit completes them, even after its lease ran out: renewing then extends it
   * again. Throws `LeaseLostError`, changing nothing, when the claim no longer holds every one of its entries.
   */
  renew(
    claim: OutboxClaim,
    options: { readonly now: string; readonly leaseMs: number },
  ): Promise<{ readonly leaseUntil: string }>;

  /**
   * Gives the claim's entries back after a failed attempt: attempts + 1, `lastError` recorded, claimable
   * again from `retryAt` (default now). An entry reaching `maxAttempts` becomes `dead` and no longer blocks
   * the user. A no-op when the claim was already lost.
   */
  fail(
    claim: OutboxClaim,
    error: string,
    options: { readonly maxAttempts: number; readonly retryAt?: string | undefined },
  ): Promise<void>;

  /** Gives the claim's entries back without counting an attempt (e.g. a budget is spent), claimable from `retryAt`. */
  release(claim: OutboxClaim, options: { readonly retryAt: string; readonly reason: string }): Promise<void>;

  /**
   * Gives the claim's entries up without extraction (the engine drops turns whose capture grant ended): each becomes
   * `dead` at once, its text erased and `reason` (content-free, sanitised and shortened as `fail`'s error) recorded as
   * its `lastError`; attempts do not change. A no-op when the claim was already lost.
   */
  drop(claim: OutboxClaim, options: { readonly reason: string }): Promise<void>;

  /** Outbox backlog, of one user or all. `now` decides which leases are stale. */
  backlog(options: { readonly now: string; readonly userId?: string | undefined }): Promise<OutboxBacklog>;
}

/**
 * The raw Agents SDK items of each session, with positions. Items are stored as JSON and returned as copies.
 *
 * Every method names the session's owner: a session belongs to the scope (`userId` + `namespace`) of its first
 * owned append, and through any other scope it behaves as not found (no items, nothing popped or cleared; an append
 * is refused). A session written before owners were recorded has none, and is open to every scope until an append
 * records its owner.
 */
export interface TranscriptStore {
  /**
   * Appends items at the end of the session (positions continue after the current last one; the first item of
   * a session is 0) and, in the same transaction, enqueues `enqueue` turns into the outbox with the positions
   * of their items.
   *
   * - `owner`: the scope the session belongs to. Appending to a session of another scope throws
   *   `InvalidInputError('owner', ...)` and changes nothing.
   * - `items`: each a plain JSON object (`snapshotItem` of the store kit); anything else throws
   *   `InvalidInputError('items[i]', ...)` naming the index, never the content, and changes nothing.
   * - `operationId` (with `operationFingerprint`, e.g. a `stableJson` hash of the whole transaction): the id is
   *   recorded atomically with the change. Repeating an applied id with the same fingerprint is a no-op that
   *   returns the original positions with `duplicate: true`; with a different fingerprint it throws
   *   `InvalidInputError` and changes nothing. `clearSession` forgets recorded ids.
   * - `replaceSuffix`: the session's last `replaceSuffix.length` items must equal these (compared as
   *   {@link stableJson}); they are removed and `items` appended in their place. A mismatch throws
   *   `InvalidInputError('replaceSuffix', ...)` and changes nothing.
   */
  appendItems(
    owner: Scope,
    sessionId: string,
    items: readonly unknown[],
    options?: {
      readonly operationId?: string | undefined;
      readonly operationFingerprint?: string | undefined;
      readonly replaceSuffix?: readonly unknown[] | undefined;
      readonly enqueue?: readonly AppendEnqueue[] | undefined;
    },
  ): Promise<{ readonly positions: readonly number[]; readonly duplicate: boolean }>;

  /**
   * The newest `limit` items of `owner`'s session in chronological order; all items without `limit`; [] when
   * `limit <= 0`, and for a session of another scope.
   */
  getItems(owner: Scope, sessionId: string, limit?: number): Promise<unknown[]>;

  /**
   * Removes and returns the newest item of `owner`'s session; undefined for an empty or unknown session. Another
   * scope's session throws `InvalidInputError('owner', ...)` and changes nothing, as `appendItems` does.
   */
  popItem(owner: Scope, sessionId: string): Promise<unknown | undefined>;

  /**
   * Removes every item (and recorded operation id) of `owner`'s session; a no-op for an unknown session. Another
   * scope's session throws `InvalidInputError('owner', ...)` and changes nothing. Beliefs are not touched.
   */
  clearSession(owner: Scope, sessionId: string): Promise<void>;
}

/** The store the engine's pipeline runs on: beliefs and the outbox in one transactional database. */
export interface EngineStore extends BeliefStore, WriteOutbox {}

export interface ClearAllStore {
  /**
   * Hard delete of everything of every user, in one transaction: beliefs, audit, outbox, transcripts, operation keys,
   * capture grants and budget counters. The schema, settings (dimensions) and the store stay usable.
   */
  clearAll(): Promise<ClearAllReceipt>;
}

/**
 * A store that also keeps transcripts in the same database, operation keys, capture grants, budgets, access counts,
 * and can clear everything (all mem01 stores do). The engine runs on an `EngineStore`; a feature that needs more (an
 * operation key, a required grant, budgets, `clearAll`) fails with `CapabilityError` naming a store without it.
 */
export interface FullStore
  extends EngineStore,
    TranscriptStore,
    OperationJournal,
    CaptureGrantStore,
    BudgetStore,
    AccessStore,
    ClearAllStore {}
