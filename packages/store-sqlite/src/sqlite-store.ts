import { randomUUID } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import {
  type AppendEnqueue,
  type AuditEvent,
  assertId,
  assertPositiveInteger as assertPositiveInt,
  assertRole,
  assertStatuses,
  assertText,
  assertTimestamp,
  assertTimestampOrNull,
  BELIEF_STATUSES,
  type Belief,
  type BeliefInsert,
  type BeliefPatch,
  type BeliefStatus,
  bytesToVector,
  CapabilityError,
  type ClaimOptions,
  ClosedError,
  type CommitRequest,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  describeError,
  type EraseReceipt,
  type FullStore,
  forgetNeedles,
  InvalidInputError,
  idempotencyKey,
  isoNow,
  LeaseLostError,
  type LexicalHit,
  type ListOptions,
  type Logger,
  MAX_REF_BYTES,
  Mem01Error,
  NotFoundError,
  newId,
  normalizeScope,
  normalizeVector,
  type OutboxBacklog,
  type OutboxClaim,
  type OutboxInput,
  type Page,
  redactTranscriptItem,
  SchemaTooNewError,
  type Scope,
  type ScopeSummary,
  type SearchOptions,
  type StoreCapabilities,
  StoreError,
  type StoreInfo,
  sameScope,
  sanitize,
  stableJson,
  type VectorHit,
  VersionConflictError,
  validateAuditEvent,
  validateBelief,
  validateEmbedding,
  validateOutboxInput,
  validateSearchOptions as validateSearchOptionsShared,
  validateUpdate,
  vectorToBytes,
} from '@mem01/engine';
import * as sqliteVec from 'sqlite-vec';
import { queryTerms } from './fts-query.js';
import { APPLICATION_ID, MIGRATIONS, SQLITE_SCHEMA_VERSION } from './migrations.js';
import { loadNodeSqlite } from './node-sqlite.js';
import { defaultSqlitePath } from './paths.js';
import { type Row, rowToBelief, rowToOutboxEntry } from './rows.js';
import {
  type ReadBatch,
  runSteps,
  SEARCH_SETUP_SQL,
  searchExactRows,
  searchLexicalRows,
  searchVecRows,
  TermStatsCache,
  unitCosine,
  VEC_TABLE,
  vecShard,
} from './search.js';
import { SearchPool } from './search-pool.js';

/** Options of {@link openSqliteStore}. Defaults are resolved in one place, {@link resolveOptions}. */
export interface SqliteStoreOptions {
  /** Database file. Default {@link defaultSqlitePath}: `$MEM01_HOME/memory.db` or `~/.mem01/memory.db`.
   * A folder created for it gets mode 0700, a new file 0600. Ignored when `database` is given. */
  path?: string | undefined;
  /** A caller-owned handle (opened with `allowExtension: true` if sqlite-vec should load). `close()` leaves it open. */
  database?: DatabaseSync | undefined;
  /** Fixed embedding dimension. Without it, the first embedding written fixes it (persisted in the file). */
  dimensions?: number | undefined;
  /** `auto` (default): sqlite-vec when its extension loads, else exact cosine. `sqlite-vec`: fail when it cannot load.
   * `exact`: never load it. */
  vector?: 'auto' | 'sqlite-vec' | 'exact' | undefined;
  /** How long a write waits for another process's write lock. Default 5000 ms. */
  busyTimeoutMs?: number | undefined;
  /** Limit for belief values/statements and turn texts, in UTF-8 bytes. Default 65536. */
  maxTextBytes?: number | undefined;
  /** `normal` (default): in WAL mode a commit survives a process crash (SIGKILL) but the last commits may roll back
   * on power loss or an OS crash; the file is never corrupted. `full` also fsyncs the WAL on every commit, so an
   * accepted turn survives power loss, at several ms per commit on most disks. */
  synchronous?: 'full' | 'normal' | undefined;
  /** Where the active vector mode is reported (once, at open). Default: one line on stderr. */
  logger?: Logger | undefined;
  /**
   * Worker threads that run searches on their own read connections, so a search never blocks the event loop and
   * the lexical and vector halves of a recall run in parallel. Default: 2 (1 on a single-CPU machine) for a file;
   * always 0 (searches on the store's connection) for `:memory:` or a caller-owned `database`.
   */
  searchWorkers?: number | undefined;
  /**
   * A scope's embeddings enter the sqlite-vec index once it has this many (default 1024, one sqlite-vec chunk);
   * smaller scopes are searched exactly, which is as fast at that size. sqlite-vec allocates whole chunks per scope
   * (1.5 MB at 384 dimensions), so indexing every small scope would waste that much per user.
   */
  vectorIndexMinBeliefs?: number | undefined;
}

interface ResolvedOptions {
  readonly path: string | null;
  readonly database: DatabaseSync | null;
  readonly dimensions: number | null;
  readonly vector: 'auto' | 'sqlite-vec' | 'exact';
  readonly busyTimeoutMs: number;
  readonly maxTextBytes: number;
  readonly synchronous: 'full' | 'normal';
  readonly logger: Logger;
  readonly searchWorkers: number;
  readonly vectorIndexMinBeliefs: number;
}

const STORE_NAME = 'sqlite';
/** One transcript item (serialised JSON) may be at most this large. */
const MAX_ITEM_BYTES = 16 * 1024 * 1024;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** One sqlite-vec chunk (its default `chunk_size`). */
const DEFAULT_VECTOR_INDEX_MIN = 1024;

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${message}\n`),
};

function resolveOptions(options: SqliteStoreOptions): ResolvedOptions {
  const { dimensions, busyTimeoutMs, maxTextBytes } = options;
  if (dimensions !== undefined && (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192)) {
    throw new InvalidInputError('dimensions', 'must be an integer between 1 and 8192');
  }
  if (busyTimeoutMs !== undefined && (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0)) {
    throw new InvalidInputError('busyTimeoutMs', 'must be a non-negative integer');
  }
  if (maxTextBytes !== undefined && (!Number.isInteger(maxTextBytes) || maxTextBytes < 1)) {
    throw new InvalidInputError('maxTextBytes', 'must be a positive integer');
  }
  const vector = options.vector ?? 'auto';
  if (!['auto', 'sqlite-vec', 'exact'].includes(vector)) {
    throw new InvalidInputError('vector', `must be auto, sqlite-vec or exact, got ${JSON.stringify(vector)}`);
  }
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new InvalidInputError('synchronous', 'must be full or normal');
  }
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path.trim() === '')) {
    throw new InvalidInputError('path', 'must be a non-empty string');
  }
  const { searchWorkers, vectorIndexMinBeliefs } = options;
  if (
    vectorIndexMinBeliefs !== undefined &&
    (!Number.isInteger(vectorIndexMinBeliefs) ||
      vectorIndexMinBeliefs < 1 ||
      vectorIndexMinBeliefs > 1_000_000)
  ) {
    throw new InvalidInputError('vectorIndexMinBeliefs', 'must be an integer between 1 and 1000000');
  }
  if (
    searchWorkers !== undefined &&
    (!Number.isInteger(searchWorkers) || searchWorkers < 0 || searchWorkers > 16)
  ) {
    throw new InvalidInputError('searchWorkers', 'must be an integer between 0 and 16');
  }
  return {
    path: options.database ? null : resolve(options.path ?? defaultSqlitePath()),
    database: options.database ?? null,
    dimensions: dimensions ?? null,
    vector,
    busyTimeoutMs: busyTimeoutMs ?? 5000,
    maxTextBytes: maxTextBytes ?? 65536,
    synchronous,
    logger: options.logger ?? stderrLogger,
    searchWorkers: searchWorkers ?? Math.min(2, availableParallelism()),
    vectorIndexMinBeliefs: vectorIndexMinBeliefs ?? DEFAULT_VECTOR_INDEX_MIN,
  };
}

interface SqliteErrorLike {
  errcode?: number;
  errstr?: string;
  message?: string;
}

function sqliteCode(err: unknown): number | null {
  const code = (err as SqliteErrorLike | null)?.errcode;
  return typeof code === 'number' ? code : null;
}

/** Maps a driver error to the engine's typed errors, keeping it as `cause`. */
function mapDriverError(err: unknown, path: string, action: string): Error {
  if (err instanceof Mem01Error) return err;
  const code = sqliteCode(err);
  const primary = code === null ? null : code & 0xff;
  const detail = err instanceof Error ? err.message : String(err);
  if (primary === 11 || primary === 26) {
    return new CorruptStoreError(`${path} is corrupt or not a SQLite database (${detail})`, { cause: err });
  }
  if (primary === 5 || primary === 6) {
    return new StoreError(`${path}: ${action} timed out waiting for the database lock (${detail})`, {
      cause: err,
    });
  }
  if (primary === 8 || primary === 14 || primary === 3) {
    return new StoreError(
      `${path}: ${action} failed: the database or its folder is not writable (${detail})`,
      {
        cause: err,
      },
    );
  }
  if (primary === 13)
    return new StoreError(`${path}: ${action} failed: disk full (${detail})`, { cause: err });
  return new StoreError(`${path}: ${action} failed: ${detail}`, { cause: err });
}

/** Reads the first bytes of an existing file to tell a SQLite database from anything else without opening it. */
function checkHeader(path: string): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return;
  }
  if (size === 0) return;
  const buf = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw new StoreError(`cannot read ${path}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, {
      cause,
    });
  }
  try {
    readSync(fd, buf, 0, buf.length, 0);
  } finally {
    closeSync(fd);
  }
  if (size < 100 || !buf.equals(SQLITE_HEADER)) {
    throw new CorruptStoreError(
      `${path} is not a SQLite database; refusing to open it (the file was not changed)`,
    );
  }
}

/** Creates the folder (0700) and an empty file (0600) when missing, with clear errors when that is not allowed. */
function prepareFile(path: string): void {
  const dir = dirname(path);
  try {
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new StoreError(`cannot create the folder ${dir} for the mem01 database: ${code}`, { cause });
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (cause) {
    throw new StoreError(
      `the folder ${dir} is not writable; the mem01 database ${path} needs a writable folder (for its WAL file)`,
      { cause },
    );
  }
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, 'wx', 0o600));
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new StoreError(
          `cannot create the mem01 database ${path}: ${code ?? 'error'} (is the folder writable?)`,
          {
            cause,
          },
        );
      }
    }
  }
}

function assertVector(value: unknown, field: string): asserts value is Float32Array {
  if (validateEmbedding(value, field) === null) throw new InvalidInputError(field, 'must be a Float32Array');
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  try {
    assertId(id, 'cursor');
  } catch {
    throw new InvalidInputError('cursor', 'is not a cursor returned by list()');
  }
  return id;
}

function parseItem(text: string): unknown {
  return JSON.parse(text) as unknown;
}

/**
 * The embedded mem01 store: transcript, beliefs (FTS5 + sqlite-vec or exact cosine) and the durable outbox in one
 * SQLite file, via `node:sqlite`. Every multi-statement operation runs in `BEGIN IMMEDIATE … COMMIT`, so several
 * processes can share one file. Create it with {@link openSqliteStore}.
 */
export class SqliteStore implements FullStore {
  readonly name = STORE_NAME;
  /** Absolute path of the database file (`:memory:` or the handle's location for a caller-owned handle). */
  readonly path: string;
  readonly capabilities: StoreCapabilities;
  /** Is sqlite-vec loaded and used for vector search? */
  readonly vectorMode: 'sqlite-vec' | 'exact';

  readonly #db: DatabaseSync;
  readonly #owned: boolean;
  readonly #maxTextBytes: number;
  readonly #logger: Logger;
  readonly #statements = new Map<string, StatementSync>();
  #dimensions: number | null;
  #closed = false;
  /** Search workers (their own read connections), or null when searches run on this connection. */
  readonly #pool: SearchPool | null;
  readonly #vectorIndexMin: number;
  /** Term and scope counts of the lexical search, shared by every connection of this store. */
  readonly #termStats = new TermStatsCache();

  /** @internal Use {@link openSqliteStore}. */
  constructor(
    db: DatabaseSync,
    init: {
      path: string;
      owned: boolean;
      vectorMode: 'sqlite-vec' | 'exact';
      vecVersion: string | null;
      dimensions: number | null;
      maxTextBytes: number;
      logger: Logger;
      pool: SearchPool | null;
      vectorIndexMin: number;
    },
  ) {
    this.#db = db;
    this.#pool = init.pool;
    this.#vectorIndexMin = init.vectorIndexMin;
    this.#logger = init.logger;
    this.path = init.path;
    this.#owned = init.owned;
    this.vectorMode = init.vectorMode;
    this.#dimensions = init.dimensions;
    this.#maxTextBytes = init.maxTextBytes;
    this.capabilities = Object.freeze({
      vectorSearch: init.vectorMode === 'sqlite-vec' ? 'index' : 'exact',
      vectorIndex: init.vectorMode === 'sqlite-vec' ? 'sqlite-vec' : 'exact-cosine',
      lexicalIndex: 'fts5-bm25',
      durableOutbox: true,
      multiProcess: true,
    });
  }

  /** How many search worker threads are running (0 when searches run on this connection). For diagnostics. */
  get searchWorkersRunning(): number {
    return this.#pool?.running ?? 0;
  }

  // ---------------------------------------------------------------- plumbing

  #stmt(sql: string): StatementSync {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  #get(sql: string, ...params: (string | number | bigint | null | Uint8Array)[]): Row | undefined {
    return this.#stmt(sql).get(...params) as Row | undefined;
  }

  #all(sql: string, ...params: (string | number | bigint | null | Uint8Array)[]): Row[] {
    return this.#stmt(sql).all(...params) as Row[];
  }

  #run(sql: string, ...params: (string | number | bigint | null | Uint8Array)[]): number {
    return Number(this.#stmt(sql).run(...params).changes);
  }

  /** Runs `fn` on an open store, mapping driver errors to typed errors. */
  #op<T>(action: string, fn: () => T): T {
    if (this.#closed) throw new ClosedError(`sqlite store ${this.path}`);
    try {
      return fn();
    } catch (err) {
      throw mapDriverError(err, this.path, action);
    }
  }

  /** `BEGIN IMMEDIATE` takes the write lock up front, so concurrent writers queue (busy timeout) instead of failing
   * with a stale snapshot, and every check inside `fn` sees the latest committed state. */
  #tx<T>(action: string, fn: () => T): T {
    return this.#op(action, () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        const out = fn();
        this.#db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  #scopeId(scope: { userId: string; namespace: string }): number | null {
    const row = this.#get(
      'SELECT id FROM scopes WHERE user_id = ? AND namespace = ?',
      scope.userId,
      scope.namespace,
    );
    return row ? Number(row.id) : null;
  }

  #ensureScopeId(scope: { userId: string; namespace: string }): number {
    this.#run(
      'INSERT OR IGNORE INTO scopes (user_id, namespace) VALUES (?, ?)',
      scope.userId,
      scope.namespace,
    );
    return this.#scopeId(scope)!;
  }

  #readDimensions(): number | null {
    const row = this.#get("SELECT value FROM meta WHERE key = 'dimensions'");
    return row ? Number(row.value) : null;
  }

  /** Checks (inside a write transaction) an embedding's length against the store's dimension, fixing it if unset. */
  #checkDimensions(length: number): void {
    if (this.#dimensions === null) this.#dimensions = this.#readDimensions();
    if (this.#dimensions === null) {
      this.#run("INSERT INTO meta (key, value) VALUES ('dimensions', ?)", String(length));
      this.#dimensions = length;
      if (this.vectorMode === 'sqlite-vec') createVecTable(this.#db, length);
    }
    if (length !== this.#dimensions) throw new DimensionMismatchError(this.#dimensions, length);
  }

  #vecTableExists(): boolean {
    return this.#get('SELECT 1 AS x FROM sqlite_master WHERE name = ?', VEC_TABLE) !== undefined;
  }

  #writeEmbedding(beliefSeq: number, scopeId: number, embedding: Float32Array): void {
    this.#checkDimensions(embedding.length);
    const bytes = vectorToBytes(embedding);
    this.#run(
      'INSERT OR REPLACE INTO belief_embeddings (belief_seq, scope_id, embedding) VALUES (?, ?, ?)',
      beliefSeq,
      scopeId,
      bytes,
    );
    if (this.vectorMode === 'sqlite-vec') {
      if (this.#get('SELECT 1 AS x FROM vec_scopes WHERE scope_id = ?', scopeId)) {
        putVec((sql, ...params) => this.#run(sql, ...params), beliefSeq, scopeId, embedding);
      } else {
        const n = Number(
          this.#get('SELECT count(*) AS n FROM belief_embeddings WHERE scope_id = ?', scopeId)?.n ?? 0,
        );
        if (n >= this.#vectorIndexMin)
          indexScope(this.#db, (sql, ...params) => this.#run(sql, ...params), scopeId);
      }
    } else if (this.#vecTableExists()) {
      markVecStale(this.#db);
    }
  }

  #deleteEmbedding(beliefSeq: number): void {
    const n = this.#run('DELETE FROM belief_embeddings WHERE belief_seq = ?', beliefSeq);
    if (this.vectorMode === 'sqlite-vec') {
      this.#run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(beliefSeq));
    } else if (n > 0 && this.#vecTableExists()) {
      markVecStale(this.#db);
    }
  }

  #validateInsert(insert: BeliefInsert, field: string): void {
    if (insert === null || typeof insert !== 'object')
      throw new InvalidInputError(field, 'must be an object');
    validateBelief(insert.belief, `${field}.belief`, this.#maxTextBytes);
    if (insert.embedding !== undefined && insert.embedding !== null) {
      assertVector(insert.embedding, `${field}.embedding`);
      if (this.#dimensions !== null && insert.embedding.length !== this.#dimensions) {
        throw new DimensionMismatchError(this.#dimensions, insert.embedding.length, `${field}.embedding`);
      }
    }
  }

  /** Inserts a validated belief; returns its row sequence. */
  #insertBelief(insert: BeliefInsert): number {
    const b = insert.belief;
    const scope = normalizeScope(b.scope);
    const scopeId = this.#ensureScopeId(scope);
    let seq: number;
    try {
      const result = this.#stmt(
        `INSERT INTO beliefs (id, scope_id, user_id, namespace, kind, subject, attribute, value, statement, confidence,
           status, supersedes, superseded_by, version, valid_from, valid_to, stored_at, updated_at, invalidated_at,
           evidence, source)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        b.id,
        scopeId,
        scope.userId,
        scope.namespace,
        b.kind,
        b.subject,
        b.attribute,
        b.value,
        b.statement,
        b.confidence,
        b.status,
        b.supersedes,
        b.supersededBy,
        b.version,
        b.validFrom,
        b.validTo,
        b.storedAt,
        b.updatedAt,
        b.invalidatedAt,
        JSON.stringify(b.evidence),
        b.source,
      );
      seq = Number(result.lastInsertRowid);
    } catch (err) {
      throw this.#uniqueError(err, b.id, b.subject, b.attribute);
    }
    if (insert.embedding && b.status !== 'forgotten') this.#writeEmbedding(seq, scopeId, insert.embedding);
    return seq;
  }

  #uniqueError(err: unknown, id: string, subject: string, attribute: string): unknown {
    const message = err instanceof Error ? err.message : '';
    if (sqliteCode(err) === 2067 || /UNIQUE constraint failed/.test(message)) {
      if (message.includes('beliefs.id'))
        return new StoreError(`belief ${id} already exists`, { cause: err });
      if (message.includes('beliefs.subject'))
        return new DuplicateActiveBeliefError(subject, attribute, { cause: err });
    }
    return err;
  }

  #beliefRow(scope: { userId: string; namespace: string }, id: string): Row | undefined {
    return this.#get(
      'SELECT * FROM beliefs WHERE id = ? AND user_id = ? AND namespace = ?',
      id,
      scope.userId,
      scope.namespace,
    );
  }

  // ---------------------------------------------------------------- BeliefStore

  async commit(request: CommitRequest): Promise<void> {
    if (request === null || typeof request !== 'object')
      throw new InvalidInputError('request', 'must be an object');
    const scope = normalizeScope(request.scope);
    const inserts = request.inserts ?? [];
    const updates = request.updates ?? [];
    const audit = request.audit ?? [];
    if (!Array.isArray(inserts)) throw new InvalidInputError('inserts', 'must be an array');
    if (!Array.isArray(updates)) throw new InvalidInputError('updates', 'must be an array');
    if (!Array.isArray(audit)) throw new InvalidInputError('audit', 'must be an array');
    inserts.forEach((ins, i) => {
      this.#validateInsert(ins, `inserts[${i}]`);
      if (!sameScope(ins.belief.scope, scope)) {
        throw new InvalidInputError(`inserts[${i}].belief.scope`, 'must equal the commit scope');
      }
    });
    updates.forEach((u, i) => {
      validateUpdate(u, `updates[${i}]`, this.#maxTextBytes);
    });
    audit.forEach((a, i) => {
      const event = validateAuditEvent(a, `audit[${i}]`);
      if (!sameScope(event.scope, scope))
        throw new InvalidInputError(`audit[${i}].scope`, 'must equal the commit scope');
    });
    const complete = request.complete;
    if (complete !== undefined) {
      assertId(complete.claimId, 'complete.claimId');
      if (!Array.isArray(complete.entryIds))
        throw new InvalidInputError('complete.entryIds', 'must be an array');
      complete.entryIds.forEach((id, i) => {
        assertId(id, `complete.entryIds[${i}]`);
      });
    }

    this.#tx('commit', () => {
      // SQLite checks the one-active-per-key index per statement, not at commit: retire before activating.
      const ordered = [...updates].sort(
        (a, b) => Number(a.set.status === 'active') - Number(b.set.status === 'active'),
      );
      for (const u of ordered) {
        const row = this.#beliefRow(scope, u.id);
        if (!row) throw new NotFoundError(`belief ${u.id}`);
        const version = Number(row.version);
        if (version !== u.expectedVersion) throw new VersionConflictError(u.id, u.expectedVersion, version);
        this.#applyPatch(row, u.set);
      }
      for (const ins of inserts) this.#insertBelief(ins);
      for (const a of audit) this.#insertAudit(a);
      if (complete) {
        const ids = [...new Set(complete.entryIds)];
        for (const id of ids) {
          const held = this.#get(
            "SELECT 1 AS x FROM outbox WHERE id = ? AND claim_id = ? AND status = 'claimed'",
            id,
            complete.claimId,
          );
          if (!held) throw new LeaseLostError();
        }
        for (const id of ids) {
          this.#run(
            `UPDATE outbox SET status = 'done', text = '', claim_id = NULL, worker = NULL, lease_until = NULL,
               last_error = NULL WHERE id = ?`,
            id,
          );
        }
      }
    });
  }

  #applyPatch(row: Row, set: BeliefPatch): void {
    const cols: string[] = [];
    const vals: (string | number | null)[] = [];
    const add = (col: string, v: string | number | null) => {
      cols.push(`${col} = ?`);
      vals.push(v);
    };
    if (set.status !== undefined) add('status', set.status);
    if (set.supersededBy !== undefined) add('superseded_by', set.supersededBy);
    if (set.invalidatedAt !== undefined) add('invalidated_at', set.invalidatedAt);
    if (set.validTo !== undefined) add('valid_to', set.validTo);
    if (set.confidence !== undefined) add('confidence', set.confidence);
    if (set.evidence !== undefined) add('evidence', JSON.stringify(set.evidence));
    add('updated_at', set.updatedAt);
    const seq = Number(row.seq);
    try {
      this.#db
        .prepare(`UPDATE beliefs SET ${cols.join(', ')}, version = version + 1 WHERE seq = ?`)
        .run(...vals, seq);
    } catch (err) {
      throw this.#uniqueError(err, String(row.id), String(row.subject), String(row.attribute));
    }
    if (set.status === 'forgotten') this.#scrub(row, isoNow());
  }

  async get(scope: Scope, id: string): Promise<Belief | null> {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    return this.#op('get', () => {
      const row = this.#beliefRow(s, id);
      return row ? rowToBelief(row) : null;
    });
  }

  async getEmbeddings(scope: Scope, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const s = normalizeScope(scope);
    if (!Array.isArray(ids)) throw new InvalidInputError('ids', 'must be an array');
    for (const [i, id] of ids.entries()) assertId(id, `ids[${i}]`);
    return this.#op('getEmbeddings', () => {
      const out = new Map<string, Float32Array>();
      for (const id of ids) {
        const row = this.#get(
          `SELECT e.embedding AS embedding FROM belief_embeddings e JOIN beliefs b ON b.seq = e.belief_seq
            WHERE b.id = ? AND b.user_id = ? AND b.namespace = ? AND b.status <> 'forgotten'`,
          id,
          s.userId,
          s.namespace,
        );
        if (row) out.set(id, bytesToVector(row.embedding as Uint8Array));
      }
      return out;
    });
  }

  async getActiveByKeys(
    scope: Scope,
    keys: readonly { readonly subject: string; readonly attribute: string }[],
  ): Promise<Belief[]> {
    const s = normalizeScope(scope);
    if (!Array.isArray(keys)) throw new InvalidInputError('keys', 'must be an array');
    keys.forEach((k, i) => {
      if (k === null || typeof k !== 'object') throw new InvalidInputError(`keys[${i}]`, 'must be an object');
      assertText(k.subject, `keys[${i}].subject`, 256);
      assertText(k.attribute, `keys[${i}].attribute`, 256);
    });
    return this.#op('getActiveByKeys', () => {
      const out: Belief[] = [];
      const seen = new Set<string>();
      for (const k of keys) {
        const row = this.#get(
          `SELECT * FROM beliefs WHERE user_id = ? AND namespace = ? AND subject = ? AND attribute = ? AND status = 'active'`,
          s.userId,
          s.namespace,
          k.subject,
          k.attribute,
        );
        if (row && !seen.has(String(row.id))) {
          seen.add(String(row.id));
          out.push(rowToBelief(row));
        }
      }
      return out;
    });
  }

  async list(scope: Scope, options: ListOptions = {}): Promise<Page<Belief>> {
    const s = normalizeScope(scope);
    const statuses = assertStatuses(options.statuses);
    const limit = options.limit ?? 100;
    assertPositiveInt(limit, 'limit', 1000);
    const after =
      options.cursor === undefined || options.cursor === null ? null : decodeCursor(String(options.cursor));
    return this.#op('list', () => {
      const rows = this.#all(
        `SELECT * FROM beliefs WHERE user_id = ? AND namespace = ? AND status IN (${placeholders(statuses.length)})
           AND (? IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
        s.userId,
        s.namespace,
        ...statuses,
        after,
        after,
        limit + 1,
      );
      const items = rows.slice(0, limit).map(rowToBelief);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null };
    });
  }

  async searchLexical(scope: Scope, query: string, options: SearchOptions): Promise<LexicalHit[]> {
    const s = normalizeScope(scope);
    if (typeof query !== 'string') throw new InvalidInputError('query', 'must be a string');
    const { limit, statuses } = validateSearchOptions(options);
    const terms = queryTerms(query);
    return this.#search('searchLexical', async (exec) => {
      const scopeId = this.#scopeId(s);
      if (scopeId === null || terms.length === 0) return [];
      const rows = await searchLexicalRows(exec, { scopeId, ...s, limit, statuses }, terms, this.#termStats);
      return rows.map((row) => ({ belief: rowToBelief(row), score: Number(row.score) }));
    });
  }

  async searchVector(scope: Scope, vector: Float32Array, options: SearchOptions): Promise<VectorHit[]> {
    const s = normalizeScope(scope);
    assertVector(vector, 'vector');
    const { limit, statuses } = validateSearchOptions(options);
    return this.#search('searchVector', async (exec) => {
      if (this.#dimensions === null) this.#dimensions = this.#readDimensions();
      if (this.#dimensions === null) return [];
      if (vector.length !== this.#dimensions)
        throw new DimensionMismatchError(this.#dimensions, vector.length, 'vector');
      const scopeId = this.#scopeId(s);
      if (scopeId === null) return [];
      const target = { scopeId, ...s, limit, statuses };
      const unit = unitBytes(vector);
      let rows: Row[] | null = null;
      // A zero query has no direction: only the exact search scores it (0 for every belief).
      // Scopes below `vectorIndexMinBeliefs` embeddings are not in the sqlite-vec index: the exact search is as fast.
      const indexed =
        this.vectorMode === 'sqlite-vec' &&
        this.#get('SELECT 1 AS x FROM vec_scopes WHERE scope_id = ?', scopeId) !== undefined;
      if (indexed && unit !== null) rows = await searchVecRows(exec, target, unit);
      rows ??= await searchExactRows(
        exec,
        target,
        unit ?? vectorToBytes(vector),
        this.vectorMode === 'sqlite-vec',
      );
      return rows.map((row) => ({ belief: rowToBelief(row), score: Number(row.score) }));
    });
  }

  /** Runs a read-only search on a search worker when there are any, else on this connection, mapping errors. */
  async #search<T>(action: string, fn: (exec: ReadBatch) => Promise<T>): Promise<T> {
    if (this.#closed) throw new ClosedError(`sqlite store ${this.path}`);
    try {
      return await fn(this.#pool ? this.#pool.exec : this.#readBatch);
    } catch (err) {
      if (err instanceof Mem01Error) throw err;
      if (this.#closed) throw new ClosedError(`sqlite store ${this.path}`);
      throw mapDriverError(err, this.path, action);
    }
  }

  /** The in-thread executor: the steps run synchronously on this connection. */
  readonly #readBatch: ReadBatch = (steps) => {
    try {
      return Promise.resolve(runSteps(this.#db, (sql) => this.#stmt(sql), unitCosine, steps) as Row[][]);
    } catch (err) {
      return Promise.reject(err);
    }
  };

  async history(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<Belief[]> {
    const s = normalizeScope(scope);
    if (options.id !== undefined) assertId(options.id, 'id');
    return this.#op('history', () => {
      if (options.id === undefined) {
        return this.#all(
          'SELECT * FROM beliefs WHERE user_id = ? AND namespace = ? ORDER BY stored_at, id',
          s.userId,
          s.namespace,
        ).map(rowToBelief);
      }
      const chain = new Map<string, Belief>();
      const pending = [options.id];
      while (pending.length > 0) {
        const id = pending.pop()!;
        if (chain.has(id)) continue;
        const row = this.#beliefRow(s, id);
        if (!row) continue;
        const b = rowToBelief(row);
        chain.set(id, b);
        if (b.supersedes) pending.push(b.supersedes);
        if (b.supersededBy) pending.push(b.supersededBy);
        for (const r of this.#all(
          'SELECT id FROM beliefs WHERE supersedes = ? AND user_id = ? AND namespace = ?',
          id,
          s.userId,
          s.namespace,
        )) {
          pending.push(String(r.id));
        }
      }
      return [...chain.values()].sort((a, b) =>
        a.storedAt < b.storedAt ? -1 : a.storedAt > b.storedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
      );
    });
  }

  async forget(
    scope: Scope,
    id: string,
    options: { readonly at: string; readonly expectedVersion?: number | undefined },
  ): Promise<Belief> {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    assertTimestamp(options.at, 'at');
    if (options.expectedVersion !== undefined) assertPositiveInt(options.expectedVersion, 'expectedVersion');
    let scrubbed = false;
    const tombstone = this.#tx('forget', () => {
      const row = this.#beliefRow(s, id);
      if (!row) throw new NotFoundError(`belief ${id}`);
      if (row.status === 'forgotten') return rowToBelief(row);
      const version = Number(row.version);
      if (options.expectedVersion !== undefined && options.expectedVersion !== version) {
        throw new VersionConflictError(id, options.expectedVersion, version);
      }
      this.#scrub(row, options.at);
      scrubbed = true;
      return rowToBelief(this.#beliefRow(s, id)!);
    });
    // The WAL still holds the old pages until a checkpoint; forgetting is rare, so checkpoint now (best effort:
    // a reader on another connection can keep frames alive until its next checkpoint).
    if (scrubbed) {
      try {
        this.checkpoint();
      } catch (err) {
        this.#logger.warn(`mem01 sqlite: checkpoint after forget deferred: ${describeError(err)}`);
      }
    }
    return tombstone;
  }

  /**
   * Makes a belief a content-free tombstone and removes its text from every other place it may be: the FTS index
   * (trigger, with FTS5 secure-delete), the embedding and vec0 rows, and outbox payloads of the turns it came from
   * or that contain its statement or value. `secure_delete=ON` zeroes the freed bytes; a checkpoint then clears the WAL.
   * Queued turns keep their place in the queue (with empty text), so the user's order is unchanged.
   */
  #scrub(row: Row, at: string): void {
    const seq = Number(row.seq);
    const userId = String(row.user_id);
    const statement = String(row.statement);
    const value = String(row.value);
    let evidence: { sessionId: string; position: number }[] = [];
    try {
      evidence = JSON.parse(String(row.evidence)) as { sessionId: string; position: number }[];
    } catch {
      evidence = [];
    }
    this.#run(
      `UPDATE beliefs SET status = 'forgotten', subject = '', attribute = '', value = '', statement = '',
         evidence = '[]', invalidated_at = ?, updated_at = ?,
         version = version + CASE WHEN status = 'forgotten' THEN 0 ELSE 1 END
       WHERE seq = ?`,
      at,
      at,
      seq,
    );
    this.#deleteEmbedding(seq);
    const erase = `UPDATE outbox SET text = ''`;
    for (const ev of evidence) {
      if (typeof ev?.sessionId !== 'string' || typeof ev.position !== 'number') continue;
      this.#run(
        `${erase} WHERE user_id = ? AND session_id = ? AND position = ? AND text <> ''`,
        userId,
        ev.sessionId,
        ev.position,
      );
    }
    for (const needle of [statement, value]) {
      if (needle.trim().length < 3) continue;
      this.#run(`${erase} WHERE user_id = ? AND text <> '' AND instr(text, ?) > 0`, userId, needle);
    }
    this.#redactTranscripts(userId, { statement, value }, evidence);
  }

  /** The engine's forget policy for transcripts ({@link redactTranscriptItem}): evidence turns lose their text,
   * the user's other items each occurrence of the belief's value and statement. Sessions of other users are never
   * touched. Runs inside the forget transaction. */
  #redactTranscripts(
    userId: string,
    belief: { statement: string; value: string },
    evidence: readonly { sessionId: string; position: number }[],
  ): void {
    const needles = forgetNeedles(belief);
    const update = (rid: number, item: string, whole: boolean) => {
      const next = redactTranscriptItem(JSON.parse(item) as unknown, { whole, needles });
      if (next !== null)
        this.#run('UPDATE transcript_items SET item = ? WHERE rid = ?', JSON.stringify(next), rid);
    };
    const done = new Set<number>();
    for (const ev of evidence) {
      if (typeof ev?.sessionId !== 'string' || typeof ev.position !== 'number') continue;
      const row = this.#get(
        `SELECT i.rid AS rid, i.item AS item FROM transcript_items i
           LEFT JOIN transcript_sessions s ON s.session_id = i.session_id
          WHERE i.session_id = ? AND i.position = ? AND (s.owner_user_id = ? OR s.owner_user_id IS NULL)`,
        ev.sessionId,
        ev.position,
        userId,
      );
      if (!row) continue;
      done.add(Number(row.rid));
      update(Number(row.rid), String(row.item), true);
    }
    if (needles.length === 0) return;
    // A cheap SQL prefilter (ASCII case folding), then the exact whole-word match in JS.
    const like = needles.map(() => 'instr(lower(item), lower(?)) > 0').join(' OR ');
    for (const row of this.#all(
      `SELECT i.rid AS rid, i.item AS item FROM transcript_items i
         JOIN transcript_sessions s ON s.session_id = i.session_id
        WHERE s.owner_user_id = ? AND (${like.replaceAll('item', 'i.item')})`,
      userId,
      ...needles.map((n) => JSON.stringify(n).slice(1, -1)),
    )) {
      if (done.has(Number(row.rid))) continue;
      update(Number(row.rid), String(row.item), false);
    }
  }

  async importBeliefs(records: readonly BeliefInsert[]): Promise<{ inserted: number; skipped: number }> {
    if (!Array.isArray(records)) throw new InvalidInputError('records', 'must be an array');
    records.forEach((r, i) => {
      this.#validateInsert(r, `records[${i}]`);
    });
    return this.#tx('importBeliefs', () => {
      let inserted = 0;
      let skipped = 0;
      for (const r of records) {
        if (this.#get('SELECT 1 AS x FROM beliefs WHERE id = ?', r.belief.id)) {
          skipped++;
          continue;
        }
        this.#insertBelief(r);
        inserted++;
      }
      return { inserted, skipped };
    });
  }

  async eraseUser(userId: string): Promise<EraseReceipt> {
    assertId(userId, 'userId');
    return this.#tx('eraseUser', () => {
      if (this.vectorMode === 'sqlite-vec' && this.#vecTableExists()) {
        for (const r of this.#all(
          'SELECT e.belief_seq AS seq FROM belief_embeddings e JOIN beliefs b ON b.seq = e.belief_seq WHERE b.user_id = ?',
          userId,
        )) {
          this.#run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(Number(r.seq)));
        }
      } else if (this.#vecTableExists()) {
        markVecStale(this.#db);
      }
      this.#run(
        'DELETE FROM belief_embeddings WHERE belief_seq IN (SELECT seq FROM beliefs WHERE user_id = ?)',
        userId,
      );
      const beliefs = this.#run('DELETE FROM beliefs WHERE user_id = ?', userId);
      this.#run('DELETE FROM vec_scopes WHERE scope_id IN (SELECT id FROM scopes WHERE user_id = ?)', userId);
      this.#run('DELETE FROM scopes WHERE user_id = ?', userId);
      const auditEvents = this.#run('DELETE FROM audit WHERE user_id = ?', userId);
      const outboxEntries = this.#run('DELETE FROM outbox WHERE user_id = ?', userId);
      const sessions = this.#all(
        'SELECT session_id FROM transcript_sessions WHERE owner_user_id = ?',
        userId,
      ).map((r) => String(r.session_id));
      let transcriptItems = 0;
      for (const sessionId of sessions) {
        transcriptItems += this.#run('DELETE FROM transcript_items WHERE session_id = ?', sessionId);
        this.#run('DELETE FROM transcript_operations WHERE session_id = ?', sessionId);
        this.#run('DELETE FROM transcript_sessions WHERE session_id = ?', sessionId);
      }
      return { beliefs, outboxEntries, transcriptItems, auditEvents };
    });
  }

  async listScopes(): Promise<ScopeSummary[]> {
    return this.#op('listScopes', () => {
      const rows = this.#all(
        'SELECT user_id, namespace, status, count(*) AS n FROM beliefs GROUP BY user_id, namespace, status ORDER BY user_id, namespace',
      );
      const out: { scope: Scope; counts: Record<BeliefStatus, number> }[] = [];
      for (const r of rows) {
        const userId = String(r.user_id);
        const namespace = String(r.namespace);
        let last = out[out.length - 1];
        if (!last || last.scope.userId !== userId || (last.scope.namespace ?? '') !== namespace) {
          last = {
            scope: { userId, namespace },
            counts: Object.fromEntries(BELIEF_STATUSES.map((st) => [st, 0])) as Record<BeliefStatus, number>,
          };
          out.push(last);
        }
        last.counts[String(r.status) as BeliefStatus] = Number(r.n);
      }
      return out;
    });
  }

  async auditLog(
    scope: Scope,
    options: { readonly beliefId?: string; readonly limit?: number } = {},
  ): Promise<AuditEvent[]> {
    const s = normalizeScope(scope);
    if (options.beliefId !== undefined) assertId(options.beliefId, 'beliefId');
    const limit = options.limit ?? 1000;
    assertPositiveInt(limit, 'limit', 100_000);
    return this.#op('auditLog', () =>
      this.#all(
        `SELECT * FROM audit WHERE user_id = ? AND namespace = ? AND (? IS NULL OR belief_id = ?) ORDER BY seq LIMIT ?`,
        s.userId,
        s.namespace,
        options.beliefId ?? null,
        options.beliefId ?? null,
        limit,
      ).map((r) => ({
        at: String(r.at),
        scope: { userId: String(r.user_id), namespace: String(r.namespace) },
        beliefId: r.belief_id === null ? null : String(r.belief_id),
        action: String(r.action) as AuditEvent['action'],
        actor: String(r.actor),
      })),
    );
  }

  #insertAudit(a: AuditEvent): void {
    const s = normalizeScope(a.scope);
    this.#run(
      'INSERT INTO audit (at, user_id, namespace, belief_id, action, actor) VALUES (?, ?, ?, ?, ?, ?)',
      a.at,
      s.userId,
      s.namespace,
      a.beliefId,
      a.action,
      a.actor,
    );
  }

  async info(): Promise<StoreInfo> {
    const outbox = await this.backlog({ now: isoNow() });
    return this.#op('info', () => {
      if (this.#dimensions === null) this.#dimensions = this.#readDimensions();
      const row = this.#get("SELECT value FROM meta WHERE key = 'schema_version'");
      return {
        name: this.name,
        schemaVersion: row ? Number(row.value) : 0,
        capabilities: this.capabilities,
        dimensions: this.#dimensions,
        outbox,
      };
    });
  }

  /** Writes the WAL back into the database file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`). After a
   * forget, this is what makes the forgotten bytes leave the WAL file. Throws when another connection blocks it. */
  checkpoint(): void {
    this.#op('checkpoint', () => {
      const row = this.#db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as Row | undefined;
      if (row && Number(row.busy) !== 0) {
        throw new StoreError(
          `${this.path}: checkpoint could not complete because another connection is using the file`,
        );
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool?.close();
    this.#statements.clear();
    if (this.#owned) {
      try {
        this.#db.exec('PRAGMA optimize');
      } catch {
        // best effort
      }
      this.#db.close();
    }
  }

  // ---------------------------------------------------------------- WriteOutbox

  #validateOutboxInput(e: OutboxInput, field: string): void {
    validateOutboxInput(e, field, this.#maxTextBytes);
  }

  /** Inserts one accepted turn; false when its idempotency key exists already. */
  #enqueueOne(e: OutboxInput, acceptedAt: string): boolean {
    const s = normalizeScope(e.scope);
    const changes = this.#run(
      `INSERT INTO outbox (id, user_id, namespace, session_id, position, role, text, at, ref, idempotency_key,
         accepted_at, available_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '') ON CONFLICT (idempotency_key) DO NOTHING`,
      newId(),
      s.userId,
      s.namespace,
      e.sessionId,
      e.position,
      e.role,
      e.text,
      e.at,
      e.ref ?? null,
      idempotencyKey(e.sessionId, e.position, e.text),
      acceptedAt,
    );
    return changes > 0;
  }

  async enqueue(entries: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }> {
    if (!Array.isArray(entries)) throw new InvalidInputError('entries', 'must be an array');
    entries.forEach((e, i) => {
      this.#validateOutboxInput(e, `entries[${i}]`);
    });
    if (entries.length === 0) return { accepted: 0, duplicates: 0 };
    return this.#tx('enqueue', () => {
      const acceptedAt = isoNow();
      let accepted = 0;
      for (const e of entries) if (this.#enqueueOne(e, acceptedAt)) accepted++;
      return { accepted, duplicates: entries.length - accepted };
    });
  }

  async claim(options: ClaimOptions): Promise<OutboxClaim | null> {
    if (options === null || typeof options !== 'object')
      throw new InvalidInputError('options', 'must be an object');
    assertId(options.worker, 'worker');
    assertPositiveInt(options.leaseMs, 'leaseMs');
    assertTimestamp(options.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    const maxEntries = options.maxEntries ?? 1;
    assertPositiveInt(maxEntries, 'maxEntries', 10_000);
    if (options.maxChars !== undefined) assertPositiveInt(options.maxChars, 'maxChars');
    const now = new Date(options.now).toISOString();
    const leaseUntil = new Date(Date.parse(now) + options.leaseMs).toISOString();
    return this.#tx('claim', () => {
      const heads =
        options.userId === undefined
          ? this.#all(
              `SELECT user_id, min(seq) AS head FROM outbox WHERE status IN ('queued', 'claimed')
                GROUP BY user_id ORDER BY head`,
            )
          : this.#all(
              `SELECT user_id, min(seq) AS head FROM outbox WHERE status IN ('queued', 'claimed') AND user_id = ?
                GROUP BY user_id`,
              options.userId,
            );
      for (const h of heads) {
        const userId = String(h.user_id);
        if (
          this.#get(
            "SELECT 1 AS x FROM outbox WHERE user_id = ? AND status = 'claimed' AND lease_until > ? LIMIT 1",
            userId,
            now,
          )
        ) {
          continue;
        }
        const rows = this.#all(
          `SELECT * FROM outbox WHERE user_id = ? AND status IN ('queued', 'claimed') ORDER BY seq LIMIT ?`,
          userId,
          maxEntries,
        );
        const head = rows[0];
        if (!head || (head.status === 'queued' && String(head.available_at) > now)) continue;
        const taken: Row[] = [];
        let chars = 0;
        for (const r of rows) {
          if (taken.length > 0) {
            if (r.namespace !== head.namespace) break;
            if (r.status === 'queued' && String(r.available_at) > now) break;
            if (options.maxChars !== undefined && chars + String(r.text).length > options.maxChars) break;
          }
          taken.push(r);
          chars += String(r.text).length;
        }
        const claimId = randomUUID();
        for (const r of taken) {
          this.#run(
            "UPDATE outbox SET status = 'claimed', claim_id = ?, worker = ?, lease_until = ? WHERE seq = ?",
            claimId,
            options.worker,
            leaseUntil,
            Number(r.seq),
          );
        }
        return {
          claimId,
          worker: options.worker,
          scope: { userId, namespace: String(head.namespace) },
          entries: taken.map((r) => rowToOutboxEntry({ ...r, status: 'claimed' })),
          leaseUntil,
        };
      }
      return null;
    });
  }

  async fail(
    claim: OutboxClaim,
    error: string,
    options: { readonly maxAttempts: number; readonly retryAt?: string | undefined },
  ): Promise<void> {
    if (claim === null || typeof claim !== 'object')
      throw new InvalidInputError('claim', 'must be an object');
    assertId(claim.claimId, 'claim.claimId');
    if (typeof error !== 'string') throw new InvalidInputError('error', 'must be a string');
    assertPositiveInt(options?.maxAttempts, 'maxAttempts');
    assertTimestampOrNull(options.retryAt, 'retryAt');
    const lastError = sanitize(error).slice(0, 2000);
    this.#tx('fail', () => {
      this.#run(
        `UPDATE outbox SET attempts = attempts + 1, last_error = ?, claim_id = NULL, worker = NULL, lease_until = NULL,
           status = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'queued' END, available_at = ?
         WHERE claim_id = ? AND status = 'claimed'`,
        lastError,
        options.maxAttempts,
        options.retryAt ? new Date(options.retryAt).toISOString() : '',
        claim.claimId,
      );
    });
  }

  async release(
    claim: OutboxClaim,
    options: { readonly retryAt: string; readonly reason: string },
  ): Promise<void> {
    if (claim === null || typeof claim !== 'object')
      throw new InvalidInputError('claim', 'must be an object');
    assertId(claim.claimId, 'claim.claimId');
    assertTimestamp(options?.retryAt, 'retryAt');
    const reason = typeof options.reason === 'string' ? sanitize(options.reason).slice(0, 2000) : null;
    this.#tx('release', () => {
      this.#run(
        `UPDATE outbox SET status = 'queued', claim_id = NULL, worker = NULL, lease_until = NULL, available_at = ?,
           last_error = ? WHERE claim_id = ? AND status = 'claimed'`,
        new Date(options.retryAt).toISOString(),
        reason,
        claim.claimId,
      );
    });
  }

  async backlog(options: {
    readonly now: string;
    readonly userId?: string | undefined;
  }): Promise<OutboxBacklog> {
    assertTimestamp(options?.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    const now = new Date(options.now).toISOString();
    return this.#op('backlog', () => {
      const row = this.#get(
        `SELECT
           coalesce(sum(status = 'queued'), 0) AS queued,
           coalesce(sum(status = 'claimed'), 0) AS claimed,
           coalesce(sum(status = 'dead'), 0) AS dead,
           coalesce(sum(status = 'claimed' AND lease_until <= ?), 0) AS stale,
           min(CASE WHEN status = 'claimed' AND lease_until > ? THEN lease_until
                    WHEN status = 'queued' AND available_at > ? THEN available_at END) AS next
         FROM outbox WHERE status <> 'done' AND (? IS NULL OR user_id = ?)`,
        now,
        now,
        now,
        options.userId ?? null,
        options.userId ?? null,
      )!;
      return {
        queued: Number(row.queued),
        claimed: Number(row.claimed),
        dead: Number(row.dead),
        staleLeases: Number(row.stale),
        nextClaimableAt: row.next === null || row.next === undefined ? null : String(row.next),
      };
    });
  }

  // ---------------------------------------------------------------- TranscriptStore

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
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    if (!Array.isArray(items)) throw new InvalidInputError('items', 'must be an array');
    const serialised = items.map((item, i) => serialiseItem(item, `items[${i}]`));
    if (options.operationId !== undefined) assertId(options.operationId, 'operationId');
    if (options.operationFingerprint !== undefined && typeof options.operationFingerprint !== 'string') {
      throw new InvalidInputError('operationFingerprint', 'must be a string');
    }
    const fingerprint = options.operationFingerprint ?? '';
    let suffix: string[] = [];
    if (options.replaceSuffix !== undefined) {
      if (!Array.isArray(options.replaceSuffix))
        throw new InvalidInputError('replaceSuffix', 'must be an array');
      suffix = options.replaceSuffix.map((item) => stableJson(item));
    }
    const enqueue = options.enqueue ?? [];
    if (!Array.isArray(enqueue)) throw new InvalidInputError('enqueue', 'must be an array');
    enqueue.forEach((e, i) => {
      const field = `enqueue[${i}]`;
      if (e === null || typeof e !== 'object') throw new InvalidInputError(field, 'must be an object');
      if (!Number.isInteger(e.index) || e.index < 0 || e.index >= items.length) {
        throw new InvalidInputError(`${field}.index`, `must be an index into items (0..${items.length - 1})`);
      }
      assertRole(e.role, `${field}.role`);
      assertText(e.text, `${field}.text`, this.#maxTextBytes);
      assertTimestamp(e.at, `${field}.at`);
      if (e.ref !== undefined) assertText(e.ref, `${field}.ref`, MAX_REF_BYTES, true);
    });

    return this.#tx('appendItems', () => {
      const session = this.#get(
        'SELECT owner_user_id, owner_namespace FROM transcript_sessions WHERE session_id = ?',
        sessionId,
      );
      const unowned = session === undefined || session.owner_user_id === null;
      if (!unowned && !ownedBy(session, scope)) {
        throw new InvalidInputError('owner', 'the session belongs to another scope');
      }
      if (options.operationId !== undefined) {
        const op = this.#get(
          'SELECT fingerprint, positions FROM transcript_operations WHERE session_id = ? AND operation_id = ?',
          sessionId,
          options.operationId,
        );
        if (op) {
          if (op.fingerprint !== fingerprint) {
            throw new InvalidInputError('operationId', 'was already applied with a different fingerprint');
          }
          return { positions: JSON.parse(String(op.positions)) as number[], duplicate: true };
        }
      }
      if (suffix.length > 0) {
        const tail = this.#all(
          'SELECT rid, item FROM transcript_items WHERE session_id = ? ORDER BY position DESC LIMIT ?',
          sessionId,
          suffix.length,
        ).reverse();
        const matches =
          tail.length === suffix.length &&
          tail.every((r, i) => stableJson(parseItem(String(r.item))) === suffix[i]);
        if (!matches)
          throw new InvalidInputError('replaceSuffix', 'does not match the last items of the session');
        for (const r of tail) this.#run('DELETE FROM transcript_items WHERE rid = ?', Number(r.rid));
      }
      // The first owned append records the owner (also of a session written before owners were recorded).
      if (unowned) {
        this.#run(
          `INSERT INTO transcript_sessions (session_id, owner_user_id, owner_namespace) VALUES (?, ?, ?)
             ON CONFLICT (session_id) DO UPDATE SET owner_user_id = excluded.owner_user_id,
               owner_namespace = excluded.owner_namespace`,
          sessionId,
          scope.userId,
          scope.namespace,
        );
      }
      const last = this.#get(
        'SELECT max(position) AS p FROM transcript_items WHERE session_id = ?',
        sessionId,
      );
      let next = last && last.p !== null ? Number(last.p) + 1 : 0;
      const positions: number[] = [];
      for (const item of serialised) {
        this.#run(
          'INSERT INTO transcript_items (session_id, position, item) VALUES (?, ?, ?)',
          sessionId,
          next,
          item,
        );
        positions.push(next++);
      }
      if (enqueue.length > 0) {
        const acceptedAt = isoNow();
        for (const e of enqueue) {
          this.#enqueueOne(
            {
              scope,
              sessionId,
              position: positions[e.index]!,
              role: e.role,
              text: e.text,
              at: e.at,
              ref: e.ref,
            },
            acceptedAt,
          );
        }
      }
      if (options.operationId !== undefined) {
        this.#run(
          'INSERT INTO transcript_operations (session_id, operation_id, fingerprint, positions) VALUES (?, ?, ?, ?)',
          sessionId,
          options.operationId,
          fingerprint,
          JSON.stringify(positions),
        );
      }
      return { positions, duplicate: false };
    });
  }

  async getItems(owner: Scope, sessionId: string, limit?: number): Promise<unknown[]> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    if (limit !== undefined && (typeof limit !== 'number' || Number.isNaN(limit))) {
      throw new InvalidInputError('limit', 'must be a number');
    }
    if (limit !== undefined && limit <= 0) return [];
    return this.#op('getItems', () => {
      // One statement, so the owner check and the read see the same snapshot.
      const rows =
        limit === undefined || limit === Number.POSITIVE_INFINITY
          ? this.#all(
              `SELECT item FROM transcript_items WHERE session_id = ? AND ${VISIBLE} ORDER BY position`,
              sessionId,
              sessionId,
              scope.userId,
              scope.namespace,
            )
          : this.#all(
              `SELECT item FROM (SELECT item, position FROM transcript_items WHERE session_id = ? AND ${VISIBLE}
                 ORDER BY position DESC LIMIT ?) ORDER BY position`,
              sessionId,
              sessionId,
              scope.userId,
              scope.namespace,
              Math.floor(limit),
            );
      return rows.map((r) => parseItem(String(r.item)));
    });
  }

  async popItem(owner: Scope, sessionId: string): Promise<unknown | undefined> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    return this.#tx('popItem', () => {
      if (!this.#visible(scope, sessionId)) return undefined;
      const row = this.#get(
        'SELECT rid, item FROM transcript_items WHERE session_id = ? ORDER BY position DESC LIMIT 1',
        sessionId,
      );
      if (!row) return undefined;
      this.#run('DELETE FROM transcript_items WHERE rid = ?', Number(row.rid));
      return parseItem(String(row.item));
    });
  }

  async clearSession(owner: Scope, sessionId: string): Promise<void> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    this.#tx('clearSession', () => {
      if (!this.#visible(scope, sessionId)) return;
      this.#run('DELETE FROM transcript_items WHERE session_id = ?', sessionId);
      this.#run('DELETE FROM transcript_operations WHERE session_id = ?', sessionId);
    });
  }

  /** Whether `scope` may read and change the session: it owns it, or the session has no owner (yet). */
  #visible(scope: { userId: string; namespace: string }, sessionId: string): boolean {
    const session = this.#get(
      'SELECT owner_user_id, owner_namespace FROM transcript_sessions WHERE session_id = ?',
      sessionId,
    );
    return session === undefined || session.owner_user_id === null || ownedBy(session, scope);
  }
}

/** The SQL condition (parameters: session id, user id, namespace) that the session is visible to a scope. */
const VISIBLE = `NOT EXISTS (SELECT 1 FROM transcript_sessions s WHERE s.session_id = ? AND s.owner_user_id IS NOT NULL
  AND (s.owner_user_id <> ? OR s.owner_namespace <> ?))`;

function ownedBy(session: Row, scope: { userId: string; namespace: string }): boolean {
  return session.owner_user_id === scope.userId && session.owner_namespace === scope.namespace;
}

/** The owner scope of a transcript call, canonical; `InvalidInputError` on field `owner` when it is not a scope. */
function ownerScope(owner: unknown): { userId: string; namespace: string } {
  if (owner === null || typeof owner !== 'object')
    throw new InvalidInputError('owner', 'must be a scope ({ userId, namespace? })');
  const { userId, namespace } = owner as { userId?: unknown; namespace?: unknown };
  assertId(userId, 'owner.userId');
  if (namespace !== undefined && namespace !== null && namespace !== '')
    assertId(namespace, 'owner.namespace');
  return normalizeScope(owner);
}

function serialiseItem(item: unknown, field: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(item);
  } catch (cause) {
    throw new InvalidInputError(field, 'is not JSON-serialisable', { cause });
  }
  if (typeof text !== 'string') throw new InvalidInputError(field, 'is not JSON-serialisable');
  if (Buffer.byteLength(text) > MAX_ITEM_BYTES) {
    throw new InvalidInputError(field, `is over the limit of ${MAX_ITEM_BYTES} bytes`);
  }
  return text;
}

/** The shared search-option checks, with SQLite's cap of 1000 hits. */
function validateSearchOptions(options: SearchOptions): { limit: number; statuses: readonly BeliefStatus[] } {
  return validateSearchOptionsShared(options, 1000);
}

/** The unit-length vector as Float32 bytes, or null for a zero vector. */
function unitBytes(v: Float32Array): Uint8Array | null {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  return n === 0 ? null : vectorToBytes(normalizeVector(v));
}

/** How the vec0 table is laid out; a table of another layout is rebuilt from `belief_embeddings` at open. */
const VEC_LAYOUT = 'unit-l2-large-scopes-2-shards';

function createVecTable(db: DatabaseSync, dimensions: number): void {
  // Unit vectors with L2 distance rank exactly like cosine (d² = 2 - 2·cos) and cost sqlite-vec less per row.
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${VEC_TABLE} USING vec0(
       scope_id integer partition key, shard integer partition key, embedding float[${dimensions}])`,
  );
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('vec_layout', ?)").run(VEC_LAYOUT);
}

function markVecStale(db: DatabaseSync): void {
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('vec_stale', '1')").run();
}

type Run = (sql: string, ...params: (string | number | bigint | null | Uint8Array)[]) => unknown;

/** Runs statements prepared once per distinct SQL text (for the loops at open, outside the store's cache). */
function cachedRun(db: DatabaseSync): Run {
  const statements = new Map<string, StatementSync>();
  return (sql, ...params) => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s.run(...params);
  };
}

/** Replaces a belief's row in the sqlite-vec index. A zero vector stays out: it is similar to nothing (the exact
 * search scores it 0). */
function putVec(run: Run, beliefSeq: number, scopeId: number, embedding: Float32Array): void {
  run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, BigInt(beliefSeq));
  const unit = unitBytes(embedding);
  if (unit === null) return;
  run(
    `INSERT INTO ${VEC_TABLE} (rowid, scope_id, shard, embedding) VALUES (?, ?, ?, ?)`,
    BigInt(beliefSeq),
    BigInt(scopeId),
    BigInt(vecShard(beliefSeq)),
    unit,
  );
}

/** Puts every embedding of a scope into the sqlite-vec index and marks the scope as indexed (inside a write). */
function indexScope(db: DatabaseSync, run: Run, scopeId: number): void {
  for (const r of db
    .prepare('SELECT belief_seq, embedding FROM belief_embeddings WHERE scope_id = ?')
    .iterate(scopeId) as Iterable<Row>) {
    putVec(run, Number(r.belief_seq), scopeId, bytesToVector(r.embedding as Uint8Array));
  }
  run('INSERT OR IGNORE INTO vec_scopes (scope_id) VALUES (?)', scopeId);
}

/** Brings the vec0 index in line with the embeddings table (after writes by a connection without sqlite-vec, or
 * from an older layout): the scopes with at least `minBeliefs` embeddings are indexed. */
function syncVecTable(db: DatabaseSync, dimensions: number, minBeliefs: number): void {
  const exists = db.prepare('SELECT 1 AS x FROM sqlite_master WHERE name = ?').get(VEC_TABLE) !== undefined;
  const stale = db.prepare("SELECT value FROM meta WHERE key = 'vec_stale'").get() as Row | undefined;
  const layout = db.prepare("SELECT value FROM meta WHERE key = 'vec_layout'").get() as Row | undefined;
  if (exists && !stale && layout?.value === VEC_LAYOUT) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    // Dropping (not emptying) gives the pages of every chunk back, so a smaller index takes less room.
    db.exec(`DROP TABLE IF EXISTS ${VEC_TABLE}`);
    db.exec('DELETE FROM vec_scopes');
    createVecTable(db, dimensions);
    const run = cachedRun(db);
    for (const r of db
      .prepare('SELECT scope_id FROM belief_embeddings GROUP BY scope_id HAVING count(*) >= ?')
      .all(minBeliefs) as Row[]) {
      indexScope(db, run, Number(r.scope_id));
    }
    db.exec("DELETE FROM meta WHERE key = 'vec_stale'");
    db.exec('COMMIT');
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Applies every pending migration step, each in its own write transaction. */
export function migrate(db: DatabaseSync, path: string, upTo: number = SQLITE_SCHEMA_VERSION): void {
  for (const step of MIGRATIONS) {
    if (step.version > upTo) break;
    db.exec('BEGIN IMMEDIATE');
    try {
      const current = readSchemaVersion(db);
      if (current > SQLITE_SCHEMA_VERSION) throw new SchemaTooNewError(path, current, SQLITE_SCHEMA_VERSION);
      if (current < step.version) {
        db.exec(step.sql);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)").run(
          String(step.version),
        );
        db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw err;
    }
  }
}

function readSchemaVersion(db: DatabaseSync): number {
  const hasMeta = db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return 0;
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as Row | undefined;
  return row ? Number(row.value) : 0;
}

/** The sqlite-vec loadable extension of this platform, from its npm package; throws when it is not installed. */
function loadableVecPath(): string {
  return sqliteVec.getLoadablePath();
}

/**
 * Opens (creating and migrating when needed) a mem01 SQLite store.
 *
 * Checks, before anything is written: a file that is not a SQLite database or is corrupt → `CorruptStoreError`
 * naming the path; a file written by a newer schema → `SchemaTooNewError` naming both versions; an unwritable
 * folder → `StoreError`. In each case the file is left untouched. On a Node.js older than 22.13 (no
 * `node:sqlite`): `UnsupportedRuntimeError` (code `unsupported_runtime`), before anything is touched.
 */
export function openSqliteStore(options: SqliteStoreOptions = {}): SqliteStore {
  // First, before any file is touched: on a Node.js without node:sqlite this is the one clear error.
  const { DatabaseSync } = loadNodeSqlite();
  const opts = resolveOptions(options);
  const owned = opts.database === null;
  let db: DatabaseSync;
  let path: string;
  if (opts.path !== null) {
    path = opts.path;
    if (existsSync(path)) checkHeader(path);
    prepareFile(path);
    try {
      db = new DatabaseSync(path, { allowExtension: opts.vector !== 'exact' });
    } catch (err) {
      throw mapDriverError(err, path, 'open');
    }
  } else {
    db = opts.database!;
    path = databaseLocation(db);
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${opts.busyTimeoutMs}`);
    // Read before any write: a corrupt file or a newer schema must be refused without touching it.
    let tables: string[];
    try {
      tables = (db.prepare('SELECT name FROM sqlite_master').all() as Row[]).map((r) => String(r.name));
    } catch (err) {
      throw mapDriverError(err, path, 'open');
    }
    const version = tables.includes('meta') ? readSchemaVersion(db) : 0;
    if (version > SQLITE_SCHEMA_VERSION) throw new SchemaTooNewError(path, version, SQLITE_SCHEMA_VERSION);
    if (owned && version === 0 && tables.length > 0) {
      const appId = Number((db.prepare('PRAGMA application_id').get() as Row).application_id);
      if (appId !== APPLICATION_ID) {
        throw new StoreError(
          `${path} is a SQLite database of another application; refusing to use it for mem01`,
        );
      }
    }
    const journal = (db.prepare('PRAGMA journal_mode = WAL').get() as Row | undefined)?.journal_mode;
    if (journal !== 'wal' && path !== ':memory:') {
      throw new StoreError(`${path}: could not switch to WAL journal mode (got ${String(journal)})`);
    }
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('PRAGMA secure_delete = ON');
    // Large reads (vec0 chunks, embedding scans) go through a memory map instead of copies into the page cache.
    db.exec('PRAGMA mmap_size = 1073741824');
    db.exec('PRAGMA cache_size = -32768');
    db.exec(`PRAGMA synchronous = ${opts.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);

    let vectorMode: 'sqlite-vec' | 'exact' = 'exact';
    let vecVersion: string | null = null;
    let vecFailure: string | null = null;
    if (opts.vector !== 'exact') {
      try {
        db.loadExtension(loadableVecPath());
        vecVersion = String((db.prepare('SELECT vec_version() AS v').get() as Row).v);
        vectorMode = 'sqlite-vec';
      } catch (err) {
        vecFailure = err instanceof Error ? err.message : String(err);
        if (opts.vector === 'sqlite-vec') {
          throw new CapabilityError(STORE_NAME, `sqlite-vec (it could not be loaded: ${vecFailure})`);
        }
      }
    }

    migrate(db, path);
    // Per-connection helpers of the searches; temp objects never touch the file.
    db.exec(SEARCH_SETUP_SQL);

    let dimensions = readDimensions(db);
    if (opts.dimensions !== null) {
      if (dimensions !== null && dimensions !== opts.dimensions) {
        throw new ConfigError(
          `${path} stores ${dimensions}-dimension embeddings, but dimensions: ${opts.dimensions} was configured`,
        );
      }
      if (dimensions === null) {
        db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('dimensions', ?)").run(
          String(opts.dimensions),
        );
        dimensions = readDimensions(db);
      }
    }
    if (vectorMode === 'sqlite-vec' && dimensions !== null)
      syncVecTable(db, dimensions, opts.vectorIndexMinBeliefs);

    opts.logger.info(
      vectorMode === 'sqlite-vec'
        ? `[mem01/store-sqlite] ${path}: vector search via sqlite-vec ${vecVersion}`
        : `[mem01/store-sqlite] ${path}: vector search via exact cosine${vecFailure ? ` (sqlite-vec unavailable: ${sanitize(vecFailure).split('\n')[0]})` : ''}`,
    );
    return new SqliteStore(db, {
      path,
      owned,
      vectorMode,
      vecVersion,
      dimensions,
      maxTextBytes: opts.maxTextBytes,
      logger: opts.logger,
      pool:
        owned && path !== ':memory:' && opts.searchWorkers > 0
          ? new SearchPool({
              path,
              size: opts.searchWorkers,
              extensionPath: vectorMode === 'sqlite-vec' ? loadableVecPath() : null,
              busyTimeoutMs: opts.busyTimeoutMs,
            })
          : null,
      vectorIndexMin: opts.vectorIndexMinBeliefs,
    });
  } catch (err) {
    if (owned) {
      try {
        db.close();
      } catch {
        // already failing
      }
    }
    throw mapDriverError(err, path, 'open');
  }
}

function readDimensions(db: DatabaseSync): number | null {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'dimensions'").get() as Row | undefined;
  return row ? Number(row.value) : null;
}

function databaseLocation(db: DatabaseSync): string {
  const withLocation = db as DatabaseSync & { location?: () => string | null };
  try {
    return withLocation.location?.() ?? ':memory:';
  } catch {
    return ':memory:';
  }
}
