import {
  type AppendEnqueue,
  type AuditEvent,
  assertId,
  assertStatuses,
  assertText,
  assertTimestamp,
  type Belief,
  type BeliefInsert,
  type BeliefStatus,
  type BeliefUpdate,
  CapabilityError,
  type ClaimOptions,
  ClosedError,
  type CommitRequest,
  contentHash,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  type EraseReceipt,
  type FullStore,
  forgetNeedles,
  InvalidInputError,
  idempotencyKey,
  isoNow,
  LeaseLostError,
  type LexicalHit,
  type ListOptions,
  mayContainNeedle,
  NotFoundError,
  newId,
  normalizeVector,
  type OutboxBacklog,
  type OutboxClaim,
  type OutboxEntry,
  type OutboxInput,
  type Page,
  redactTranscriptItem,
  type Scope,
  type ScopeSummary,
  type SearchOptions,
  type StoreCapabilities,
  StoreError,
  type StoreInfo,
  sanitize,
  stableJson,
  type TurnRole,
  typeOf,
  type VectorHit,
  VersionConflictError,
  validateAuditEvent,
  validateBelief,
  validateEmbedding,
  validateOutboxInput as validateOutboxInputShared,
  validateSearchOptions,
  validateUpdate,
} from '@mem01/engine';
import { LexicalIndex } from './lexical-index.js';
import {
  type CanonicalScope,
  canonicalOwner,
  canonicalScope,
  cloneBelief,
  cloneScope,
  MAX_TEXT_BYTES,
  scopeKey,
} from './records.js';
import { VectorIndex } from './vector-index.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Fixed embedding dimension. Without it, the first embedding written fixes it; every later embedding and query
   * vector must have the same length.
   */
  readonly dimensions?: number | undefined;
}

/** Schema version reported by {@link InMemoryStore.info}; the memory store has no persisted schema. */
export const MEMORY_SCHEMA_VERSION = 1;

const CAPABILITIES: StoreCapabilities = Object.freeze({
  vectorSearch: 'exact',
  vectorIndex: 'exact-cosine',
  lexicalIndex: 'inverted-bm25',
  durableOutbox: false,
  multiProcess: false,
});

/** One stored belief. `belief` is a private copy that is replaced, never mutated, on change. */
interface Row {
  belief: Belief;
  readonly scope: ScopeState;
}

interface ScopeState {
  readonly scope: CanonicalScope;
  readonly key: string;
  /** Ids in ascending order (ids are time-ordered, so appends are the common case). */
  readonly ids: string[];
  readonly counts: Record<BeliefStatus, number>;
  /** subject + attribute → id of the one active belief. */
  readonly active: Map<string, string>;
  readonly lexical: LexicalIndex<Row>;
  vectors: VectorIndex<Row> | null;
  readonly audit: AuditEvent[];
}

interface Entry {
  readonly id: string;
  readonly scope: CanonicalScope;
  readonly sessionId: string;
  readonly position: number;
  readonly role: TurnRole;
  text: string;
  readonly at: string;
  readonly ref: string | undefined;
  readonly idempotencyKey: string;
  readonly acceptedAt: string;
  readonly seq: number;
  attempts: number;
  status: OutboxEntry['status'];
  lastError: string | null;
  claimId: string | null;
  worker: string | null;
  leaseUntil: number;
  retryAt: number;
}

interface Session {
  /** The scope of the first append; it keeps the session when it is emptied or cleared. */
  readonly owner: CanonicalScope;
  items: string[];
  readonly operations: Map<string, { readonly fingerprint: string; readonly positions: readonly number[] }>;
}

const keyOf = (subject: string, attribute: string): string => `${subject}\u0000${attribute}`;

function emptyCounts(): Record<BeliefStatus, number> {
  return { active: 0, pending: 0, superseded: 0, retracted: 0, forgotten: 0 };
}

function indexedText(b: Belief): string {
  return `${b.statement}\n${b.value}\n${b.subject.replace(/_/g, ' ')}\n${b.attribute.replace(/[_:]/g, ' ')}`;
}

function compareIdDesc(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function ms(iso: string): number {
  return Date.parse(iso);
}

/** Keeps the `limit` best hits (score desc, then id desc) in a binary min-heap whose root is the worst kept hit. */
class TopK<T extends { id: string }> {
  private readonly heap: { item: T; score: number }[] = [];
  constructor(private readonly limit: number) {}

  /** Is `a` worse than `b`? Lower score, or the same score and a smaller id. */
  private static worse(
    a: { item: { id: string }; score: number },
    b: { item: { id: string }; score: number },
  ) {
    return a.score < b.score || (a.score === b.score && a.item.id < b.item.id);
  }

  offer(item: T, score: number): void {
    const heap = this.heap;
    if (this.limit <= 0) return;
    const entry = { item, score };
    if (heap.length < this.limit) {
      heap.push(entry);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
      return;
    }
    if (!TopK.worse(heap[0]!, entry)) return;
    heap[0] = entry;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && TopK.worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && TopK.worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }

  /** The kept hits, best first. */
  sorted(): { item: T; score: number }[] {
    return [...this.heap].sort((a, b) => (TopK.worse(a, b) ? 1 : TopK.worse(b, a) ? -1 : 0));
  }
}

function assertLimit(value: unknown, field: string, max = 10_000): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new InvalidInputError(field, `must be an integer between 0 and ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * Every mem01 port in process, with the semantics of a database store: records are copied in and out, commits are
 * validated completely before anything is applied (so they are atomic), and one scope never sees another's data.
 * Nothing is durable: the outbox and everything else are lost with the process.
 *
 * Lexical search is BM25 over a per-scope inverted index of stemmed, stop-word-free terms, maintained on every
 * commit and forget; vector search is exact cosine over the scope's unit-length embeddings.
 */
export class InMemoryStore implements FullStore {
  readonly name = 'memory';
  readonly capabilities: StoreCapabilities = CAPABILITIES;

  private dimensions: number | null;
  private closed = false;
  private readonly rows = new Map<string, Row>();
  private readonly scopes = new Map<string, ScopeState>();
  private readonly entries = new Map<string, Entry>();
  private readonly entriesByKey = new Map<string, Entry>();
  /** userId → every entry of the user, in acceptance order. */
  private readonly entriesByUser = new Map<string, Entry[]>();
  /** userId → queued and claimed entries of the user, in acceptance order. */
  private readonly liveByUser = new Map<string, Entry[]>();
  private seq = 0;
  private readonly sessions = new Map<string, Session>();

  constructor(options: MemoryStoreOptions = {}) {
    const d = options.dimensions;
    if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 1)) {
      throw new InvalidInputError('dimensions', `must be a positive integer, got ${String(d)}`);
    }
    this.dimensions = d ?? null;
  }

  // ---------------------------------------------------------------- beliefs

  async commit(request: CommitRequest): Promise<void> {
    this.assertOpen();
    if (request === null || typeof request !== 'object')
      throw new InvalidInputError('request', 'must be an object');
    const scope = canonicalScope(request.scope);
    const sk = scopeKey(scope);
    const inserts = this.validateInserts(request.inserts, 'inserts');
    for (const [i, ins] of inserts.entries()) {
      if (scopeKey(ins.belief.scope as CanonicalScope) !== sk) {
        throw new InvalidInputError(`inserts[${i}].belief.scope`, 'must equal the request scope');
      }
    }
    if (!Array.isArray(request.updates)) throw new InvalidInputError('updates', 'must be an array');
    if (!Array.isArray(request.audit)) throw new InvalidInputError('audit', 'must be an array');
    const audit = request.audit.map((a, i) => {
      const event = validateAuditEvent(a, `audit[${i}]`);
      if (scopeKey(event.scope as CanonicalScope) !== sk) {
        throw new InvalidInputError(`audit[${i}].scope`, 'must equal the request scope');
      }
      return event;
    });

    // Updates apply first (as a database applies them before inserting), each against the running state.
    const next = new Map<string, Belief>();
    request.updates.forEach((value: BeliefUpdate, i) => {
      const u = validateUpdate(value, `updates[${i}]`, MAX_TEXT_BYTES);
      const patch = u.set;
      const row = this.rows.get(u.id);
      if (!row || row.scope.key !== sk) throw new NotFoundError(`belief ${u.id}`);
      const current = next.get(u.id) ?? row.belief;
      if (current.version !== u.expectedVersion) {
        throw new VersionConflictError(u.id, u.expectedVersion, current.version);
      }
      if (current.status === 'forgotten') {
        throw new InvalidInputError(`updates[${i}]`, `belief ${u.id} is forgotten and can no longer change`);
      }
      next.set(u.id, { ...current, ...patch, version: current.version + 1 });
    });

    const seen = new Set<string>();
    for (const ins of inserts) {
      if (this.rows.has(ins.belief.id) || seen.has(ins.belief.id)) {
        throw new StoreError(`commit refused: belief id ${ins.belief.id} already exists`);
      }
      seen.add(ins.belief.id);
    }
    this.checkDimensions(inserts);
    this.checkActiveUnique(
      sk,
      [...next.values()].map((b) => ({ before: this.rows.get(b.id)!.belief, after: b })),
      inserts.map((i) => i.belief),
    );
    const completed = this.heldEntries(request.complete);

    // Everything is valid: apply. Nothing below can throw.
    const state = this.scopeState(scope);
    for (const b of next.values()) this.replaceBelief(this.rows.get(b.id)!, b);
    for (const ins of inserts) this.insertRow(state, ins.belief, ins.embedding);
    state.audit.push(...audit);
    for (const e of completed) this.finishEntry(e, 'done');
  }

  async get(scope: Scope, id: string): Promise<Belief | null> {
    this.assertOpen();
    const sk = scopeKey(canonicalScope(scope));
    assertId(id, 'id');
    const row = this.rows.get(id);
    return row && row.scope.key === sk ? cloneBelief(row.belief) : null;
  }

  async getEmbeddings(scope: Scope, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    this.assertOpen();
    const sk = scopeKey(canonicalScope(scope));
    if (!Array.isArray(ids)) throw new InvalidInputError('ids', 'must be an array');
    const out = new Map<string, Float32Array>();
    for (const [i, id] of ids.entries()) {
      assertId(id, `ids[${i}]`);
      const row = this.rows.get(id);
      if (!row || row.scope.key !== sk) continue;
      const v = row.scope.vectors?.get(row) ?? null;
      if (v) out.set(id, v);
    }
    return out;
  }

  async getActiveByKeys(
    scope: Scope,
    keys: readonly { readonly subject: string; readonly attribute: string }[],
  ): Promise<Belief[]> {
    this.assertOpen();
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    if (!Array.isArray(keys)) throw new InvalidInputError('keys', 'must be an array');
    keys.forEach((k, i) => {
      if (k === null || typeof k !== 'object') throw new InvalidInputError(`keys[${i}]`, 'must be an object');
      assertText(k.subject, `keys[${i}].subject`, 256, true);
      assertText(k.attribute, `keys[${i}].attribute`, 256, true);
    });
    if (!state) return [];
    const ids = new Set<string>();
    for (const k of keys) {
      const id = state.active.get(keyOf(k.subject, k.attribute));
      if (id !== undefined) ids.add(id);
    }
    return [...ids]
      .map((id) => this.rows.get(id)!.belief)
      .sort(compareIdDesc)
      .map(cloneBelief);
  }

  async list(scope: Scope, options: ListOptions = {}): Promise<Page<Belief>> {
    this.assertOpen();
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    const statuses = new Set(assertStatuses(options.statuses, 'statuses'));
    const limit = options.limit === undefined ? 100 : assertLimit(options.limit, 'limit', 1000);
    if (limit < 1) throw new InvalidInputError('limit', 'must be between 1 and 1000');
    let before: string | null = null;
    if (options.cursor !== undefined && options.cursor !== null) {
      before = decodeCursor(options.cursor);
    }
    if (!state) return { items: [], nextCursor: null };
    const ids = state.ids;
    let i = ids.length - 1;
    if (before !== null) i = lowerBound(ids, before) - 1;
    const items: Belief[] = [];
    let nextCursor: string | null = null;
    for (; i >= 0; i--) {
      const b = this.rows.get(ids[i]!)!.belief;
      if (!statuses.has(b.status)) continue;
      if (items.length === limit) {
        nextCursor = encodeCursor(items[items.length - 1]!.id);
        break;
      }
      items.push(cloneBelief(b));
    }
    return { items, nextCursor };
  }

  async searchLexical(scope: Scope, query: string, options: SearchOptions): Promise<LexicalHit[]> {
    this.assertOpen();
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    if (typeof query !== 'string')
      throw new InvalidInputError('query', `must be a string, got ${typeOf(query)}`);
    const { limit, statuses } = this.searchOptions(options);
    if (!state || limit === 0) return [];
    const top = new TopK<Belief>(limit);
    state.lexical.score(
      query,
      limit,
      (row) => statuses.has(row.belief.status),
      (row, score) => top.offer(row.belief, score),
    );
    return top.sorted().map(({ item, score }) => ({ belief: cloneBelief(item), score }));
  }

  async searchVector(scope: Scope, vector: Float32Array, options: SearchOptions): Promise<VectorHit[]> {
    this.assertOpen();
    if (this.capabilities.vectorSearch === 'none') throw new CapabilityError(this.name, 'vector search');
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    const query = validateEmbedding(vector, 'vector');
    if (query === null) throw new InvalidInputError('vector', 'must be a Float32Array');
    if (this.dimensions !== null && query.length !== this.dimensions) {
      throw new DimensionMismatchError(this.dimensions, query.length, 'query vector');
    }
    const { limit, statuses } = this.searchOptions(options);
    if (!state?.vectors || limit === 0) return [];
    const unit = normalizeVector(query);
    const top = new TopK<Belief>(limit);
    state.vectors.scan(
      unit,
      (row) => statuses.has(row.belief.status),
      (row, score) => top.offer(row.belief, Math.max(-1, Math.min(1, score))),
    );
    return top.sorted().map(({ item, score }) => ({ belief: cloneBelief(item), score }));
  }

  async history(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<Belief[]> {
    this.assertOpen();
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    if (options.id !== undefined) assertId(options.id, 'id');
    if (!state) return [];
    let rows: Belief[];
    if (options.id === undefined) {
      rows = state.ids.map((id) => this.rows.get(id)!.belief);
    } else {
      const start = this.rows.get(options.id);
      if (!start || start.scope !== state) return [];
      // Reverse links too, so a chain is found even if only one side of a link was recorded.
      const bySupersedes = new Map<string, string[]>();
      for (const id of state.ids) {
        const s = this.rows.get(id)!.belief.supersedes;
        if (s !== null) bySupersedes.set(s, [...(bySupersedes.get(s) ?? []), id]);
      }
      const found = new Map<string, Belief>();
      const todo = [options.id];
      while (todo.length > 0) {
        const id = todo.pop()!;
        if (found.has(id)) continue;
        const row = this.rows.get(id);
        if (!row || row.scope !== state) continue;
        found.set(id, row.belief);
        if (row.belief.supersedes !== null) todo.push(row.belief.supersedes);
        if (row.belief.supersededBy !== null) todo.push(row.belief.supersededBy);
        todo.push(...(bySupersedes.get(id) ?? []));
      }
      rows = [...found.values()];
    }
    return rows
      .sort((a, b) =>
        a.storedAt === b.storedAt
          ? a.id < b.id
            ? -1
            : a.id > b.id
              ? 1
              : 0
          : ms(a.storedAt) - ms(b.storedAt),
      )
      .map(cloneBelief);
  }

  async forget(
    scope: Scope,
    id: string,
    options: { readonly at: string; readonly expectedVersion?: number | undefined },
  ): Promise<Belief> {
    this.assertOpen();
    const sk = scopeKey(canonicalScope(scope));
    assertId(id, 'id');
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    assertTimestamp(options.at, 'at');
    if (options.expectedVersion !== undefined && !Number.isInteger(options.expectedVersion)) {
      throw new InvalidInputError(
        'expectedVersion',
        `must be an integer, got ${String(options.expectedVersion)}`,
      );
    }
    const row = this.rows.get(id);
    if (!row || row.scope.key !== sk) throw new NotFoundError(`belief ${id}`);
    const b = row.belief;
    if (b.status === 'forgotten') return cloneBelief(b);
    if (options.expectedVersion !== undefined && options.expectedVersion !== b.version) {
      throw new VersionConflictError(id, options.expectedVersion, b.version);
    }
    // The turns this belief came from are erased from the outbox too.
    const turns = new Set(b.evidence.map((e) => `${e.sessionId}\u0000${e.position}`));
    for (const e of this.entriesByUser.get(row.scope.scope.userId) ?? []) {
      if (turns.has(`${e.sessionId}\u0000${e.position}`)) e.text = '';
    }
    this.redactTranscripts(row.scope.scope.userId, b);
    const tombstone: Belief = {
      ...b,
      subject: '',
      attribute: '',
      value: '',
      statement: '',
      evidence: [],
      status: 'forgotten',
      invalidatedAt: options.at,
      updatedAt: options.at,
      version: b.version + 1,
    };
    this.replaceBelief(row, tombstone);
    return cloneBelief(tombstone);
  }

  /** The engine's forget policy for transcripts ({@link redactTranscriptItem}): evidence turns lose their text,
   * the user's other items each occurrence of the belief's value and statement. Sessions of other users are never
   * touched. */
  private redactTranscripts(userId: string, b: Belief): void {
    const needles = forgetNeedles(b);
    const evidence = new Map<string, number[]>();
    for (const e of b.evidence) push(evidence, e.sessionId, e.position);
    for (const [id, session] of this.sessions) {
      if (session.owner.userId !== userId) continue;
      const whole = new Set(evidence.get(id) ?? []);
      session.items = session.items.map((text, position) => {
        const isEvidence = whole.has(position);
        if (!isEvidence && !mayContainNeedle(text, needles)) return text;
        const next = redactTranscriptItem(JSON.parse(text) as unknown, { whole: isEvidence, needles });
        return next === null ? text : JSON.stringify(next);
      });
    }
  }

  async importBeliefs(records: readonly BeliefInsert[]): Promise<{ inserted: number; skipped: number }> {
    this.assertOpen();
    const all = this.validateInserts(records, 'records');
    const fresh: (typeof all)[number][] = [];
    const seen = new Set<string>();
    for (const r of all) {
      if (this.rows.has(r.belief.id) || seen.has(r.belief.id)) continue;
      seen.add(r.belief.id);
      fresh.push(r);
    }
    this.checkDimensions(fresh);
    const byScope = new Map<string, Belief[]>();
    for (const r of fresh) {
      const sk = scopeKey(r.belief.scope as CanonicalScope);
      byScope.set(sk, [...(byScope.get(sk) ?? []), r.belief]);
    }
    for (const [sk, beliefs] of byScope) this.checkActiveUnique(sk, [], beliefs);
    for (const r of fresh)
      this.insertRow(this.scopeState(r.belief.scope as CanonicalScope), r.belief, r.embedding);
    return { inserted: fresh.length, skipped: all.length - fresh.length };
  }

  async eraseUser(userId: string): Promise<EraseReceipt> {
    this.assertOpen();
    assertId(userId, 'userId');
    let beliefs = 0;
    let auditEvents = 0;
    for (const [key, state] of this.scopes) {
      if (state.scope.userId !== userId) continue;
      for (const id of state.ids) this.rows.delete(id);
      beliefs += state.ids.length;
      auditEvents += state.audit.length;
      this.scopes.delete(key);
    }
    const entries = this.entriesByUser.get(userId) ?? [];
    for (const e of entries) {
      this.entries.delete(e.id);
      this.entriesByKey.delete(e.idempotencyKey);
    }
    this.entriesByUser.delete(userId);
    this.liveByUser.delete(userId);
    let transcriptItems = 0;
    for (const [id, session] of this.sessions) {
      if (session.owner.userId !== userId) continue;
      transcriptItems += session.items.length;
      this.sessions.delete(id);
    }
    return { beliefs, outboxEntries: entries.length, transcriptItems, auditEvents };
  }

  async listScopes(): Promise<ScopeSummary[]> {
    this.assertOpen();
    return [...this.scopes.values()]
      .filter((s) => s.ids.length > 0)
      .sort((a, b) =>
        a.scope.userId === b.scope.userId
          ? cmp(a.scope.namespace, b.scope.namespace)
          : cmp(a.scope.userId, b.scope.userId),
      )
      .map((s) => ({ scope: cloneScope(s.scope), counts: { ...s.counts } }));
  }

  async auditLog(
    scope: Scope,
    options: { readonly beliefId?: string; readonly limit?: number } = {},
  ): Promise<AuditEvent[]> {
    this.assertOpen();
    const state = this.scopes.get(scopeKey(canonicalScope(scope)));
    if (options.beliefId !== undefined) assertId(options.beliefId, 'beliefId');
    const limit =
      options.limit === undefined ? Number.POSITIVE_INFINITY : assertLimit(options.limit, 'limit', 1e9);
    if (!state) return [];
    const out: AuditEvent[] = [];
    for (const a of state.audit) {
      if (out.length >= limit) break;
      if (options.beliefId !== undefined && a.beliefId !== options.beliefId) continue;
      out.push({ ...a, scope: cloneScope(a.scope) });
    }
    return out;
  }

  async info(): Promise<StoreInfo> {
    this.assertOpen();
    return {
      name: this.name,
      schemaVersion: MEMORY_SCHEMA_VERSION,
      capabilities: this.capabilities,
      dimensions: this.dimensions,
      outbox: this.countBacklog(Date.now(), undefined),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  // ---------------------------------------------------------------- outbox

  async enqueue(inputs: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }> {
    this.assertOpen();
    if (!Array.isArray(inputs)) throw new InvalidInputError('entries', 'must be an array');
    const valid = inputs.map((e, i) => validateOutboxInput(e, `entries[${i}]`));
    return this.acceptEntries(valid);
  }

  async claim(options: ClaimOptions): Promise<OutboxClaim | null> {
    this.assertOpen();
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    assertId(options.worker, 'worker');
    if (typeof options.leaseMs !== 'number' || !Number.isFinite(options.leaseMs) || options.leaseMs <= 0) {
      throw new InvalidInputError('leaseMs', `must be a positive number, got ${String(options.leaseMs)}`);
    }
    assertTimestamp(options.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    const maxEntries =
      options.maxEntries === undefined ? 1 : assertLimit(options.maxEntries, 'maxEntries', 1e6);
    if (maxEntries < 1) throw new InvalidInputError('maxEntries', 'must be at least 1');
    if (
      options.maxChars !== undefined &&
      (typeof options.maxChars !== 'number' || Number.isNaN(options.maxChars) || options.maxChars < 0)
    ) {
      throw new InvalidInputError(
        'maxChars',
        `must be a non-negative number, got ${String(options.maxChars)}`,
      );
    }
    const now = ms(options.now);

    let chosen: Entry[] | null = null;
    if (options.userId !== undefined) {
      chosen = this.claimableHead(options.userId, now);
    } else {
      let best: Entry[] | null = null;
      for (const userId of this.liveByUser.keys()) {
        const live = this.claimableHead(userId, now);
        if (live && (best === null || live[0]!.seq < best[0]!.seq)) best = live;
      }
      chosen = best;
    }
    if (!chosen) return null;

    // Expired leases of this user are taken over as a whole: their old claims are lost.
    for (const e of chosen) {
      if (e.status === 'claimed') {
        e.status = 'queued';
        e.claimId = null;
        e.worker = null;
      }
    }
    const head = chosen[0]!;
    const batch: Entry[] = [head];
    let chars = head.text.length;
    for (const e of chosen.slice(1)) {
      if (batch.length >= maxEntries) break;
      if (e.scope.namespace !== head.scope.namespace || e.retryAt > now) break;
      if (options.maxChars !== undefined && chars + e.text.length > options.maxChars) break;
      chars += e.text.length;
      batch.push(e);
    }
    const claimId = newId();
    const leaseUntil = now + options.leaseMs;
    for (const e of batch) {
      e.status = 'claimed';
      e.claimId = claimId;
      e.worker = options.worker;
      e.leaseUntil = leaseUntil;
    }
    return {
      claimId,
      worker: options.worker,
      scope: cloneScope(head.scope),
      entries: batch.map(entryView),
      leaseUntil: new Date(leaseUntil).toISOString(),
    };
  }

  async fail(
    claim: OutboxClaim,
    error: string,
    options: { readonly maxAttempts: number; readonly retryAt?: string | undefined },
  ): Promise<void> {
    this.assertOpen();
    const held = this.claimedBy(claim);
    if (typeof error !== 'string')
      throw new InvalidInputError('error', `must be a string, got ${typeOf(error)}`);
    if (
      typeof options?.maxAttempts !== 'number' ||
      !Number.isInteger(options.maxAttempts) ||
      options.maxAttempts < 1
    ) {
      throw new InvalidInputError(
        'maxAttempts',
        `must be a positive integer, got ${String(options?.maxAttempts)}`,
      );
    }
    if (options.retryAt !== undefined) assertTimestamp(options.retryAt, 'retryAt');
    if (!held) return;
    const lastError = sanitize(error).slice(0, 2000);
    for (const e of held) {
      e.attempts += 1;
      e.lastError = lastError;
      if (e.attempts >= options.maxAttempts) {
        this.finishEntry(e, 'dead');
      } else {
        this.requeue(e, options.retryAt === undefined ? 0 : ms(options.retryAt));
      }
    }
  }

  async release(
    claim: OutboxClaim,
    options: { readonly retryAt: string; readonly reason: string },
  ): Promise<void> {
    this.assertOpen();
    const held = this.claimedBy(claim);
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    assertTimestamp(options.retryAt, 'retryAt');
    if (!held) return;
    for (const e of held) this.requeue(e, ms(options.retryAt));
  }

  async backlog(options: {
    readonly now: string;
    readonly userId?: string | undefined;
  }): Promise<OutboxBacklog> {
    this.assertOpen();
    assertTimestamp(options?.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    return this.countBacklog(ms(options.now), options.userId);
  }

  // ---------------------------------------------------------------- transcripts

  async appendItems(
    owner: Scope,
    sessionId: string,
    items: readonly unknown[],
    options: {
      readonly operationId?: string | undefined;
      readonly operationFingerprint?: string | undefined;
      readonly replaceSuffix?: readonly unknown[] | undefined;
      readonly enqueue?: readonly AppendEnqueue[] | undefined;
    } = {},
  ): Promise<{ readonly positions: readonly number[]; readonly duplicate: boolean }> {
    this.assertOpen();
    const scope = canonicalOwner(owner);
    assertId(sessionId, 'sessionId');
    if (!Array.isArray(items)) throw new InvalidInputError('items', `must be an array, got ${typeOf(items)}`);
    const serialized = items.map((item, i) => serializeItem(item, `items[${i}]`));
    if (options.operationId !== undefined) assertId(options.operationId, 'operationId');
    if (options.operationFingerprint !== undefined) {
      assertText(options.operationFingerprint, 'operationFingerprint', 4096);
    }
    if (options.replaceSuffix !== undefined && !Array.isArray(options.replaceSuffix)) {
      throw new InvalidInputError('replaceSuffix', 'must be an array');
    }
    const enqueue = options.enqueue ?? [];
    if (!Array.isArray(enqueue)) throw new InvalidInputError('enqueue', 'must be an array');
    enqueue.forEach((e, i) => {
      if (e === null || typeof e !== 'object')
        throw new InvalidInputError(`enqueue[${i}]`, 'must be an object');
      if (!Number.isInteger(e.index) || e.index < 0 || e.index >= items.length) {
        throw new InvalidInputError(
          `enqueue[${i}].index`,
          `must index the appended items, got ${String(e.index)}`,
        );
      }
    });

    const session = this.sessions.get(sessionId);
    if (session && scopeKey(session.owner) !== scopeKey(scope)) {
      throw new InvalidInputError('owner', 'the session belongs to another scope');
    }
    const fingerprint =
      options.operationFingerprint ??
      contentHash(stableJson({ items, replaceSuffix: options.replaceSuffix ?? null, enqueue, owner: scope }));
    if (options.operationId !== undefined) {
      const done = session?.operations.get(options.operationId);
      if (done) {
        if (done.fingerprint !== fingerprint) {
          throw new InvalidInputError('operationId', 'was already applied with a different operation');
        }
        return { positions: [...done.positions], duplicate: true };
      }
    }
    const current = session?.items ?? [];
    let keep = current.length;
    if (options.replaceSuffix !== undefined) {
      const suffix = options.replaceSuffix;
      const ok =
        suffix.length <= current.length &&
        suffix.every(
          (item, i) =>
            stableJson(JSON.parse(current[current.length - suffix.length + i]!) as unknown) ===
            stableJson(item),
        );
      if (!ok) throw new InvalidInputError('replaceSuffix', 'does not match the end of the session');
      keep = current.length - suffix.length;
    }
    const positions = serialized.map((_, i) => keep + i);
    const turns = enqueue.map((e, i) =>
      validateOutboxInput(
        {
          scope,
          sessionId,
          position: positions[e.index]!,
          role: e.role,
          text: e.text,
          at: e.at,
          ref: e.ref,
        },
        `enqueue[${i}]`,
      ),
    );

    // Valid: apply.
    const target: Session = session ?? { owner: scope, items: [], operations: new Map() };
    if (!session) this.sessions.set(sessionId, target);
    target.items.length = keep;
    target.items.push(...serialized);
    if (options.operationId !== undefined)
      target.operations.set(options.operationId, { fingerprint, positions });
    this.acceptEntries(turns);
    return { positions: [...positions], duplicate: false };
  }

  async getItems(owner: Scope, sessionId: string, limit?: number): Promise<unknown[]> {
    this.assertOpen();
    const session = this.ownedSession(owner, sessionId);
    if (limit !== undefined && (typeof limit !== 'number' || Number.isNaN(limit))) {
      throw new InvalidInputError('limit', `must be a number, got ${typeOf(limit)}`);
    }
    const items = session?.items ?? [];
    if (limit !== undefined && limit <= 0) return [];
    const from = limit === undefined ? 0 : Math.max(0, items.length - Math.floor(limit));
    return items.slice(from).map((s) => JSON.parse(s) as unknown);
  }

  async popItem(owner: Scope, sessionId: string): Promise<unknown | undefined> {
    this.assertOpen();
    const last = this.ownedSession(owner, sessionId)?.items.pop();
    return last === undefined ? undefined : (JSON.parse(last) as unknown);
  }

  async clearSession(owner: Scope, sessionId: string): Promise<void> {
    this.assertOpen();
    const session = this.ownedSession(owner, sessionId);
    if (!session) return;
    session.items = [];
    session.operations.clear();
  }

  /** The session when `owner` owns it; undefined when it does not exist or belongs to another scope. */
  private ownedSession(owner: Scope, sessionId: string): Session | undefined {
    const scope = canonicalOwner(owner);
    assertId(sessionId, 'sessionId');
    const session = this.sessions.get(sessionId);
    return session && scopeKey(session.owner) === scopeKey(scope) ? session : undefined;
  }

  // ---------------------------------------------------------------- internals

  private assertOpen(): void {
    if (this.closed) throw new ClosedError('memory store');
  }

  private searchOptions(options: SearchOptions): { limit: number; statuses: ReadonlySet<BeliefStatus> } {
    const { limit, statuses } = validateSearchOptions(options);
    return { limit, statuses: new Set(statuses) };
  }

  private validateInserts(
    records: unknown,
    field: string,
  ): { belief: Belief; embedding: Float32Array | null }[] {
    if (!Array.isArray(records))
      throw new InvalidInputError(field, `must be an array, got ${typeOf(records)}`);
    return records.map((r: unknown, i) => {
      if (r === null || typeof r !== 'object')
        throw new InvalidInputError(`${field}[${i}]`, 'must be an object');
      const rec = r as BeliefInsert;
      return {
        belief: validateBelief(rec.belief, `${field}[${i}].belief`, MAX_TEXT_BYTES),
        embedding: validateEmbedding(rec.embedding, `${field}[${i}].embedding`),
      };
    });
  }

  private checkDimensions(records: readonly { embedding: Float32Array | null }[]): void {
    let dims = this.dimensions;
    for (const r of records) {
      if (r.embedding === null) continue;
      if (dims === null) dims = r.embedding.length;
      else if (r.embedding.length !== dims) throw new DimensionMismatchError(dims, r.embedding.length);
    }
  }

  /**
   * Refuses a change that would leave two active beliefs on one subject + attribute of scope `sk`.
   * `updated` are the before/after states of changed beliefs, `inserted` the new ones.
   */
  private checkActiveUnique(
    sk: string,
    updated: readonly { before: Belief; after: Belief }[],
    inserted: readonly Belief[],
  ): void {
    const state = this.scopes.get(sk);
    const delta = new Map<string, Set<string>>();
    const holder = (key: string): Set<string> => {
      let set = delta.get(key);
      if (!set) {
        const current = state?.active.get(key);
        set = new Set(current === undefined ? [] : [current]);
        delta.set(key, set);
      }
      return set;
    };
    for (const { before } of updated) {
      if (before.status === 'active') holder(keyOf(before.subject, before.attribute)).delete(before.id);
    }
    for (const { after } of updated) {
      if (after.status !== 'active') continue;
      const set = holder(keyOf(after.subject, after.attribute));
      set.add(after.id);
      if (set.size > 1) throw new DuplicateActiveBeliefError(after.subject, after.attribute);
    }
    for (const b of inserted) {
      if (b.status !== 'active') continue;
      const set = holder(keyOf(b.subject, b.attribute));
      set.add(b.id);
      if (set.size > 1) throw new DuplicateActiveBeliefError(b.subject, b.attribute);
    }
  }

  private heldEntries(complete: CommitRequest['complete']): Entry[] {
    if (complete === undefined) return [];
    if (complete === null || typeof complete !== 'object')
      throw new InvalidInputError('complete', 'must be an object');
    assertId(complete.claimId, 'complete.claimId');
    if (!Array.isArray(complete.entryIds))
      throw new InvalidInputError('complete.entryIds', 'must be an array');
    return complete.entryIds.map((id, i) => {
      assertId(id, `complete.entryIds[${i}]`);
      const e = this.entries.get(id);
      if (e?.status !== 'claimed' || e.claimId !== complete.claimId) throw new LeaseLostError();
      return e;
    });
  }

  private scopeState(scope: CanonicalScope): ScopeState {
    const key = scopeKey(scope);
    let state = this.scopes.get(key);
    if (!state) {
      state = {
        scope: cloneScope(scope),
        key,
        ids: [],
        counts: emptyCounts(),
        active: new Map(),
        lexical: new LexicalIndex<Row>(),
        vectors: null,
        audit: [],
      };
      this.scopes.set(key, state);
    }
    return state;
  }

  private insertRow(state: ScopeState, belief: Belief, embedding: Float32Array | null): void {
    const row: Row = { belief, scope: state };
    this.rows.set(belief.id, row);
    const ids = state.ids;
    if (ids.length === 0 || ids[ids.length - 1]! < belief.id) ids.push(belief.id);
    else ids.splice(lowerBound(ids, belief.id), 0, belief.id);
    state.counts[belief.status] += 1;
    if (belief.status === 'active') state.active.set(keyOf(belief.subject, belief.attribute), belief.id);
    if (belief.status === 'forgotten') return;
    state.lexical.add(row, indexedText(belief));
    if (embedding !== null) {
      if (this.dimensions === null) this.dimensions = embedding.length;
      state.vectors ??= new VectorIndex<Row>(this.dimensions);
      state.vectors.set(row, normalizeVector(embedding));
    }
  }

  private replaceBelief(row: Row, next: Belief): void {
    const state = row.scope;
    const prev = row.belief;
    state.counts[prev.status] -= 1;
    state.counts[next.status] += 1;
    const key = keyOf(prev.subject, prev.attribute);
    if (prev.status === 'active' && state.active.get(key) === prev.id) state.active.delete(key);
    if (next.status === 'active') state.active.set(keyOf(next.subject, next.attribute), next.id);
    if (next.status === 'forgotten') {
      state.lexical.remove(row);
      state.vectors?.remove(row);
    }
    row.belief = next;
  }

  private acceptEntries(inputs: readonly ValidOutboxInput[]): { accepted: number; duplicates: number } {
    let accepted = 0;
    const acceptedAt = isoNow();
    for (const input of inputs) {
      const key = idempotencyKey(input.sessionId, input.position, input.text);
      if (this.entriesByKey.has(key)) continue;
      const entry: Entry = {
        id: newId(),
        scope: input.scope,
        sessionId: input.sessionId,
        position: input.position,
        role: input.role,
        text: input.text,
        at: input.at,
        ref: input.ref,
        idempotencyKey: key,
        acceptedAt,
        seq: ++this.seq,
        attempts: 0,
        status: 'queued',
        lastError: null,
        claimId: null,
        worker: null,
        leaseUntil: 0,
        retryAt: 0,
      };
      this.entries.set(entry.id, entry);
      this.entriesByKey.set(key, entry);
      push(this.entriesByUser, input.scope.userId, entry);
      push(this.liveByUser, input.scope.userId, entry);
      accepted++;
    }
    return { accepted, duplicates: inputs.length - accepted };
  }

  /** The user's live entries when the user has nothing in flight and its oldest entry is due; else null. */
  private claimableHead(userId: string, now: number): Entry[] | null {
    const live = this.liveByUser.get(userId);
    if (!live || live.length === 0) return null;
    for (const e of live) if (e.status === 'claimed' && e.leaseUntil > now) return null;
    if (live[0]!.retryAt > now) return null;
    return live;
  }

  private claimedBy(claim: OutboxClaim): Entry[] | null {
    if (claim === null || typeof claim !== 'object')
      throw new InvalidInputError('claim', 'must be an object');
    assertId(claim.claimId, 'claim.claimId');
    if (!Array.isArray(claim.entries)) throw new InvalidInputError('claim.entries', 'must be an array');
    const held: Entry[] = [];
    for (const c of claim.entries) {
      const e = this.entries.get(c?.id);
      if (e?.status !== 'claimed' || e.claimId !== claim.claimId) return null;
      held.push(e);
    }
    return held;
  }

  private requeue(e: Entry, retryAt: number): void {
    e.status = 'queued';
    e.claimId = null;
    e.worker = null;
    e.retryAt = retryAt;
  }

  private finishEntry(e: Entry, status: 'done' | 'dead'): void {
    e.status = status;
    e.claimId = null;
    e.worker = null;
    if (status === 'done') e.text = '';
    const live = this.liveByUser.get(e.scope.userId);
    if (!live) return;
    const i = live.indexOf(e);
    if (i >= 0) live.splice(i, 1);
    if (live.length === 0) this.liveByUser.delete(e.scope.userId);
  }

  private countBacklog(now: number, userId: string | undefined): OutboxBacklog {
    let queued = 0;
    let claimed = 0;
    let dead = 0;
    let staleLeases = 0;
    let next = Number.POSITIVE_INFINITY;
    const lists =
      userId === undefined ? [...this.entriesByUser.values()] : [this.entriesByUser.get(userId) ?? []];
    for (const list of lists) {
      for (const e of list) {
        if (e.status === 'queued') {
          queued++;
          if (e.retryAt > now) next = Math.min(next, e.retryAt);
        } else if (e.status === 'dead') dead++;
        else if (e.status === 'claimed') {
          claimed++;
          if (e.leaseUntil <= now) staleLeases++;
          else next = Math.min(next, e.leaseUntil);
        }
      }
    }
    const nextClaimableAt = next === Number.POSITIVE_INFINITY ? null : new Date(next).toISOString();
    return { queued, claimed, dead, staleLeases, nextClaimableAt };
  }
}

interface ValidOutboxInput extends OutboxInput {
  readonly scope: CanonicalScope;
}

function validateOutboxInput(value: unknown, field: string): ValidOutboxInput {
  return validateOutboxInputShared(value, field, MAX_TEXT_BYTES) as ValidOutboxInput;
}

function entryView(e: Entry): OutboxEntry {
  return {
    id: e.id,
    scope: cloneScope(e.scope),
    sessionId: e.sessionId,
    position: e.position,
    role: e.role,
    text: e.text,
    at: e.at,
    ...(e.ref === undefined ? {} : { ref: e.ref }),
    idempotencyKey: e.idempotencyKey,
    acceptedAt: e.acceptedAt,
    seq: e.seq,
    attempts: e.attempts,
    status: e.status,
    lastError: e.lastError,
  };
}

function serializeItem(item: unknown, field: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(item);
  } catch (err) {
    throw new InvalidInputError(field, 'must be JSON-serializable', { cause: err });
  }
  if (json === undefined)
    throw new InvalidInputError(field, `must be JSON-serializable, got ${typeOf(item)}`);
  return json;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** First index whose id is >= `id` in an ascending array. */
function lowerBound(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ before: id }), 'utf8').toString('base64url');
}

function decodeCursor(cursor: unknown): string {
  if (typeof cursor !== 'string')
    throw new InvalidInputError('cursor', `must be a string, got ${typeOf(cursor)}`);
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { before?: unknown };
    assertId(parsed.before, 'cursor');
    return parsed.before;
  } catch {
    throw new InvalidInputError('cursor', 'is not a cursor returned by list()');
  }
}

/** Creates an empty in-memory store. */
export function createMemoryStore(options: MemoryStoreOptions = {}): InMemoryStore {
  return new InMemoryStore(options);
}
