import {
  type AppendEnqueue,
  type AuditEvent,
  assertId,
  assertPositiveInteger,
  assertStatuses,
  assertText,
  assertTimestamp,
  BELIEF_STATUSES,
  type Belief,
  type BeliefInsert,
  type BeliefPatch,
  type BeliefStatus,
  CapabilityError,
  type ClaimOptions,
  ClosedError,
  type CommitRequest,
  ConfigError,
  CorruptStoreError,
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
  type Logger,
  NotFoundError,
  newId,
  normalizeScope,
  normalizeVector,
  type OutboxBacklog,
  type OutboxClaim,
  type OutboxEntry,
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
  validateUpdate,
} from '@mem01/engine';
import { Kysely, PostgresDialect, type RawBuilder, sql, type Transaction } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import pgvector from 'pgvector';
import {
  constraintOf,
  detailOf,
  isConnectionLoss,
  isRetryableConflict,
  sqlState,
  toStoreError,
} from './errors.js';
import { migrationProvider, POSTGRES_SCHEMA_VERSION, type VectorMode } from './migrations.js';
import { pgText, pgTextOrNull, searchTerms } from './text.js';

export { POSTGRES_SCHEMA_VERSION } from './migrations.js';

/** Options of {@link openPostgresStore}. Defaults are resolved in one place, {@link resolveOptions}. */
export interface PostgresStoreOptions {
  /** Connection string; default `process.env.DATABASE_URL`. Ignored when `pool` or `db` is given. */
  readonly connectionString?: string | undefined;
  /** A caller-owned pool. `close()` leaves it open. */
  readonly pool?: pg.Pool | undefined;
  /** A caller-owned Kysely instance on the PostgreSQL dialect. `close()` leaves it open. */
  // biome-ignore lint/suspicious/noExplicitAny: the caller's database type is theirs; the store only runs raw SQL
  readonly db?: Kysely<any> | undefined;
  /** Schema holding the tables; default `mem01`. Lower-case letters, digits and `_`, at most 63 characters. */
  readonly schema?: string | undefined;
  /**
   * Embedding dimension, fixed per store at its first migration and checked on every write and search.
   * Default: the stored value, or 384 for a new store. A different value than the stored one is refused.
   */
  readonly dimensions?: number | undefined;
  /**
   * `auto` (default): create the `vector` extension when possible, else keep embeddings in `real[]` and search
   * them by exact cosine (logging one warning). `pgvector`: require the extension. `exact`: never use it.
   * An existing store keeps the mode it was created with.
   */
  readonly vector?: 'auto' | 'pgvector' | 'exact' | undefined;
  /** `statement_timeout` for connections of a pool this store creates; default none. */
  readonly statementTimeoutMs?: number | undefined;
  /** How long to wait for a free connection of a pool this store creates; default 10 000 ms. */
  readonly connectionTimeoutMs?: number | undefined;
  /** Size of a pool this store creates; default 10. */
  readonly maxConnections?: number | undefined;
  /** Where warnings go (for example the fallback to exact cosine). Default: `console.warn` for warnings. */
  readonly logger?: Logger | undefined;
  /** Run migrations when opening; default true. With false, the schema must already be current. */
  readonly migrate?: boolean | undefined;
  /**
   * A user the planner statistics put at no more beliefs than this is searched through the scope index: lexical
   * search skips GIN and vector search scans the user's vectors exactly instead of walking the HNSW graph, which
   * would visit other users' vectors to find this one's. Default 5000.
   */
  readonly smallScopeRows?: number | undefined;
}

interface ResolvedOptions {
  readonly schema: string;
  readonly dimensions: number | null;
  readonly vector: 'auto' | 'pgvector' | 'exact';
  readonly statementTimeoutMs: number | null;
  readonly connectionTimeoutMs: number | null;
  readonly logger: Logger;
  readonly migrate: boolean;
  readonly smallScopeRows: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const DEFAULT_DIMENSIONS = 384;
const MAX_TEXT_BYTES = 1_000_000;
const INSERT_CHUNK = 500;

const defaultLogger: Logger = {
  info: () => {},
  warn: (message) => console.warn(message),
};

function positiveInt(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  assertPositiveInteger(value, field, max);
  return value;
}

function resolveOptions(options: PostgresStoreOptions): ResolvedOptions {
  const schema = options.schema ?? 'mem01';
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new ConfigError(
      `schema must match ${SCHEMA_NAME.source} (lower-case letters, digits, underscore), got ${JSON.stringify(schema)}`,
    );
  }
  const vector = options.vector ?? 'auto';
  if (vector !== 'auto' && vector !== 'pgvector' && vector !== 'exact') {
    throw new ConfigError(`vector must be auto, pgvector or exact, got ${JSON.stringify(vector)}`);
  }
  return {
    schema,
    dimensions:
      options.dimensions === undefined ? null : positiveInt(options.dimensions, 'dimensions', 16_000),
    vector,
    statementTimeoutMs:
      options.statementTimeoutMs === undefined
        ? null
        : positiveInt(options.statementTimeoutMs, 'statementTimeoutMs'),
    connectionTimeoutMs: options.connectionTimeoutMs ?? (options.pool || options.db ? null : 10_000),
    logger: options.logger ?? defaultLogger,
    migrate: options.migrate ?? true,
    smallScopeRows:
      options.smallScopeRows === undefined
        ? SMALL_SCOPE_ROWS
        : positiveInt(options.smallScopeRows, 'smallScopeRows'),
  };
}

/**
 * Opens (and by default migrates) a PostgreSQL store.
 *
 * @example
 * const store = await openPostgresStore({ connectionString: 'postgres://localhost/app' });
 */
export async function openPostgresStore(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = new PostgresStore(options);
  try {
    if (store.options.migrate) await store.migrate();
    else await store.load();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

interface BeliefRow {
  id: string;
  user_id: string;
  namespace: string;
  kind: string;
  subject: string;
  attribute: string;
  value: string;
  statement: string;
  confidence: number;
  status: string;
  supersedes: string | null;
  superseded_by: string | null;
  version: number;
  valid_from: string | null;
  valid_to: string | null;
  stored_at: string;
  updated_at: string;
  invalidated_at: string | null;
  evidence: string;
  source: string;
}

interface OutboxRow {
  seq: string;
  id: string;
  user_id: string;
  namespace: string;
  session_id: string;
  position: number;
  role: string;
  text: string;
  at: string;
  ref: string | null;
  idem_key: string;
  accepted_at: string;
  attempts: number;
  status: string;
  last_error: string | null;
  claim_id: string | null;
  worker: string | null;
}

const BELIEF_COLUMNS = sql.raw(
  'id, user_id, namespace, kind, subject, attribute, value, statement, confidence, status, supersedes, superseded_by, version, valid_from, valid_to, stored_at, updated_at, invalidated_at, evidence, source',
);

const BELIEF_COLUMNS_B = sql.raw(
  'b.id, b.user_id, b.namespace, b.kind, b.subject, b.attribute, b.value, b.statement, b.confidence, b.status, b.supersedes, b.superseded_by, b.version, b.valid_from, b.valid_to, b.stored_at, b.updated_at, b.invalidated_at, b.evidence, b.source',
);

/** Up to this many query words, lexical search first ranks the beliefs holding two of them (an OR of pairs). */
const MAX_PAIR_WORDS = 16;
/**
 * Beliefs holding exactly one of the query's words rank newest first. They are looked for among the scope's newest
 * max(MIN, FACTOR × limit) beliefs first (an ordered walk of the scope index), and through the GIN index only when
 * that window holds too few.
 */
const ONE_WORD_WALK_MIN = 500;
const ONE_WORD_WALK_FACTOR = 20;
/**
 * A query word the statistics put in at most this many beliefs of the table is rare: its GIN posting list is short,
 * so beliefs holding it alone are ranked with those holding two query words.
 */
const RARE_LEXEME_ROWS = 250;
/** Search words whose lexemes are remembered (see `#stems`). */
const STEM_CACHE_SIZE = 10_000;
/** Default of `smallScopeRows`. */
const SMALL_SCOPE_ROWS = 5000;

interface SearchStats {
  readonly at: number;
  /** Lexemes in more than half of all beliefs (from 1000 beliefs on). */
  readonly lexemes: string[];
  /**
   * Share of beliefs holding each of the table's most common lexemes (`most_common_elems`, from 1000 beliefs on),
   * for inverse document frequency; empty without statistics.
   */
  readonly lexemeShares: Map<string, number>;
  /** Share assumed for a lexeme that is not among the most common: the smallest share listed. */
  readonly rareShare: number;
  /** `reltuples` of the beliefs table. */
  readonly rows: number;
  /** Most common user ids with their share of the rows. */
  readonly users: Map<string, number>;
  /** `n_distinct` of user_id (negative: a fraction of the rows). 0: no statistics. */
  readonly distinct: number;
}

/** From this many beliefs on, the lexeme statistics are used (dropping common words, weighting by rarity). */
const MIN_STATS_ROWS = 1000;

/**
 * Weight of a query word found in the share `f` of all beliefs: Lucene's BM25 idf, ln(1 + (1 - f) / f), so a word
 * in 1% of the beliefs weighs 4.6 and one in 40% weighs 0.9. 1 for every word without statistics.
 */
function lexemeWeight(share: number | undefined): number {
  if (share === undefined || !(share > 0)) return 1;
  const f = Math.min(1, Math.max(1e-6, share));
  return Math.log(1 + (1 - f) / f);
}

/** How long the lexeme and user statistics are reused. */
const COMMON_LEXEMES_TTL_MS = 60_000;

function toBelief(r: BeliefRow): Belief {
  return {
    id: r.id,
    scope: { userId: r.user_id, namespace: r.namespace },
    kind: r.kind as Belief['kind'],
    subject: r.subject,
    attribute: r.attribute,
    value: r.value,
    statement: r.statement,
    confidence: Number(r.confidence),
    status: r.status as BeliefStatus,
    supersedes: r.supersedes,
    supersededBy: r.superseded_by,
    version: Number(r.version),
    validFrom: r.valid_from,
    validTo: r.valid_to,
    storedAt: r.stored_at,
    updatedAt: r.updated_at,
    invalidatedAt: r.invalidated_at,
    evidence: JSON.parse(r.evidence) as Belief['evidence'],
    source: r.source as Belief['source'],
  };
}

function toEntry(r: OutboxRow): OutboxEntry {
  return {
    id: r.id,
    scope: { userId: r.user_id, namespace: r.namespace },
    sessionId: r.session_id,
    position: Number(r.position),
    role: r.role as OutboxEntry['role'],
    text: r.text,
    at: r.at,
    ...(r.ref === null ? {} : { ref: r.ref }),
    idempotencyKey: r.idem_key,
    acceptedAt: r.accepted_at,
    seq: Number(r.seq),
    attempts: Number(r.attempts),
    status: r.status as OutboxEntry['status'],
    lastError: r.last_error,
  };
}

/** The engine's timestamp check, returning the value. */
function assertIso(value: unknown, field: string): string {
  assertTimestamp(value, field);
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Db = Kysely<unknown> | Transaction<unknown>;

/**
 * A mem01 store on PostgreSQL: beliefs with a generated `tsvector` (GIN) and pgvector HNSW or exact cosine,
 * transcripts, and a durable outbox shared by worker processes on many hosts.
 *
 * Concurrency: every multi-statement write is one transaction; one active belief per key is a partial unique
 * index; outbox claims lock the user's oldest pending entry with `FOR UPDATE SKIP LOCKED` and refuse users whose
 * previous claim is still leased, so one user's turns are extracted in acceptance order across processes.
 */
export class PostgresStore implements FullStore {
  readonly name = 'postgres';
  /** @internal */
  readonly options: ResolvedOptions;
  readonly #db: Kysely<unknown>;
  readonly #ownsDb: boolean;
  #closed = false;
  /** Cache of `#searchStats`. */
  #common: SearchStats | null = null;
  readonly #stemCache = new Map<string, string[]>();
  /** Per-user tail of this process's enqueues, so turns of one user reach the database in call order. */
  readonly #enqueueTails = new Map<string, Promise<unknown>>();
  #loaded: {
    dimensions: number;
    mode: VectorMode;
    extensionSchema: string | null;
    iterativeScan: boolean;
    schemaVersion: number;
  } | null = null;

  /** Use {@link openPostgresStore}; the constructor does no I/O. */
  constructor(options: PostgresStoreOptions = {}) {
    this.options = resolveOptions(options);
    if (options.db) {
      this.#db = options.db;
      this.#ownsDb = false;
    } else if (options.pool) {
      // A Kysely over a caller's pool: never destroyed by us, since destroy() would end the pool.
      this.#db = new Kysely({ dialect: new PostgresDialect({ pool: options.pool }) });
      this.#ownsDb = false;
    } else {
      const connectionString = options.connectionString ?? process.env.DATABASE_URL;
      if (!connectionString) {
        throw new ConfigError(
          'postgres: no connection string (pass connectionString, pool or db, or set DATABASE_URL)',
        );
      }
      const pool = new pg.Pool({
        connectionString,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: this.options.connectionTimeoutMs ?? 0,
        ...(this.options.statementTimeoutMs === null
          ? {}
          : { statement_timeout: this.options.statementTimeoutMs }),
      });
      // An idle client whose backend is terminated emits 'error'; without a listener that crashes the process.
      const warn = (err: Error) =>
        this.options.logger.warn(`mem01 postgres: connection error: ${sanitize(err.message)}`);
      pool.on('error', warn);
      // A checked-out client whose backend dies emits 'error' too; the failing query reports it to the caller.
      pool.on('connect', (client) => client.on('error', warn));
      this.#db = new Kysely({ dialect: new PostgresDialect({ pool }) });
      this.#ownsDb = true;
    }
  }

  /** The capabilities of the active vector mode (before `migrate`/`load`: as configured). */
  get capabilities(): StoreCapabilities {
    const mode = this.#loaded?.mode ?? (this.options.vector === 'exact' ? 'exact' : 'pgvector');
    return {
      vectorSearch: mode === 'pgvector' ? 'index' : 'exact',
      vectorIndex: mode === 'pgvector' ? 'pgvector-hnsw' : 'exact-cosine',
      lexicalIndex: 'tsvector-gin',
      durableOutbox: true,
      multiProcess: true,
    };
  }

  /** The Kysely instance the store uses (for tests and tooling). */
  get db(): Kysely<unknown> {
    return this.#db;
  }

  get schema(): string {
    return this.options.schema;
  }

  #t(name: string): RawBuilder<unknown> {
    return sql`${sql.id(this.options.schema, name)}`;
  }

  #state() {
    if (this.#closed) throw new ClosedError('postgres store');
    if (!this.#loaded) throw new StoreError('postgres store is not migrated or loaded yet');
    return this.#loaded;
  }

  /**
   * Creates the schema and applies pending migrations. Safe to run from several processes at once: the
   * preparation holds a transaction-scoped advisory lock and kysely's Migrator holds its own advisory lock.
   * Throws `SchemaTooNewError` when the database was written by a newer version.
   */
  async migrate(): Promise<void> {
    const o = this.options;
    try {
      const prep = await this.#db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`mem01:migrate:${o.schema}`}))`.execute(trx);
        await sql`create schema if not exists ${sql.id(o.schema)}`.execute(trx);
        const meta = await this.#readMeta(trx);
        let mode: VectorMode;
        if (meta) {
          mode = meta.mode;
          if (o.vector === 'pgvector' && mode !== 'pgvector') {
            throw new ConfigError(
              `postgres schema ${o.schema} was created without pgvector (exact cosine); vector: 'pgvector' cannot be used with it`,
            );
          }
        } else if (o.vector === 'exact') {
          mode = 'exact';
        } else {
          mode = (await this.#ensureVectorExtension(trx)) ? 'pgvector' : 'exact';
          if (mode === 'exact') {
            if (o.vector === 'pgvector') {
              throw new CapabilityError(this.name, 'the pgvector extension (CREATE EXTENSION vector failed)');
            }
            o.logger.warn(
              `mem01 postgres: the pgvector extension is not available; embeddings are stored as real[] and searched by exact cosine (schema ${o.schema})`,
            );
          }
        }
        const extensionSchema = mode === 'pgvector' ? await this.#extensionSchema(trx) : null;
        return { mode, extensionSchema, dimensions: meta?.dimensions ?? o.dimensions ?? DEFAULT_DIMENSIONS };
      });
      const migrator = new Migrator({
        db: this.#db,
        provider: migrationProvider({ schema: o.schema, ...prep }),
        migrationTableSchema: o.schema,
      });
      const result = await migrator.migrateToLatest();
      if (result.error) throw result.error;
    } catch (err) {
      throw toStoreError(err, 'migrate', this.#limits());
    }
    await this.load();
  }

  /** Reads the schema version, mode and dimensions of an already migrated schema. */
  async load(): Promise<void> {
    const o = this.options;
    try {
      const meta = await this.#readMeta(this.#db);
      if (!meta)
        throw new StoreError(`postgres schema ${o.schema} is not migrated (open with migrate: true)`);
      if (meta.version < POSTGRES_SCHEMA_VERSION) {
        throw new StoreError(
          `postgres schema ${o.schema} has version ${meta.version}, older than ${POSTGRES_SCHEMA_VERSION}; run migrate()`,
        );
      }
      if (o.dimensions !== null && o.dimensions !== meta.dimensions) {
        throw new DimensionMismatchError(
          meta.dimensions,
          o.dimensions,
          `postgres schema ${o.schema} dimensions`,
        );
      }
      let iterativeScan = false;
      let extensionSchema: string | null = null;
      if (meta.mode === 'pgvector') {
        const ext = await sql<{ extversion: string; ns: string }>`
          select extversion, extnamespace::regnamespace::text as ns from pg_extension where extname = 'vector'`.execute(
          this.#db,
        );
        const row = ext.rows[0];
        if (!row)
          throw new CorruptStoreError(
            `postgres schema ${o.schema} uses pgvector but the extension is missing`,
          );
        extensionSchema = row.ns.replace(/^"|"$/g, '');
        const [major = 0, minor = 0] = row.extversion.split('.').map(Number);
        iterativeScan = major > 0 || minor >= 8;
      }
      this.#loaded = {
        dimensions: meta.dimensions,
        mode: meta.mode,
        extensionSchema,
        iterativeScan,
        schemaVersion: meta.version,
      };
    } catch (err) {
      throw toStoreError(err, 'load', this.#limits());
    }
  }

  async #readMeta(db: Db): Promise<{ version: number; dimensions: number; mode: VectorMode } | null> {
    const exists = await sql<{
      t: string | null;
    }>`select to_regclass(${`${this.options.schema}.meta`})::text as t`.execute(db);
    if (!exists.rows[0]?.t) return null;
    const rows = await sql<{ key: string; value: string }>`select key, value from ${this.#t('meta')}`.execute(
      db,
    );
    const map = new Map(rows.rows.map((r) => [r.key, r.value]));
    const version = Number(map.get('schema_version'));
    const dimensions = Number(map.get('dimensions'));
    const mode = map.get('vector_mode');
    if (
      !Number.isInteger(version) ||
      !Number.isInteger(dimensions) ||
      (mode !== 'pgvector' && mode !== 'exact')
    ) {
      throw new CorruptStoreError(`postgres schema ${this.options.schema}: unreadable meta table`);
    }
    if (version > POSTGRES_SCHEMA_VERSION) {
      throw new SchemaTooNewError(`postgres schema ${this.options.schema}`, version, POSTGRES_SCHEMA_VERSION);
    }
    return { version, dimensions, mode };
  }

  async #ensureVectorExtension(trx: Transaction<unknown>): Promise<boolean> {
    const present = await sql`select 1 from pg_extension where extname = 'vector'`.execute(trx);
    if (present.rows.length > 0) return true;
    await sql`savepoint mem01_vector`.execute(trx);
    try {
      await sql`select pg_advisory_xact_lock(hashtext('mem01:create-extension-vector'))`.execute(trx);
      await sql`create extension if not exists vector`.execute(trx);
      await sql`release savepoint mem01_vector`.execute(trx);
      return true;
    } catch {
      await sql`rollback to savepoint mem01_vector`.execute(trx);
      return false;
    }
  }

  async #extensionSchema(db: Db): Promise<string> {
    const r = await sql<{ ns: string }>`
      select extnamespace::regnamespace::text as ns from pg_extension where extname = 'vector'`.execute(db);
    return (r.rows[0]?.ns ?? 'public').replace(/^"|"$/g, '');
  }

  #limits() {
    return {
      statementTimeoutMs: this.options.statementTimeoutMs,
      connectionTimeoutMs: this.options.connectionTimeoutMs,
    };
  }

  /**
   * Runs `fn`, retrying after a rolled-back conflict (serialization/deadlock) and, when `idempotent`, after a
   * lost connection. Other driver errors become typed errors with a clear message.
   */
  async #run<T>(
    operation: string,
    fn: () => Promise<T>,
    retry: { idempotent: boolean; applied?: () => Promise<boolean> } = { idempotent: false },
  ): Promise<T> {
    this.#state();
    const attempts = 4;
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const conflict = isRetryableConflict(err);
        const lost = isConnectionLoss(err);
        if (attempt < attempts && (conflict || (lost && (retry.idempotent || retry.applied)))) {
          await sleep(25 * 2 ** attempt);
          if (lost && retry.applied) {
            // The commit may have reached the server before the connection broke: check before re-running it.
            try {
              if (await retry.applied()) return undefined as T;
            } catch (checkErr) {
              if (!isConnectionLoss(checkErr)) throw toStoreError(checkErr, operation, this.#limits());
              continue;
            }
          }
          continue;
        }
        throw toStoreError(err, operation, this.#limits());
      }
    }
  }

  #tx<T>(fn: (trx: Transaction<unknown>) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(fn);
  }

  // ---------------------------------------------------------------- beliefs

  #embeddingSql(embedding: Float32Array | null | undefined, where: string): RawBuilder<unknown> {
    const state = this.#state();
    const vector = validateEmbedding(embedding, where);
    if (vector === null) return sql`null`;
    if (vector.length !== state.dimensions)
      throw new DimensionMismatchError(state.dimensions, vector.length, where);
    if (state.mode === 'pgvector') {
      return sql`${pgvector.toSql(Array.from(vector))}::${sql.id(state.extensionSchema ?? 'public')}.vector`;
    }
    // Stored unit-length, so a dot product is the cosine similarity.
    return sql`${Array.from(normalizeVector(vector))}::real[]`;
  }

  #insertRows(inserts: readonly BeliefInsert[]): RawBuilder<unknown>[] {
    return inserts.map(({ belief: b, embedding }, i) => {
      const s = normalizeScope(b.scope);
      return sql`(${b.id}, ${s.userId}, ${s.namespace}, ${b.kind}, ${pgText(b.subject)}, ${pgText(b.attribute)}, ${pgText(b.value)}, ${pgText(b.statement)}, ${b.confidence}, ${b.status}, ${b.supersedes}, ${b.supersededBy}, ${b.version}, ${b.validFrom}, ${b.validTo}, ${b.storedAt}, ${b.updatedAt}, ${b.invalidatedAt}, ${JSON.stringify(b.evidence)}, ${b.source}, ${this.#embeddingSql(embedding, `inserts[${i}].embedding`)})`;
    });
  }

  async #insertBeliefs(trx: Transaction<unknown>, inserts: readonly BeliefInsert[]): Promise<void> {
    for (let i = 0; i < inserts.length; i += INSERT_CHUNK) {
      const chunk = inserts.slice(i, i + INSERT_CHUNK);
      try {
        await sql`insert into ${this.#t('beliefs')} (id, user_id, namespace, kind, subject, attribute, value, statement, confidence, status, supersedes, superseded_by, version, valid_from, valid_to, stored_at, updated_at, invalidated_at, evidence, source, embedding)
          values ${sql.join(this.#insertRows(chunk))}`.execute(trx);
      } catch (err) {
        throw this.#uniqueError(err, chunk);
      }
    }
  }

  /** Maps a unique violation to the typed error the contract names. */
  #uniqueError(err: unknown, inserts: readonly BeliefInsert[] = []): unknown {
    if (sqlState(err) !== '23505') return err;
    const constraint = constraintOf(err);
    if (constraint === 'beliefs_one_active_per_key') {
      const detail = detailOf(err);
      const match = /=\((.*)\) already exists/s.exec(detail)?.[1] ?? '';
      for (const { belief: b } of inserts) {
        const s = normalizeScope(b.scope);
        if (match === `${s.userId}, ${s.namespace}, ${pgText(b.subject)}, ${pgText(b.attribute)}`) {
          return new DuplicateActiveBeliefError(b.subject, b.attribute, { cause: err });
        }
      }
      const parts = match.split(', ');
      const attribute = parts.at(-1) ?? 'unknown';
      const subject = parts.at(-2) ?? 'unknown';
      return new DuplicateActiveBeliefError(subject, attribute, { cause: err });
    }
    if (constraint === 'beliefs_pkey')
      return new StoreError('postgres: a belief with this id already exists', { cause: err });
    return err;
  }

  #patchSql(set: BeliefPatch): RawBuilder<unknown>[] {
    const parts: RawBuilder<unknown>[] = [];
    if (set.status !== undefined) parts.push(sql`status = ${set.status}`);
    if (set.supersededBy !== undefined) parts.push(sql`superseded_by = ${set.supersededBy}`);
    if (set.invalidatedAt !== undefined) parts.push(sql`invalidated_at = ${set.invalidatedAt}`);
    if (set.validTo !== undefined) parts.push(sql`valid_to = ${set.validTo}`);
    if (set.confidence !== undefined) parts.push(sql`confidence = ${set.confidence}`);
    if (set.evidence !== undefined) parts.push(sql`evidence = ${JSON.stringify(set.evidence)}`);
    parts.push(sql`updated_at = ${set.updatedAt}`);
    parts.push(sql`version = version + 1`);
    return parts;
  }

  async commit(request: CommitRequest): Promise<void> {
    const scope = normalizeScope(request.scope);
    const inserts = request.inserts ?? [];
    const updates = request.updates ?? [];
    const audit = request.audit ?? [];
    const activeKeys = new Set<string>();
    inserts.forEach(({ belief }, i) => {
      validateBelief(belief, `inserts[${i}]`, MAX_TEXT_BYTES);
      if (!sameScope(belief.scope, scope))
        throw new InvalidInputError(`inserts[${i}].scope`, 'differs from the commit scope');
      this.#embeddingSql(inserts[i]?.embedding, `inserts[${i}].embedding`);
      if (belief.status === 'active') {
        const key = `${belief.subject}\u0001${belief.attribute}`;
        if (activeKeys.has(key)) throw new DuplicateActiveBeliefError(belief.subject, belief.attribute);
        activeKeys.add(key);
      }
    });
    const patches = updates.map((u, i) =>
      this.#patchSql(validateUpdate(u, `updates[${i}]`, MAX_TEXT_BYTES).set),
    );
    for (const [i, a] of audit.entries()) this.#validateAudit(a, scope, `audit[${i}]`);
    const complete = request.complete;
    if (complete) {
      assertId(complete.claimId, 'complete.claimId');
      for (const [i, id] of complete.entryIds.entries()) assertId(id, `complete.entryIds[${i}]`);
    }

    const firstInsert = inserts[0]?.belief.id;
    await this.#run(
      'commit',
      () =>
        this.#tx(async (trx) => {
          if (complete && complete.entryIds.length > 0) {
            const held = await sql<{ id: string }>`
              select id from ${this.#t('outbox')}
              where id = any(${[...complete.entryIds]}::text[]) and claim_id = ${complete.claimId} and status = 'claimed'
                and user_id = ${scope.userId}
              for update`.execute(trx);
            if (held.rows.length !== new Set(complete.entryIds).size) throw new LeaseLostError();
          }
          // Retire before activating: the one-active-per-key index is checked per statement, so an update that
          // activates a belief runs after the updates that move another one out of `active`.
          const order = [...updates.keys()].sort(
            (a, b) =>
              Number(updates[a]?.set.status === 'active') - Number(updates[b]?.set.status === 'active'),
          );
          for (const i of order) {
            const u = updates[i]!;
            let updated: { rows: unknown[] };
            try {
              updated = await sql`
                update ${this.#t('beliefs')} set ${sql.join(patches[i] ?? [])}
                where id = ${u.id} and user_id = ${scope.userId} and namespace = ${scope.namespace} and version = ${u.expectedVersion}
                returning id`.execute(trx);
            } catch (err) {
              throw this.#uniqueError(err);
            }
            if (updated.rows.length === 0) {
              const found = await sql<{ version: number }>`
                select version from ${this.#t('beliefs')}
                where id = ${u.id} and user_id = ${scope.userId} and namespace = ${scope.namespace}`.execute(
                trx,
              );
              const row = found.rows[0];
              if (!row) throw new NotFoundError(`belief ${u.id}`);
              throw new VersionConflictError(u.id, u.expectedVersion, Number(row.version));
            }
          }
          if (inserts.length > 0) await this.#insertBeliefs(trx, inserts);
          await this.#insertAudit(trx, audit);
          if (complete && complete.entryIds.length > 0) {
            await sql`
              update ${this.#t('outbox')} set status = 'done', text = '', claim_id = null, lease_until = null, retry_at = null
              where id = any(${[...complete.entryIds]}::text[])`.execute(trx);
          }
        }),
      {
        idempotent: false,
        ...(firstInsert === undefined
          ? {}
          : {
              applied: async () => {
                const r = await sql`select 1 from ${this.#t('beliefs')} where id = ${firstInsert}`.execute(
                  this.#db,
                );
                return r.rows.length > 0;
              },
            }),
      },
    );
  }

  #validateAudit(a: AuditEvent, scope: Scope, where: string): void {
    const event = validateAuditEvent(a, where);
    if (!sameScope(event.scope, scope))
      throw new InvalidInputError(`${where}.scope`, 'differs from the commit scope');
  }

  async #insertAudit(trx: Transaction<unknown>, audit: readonly AuditEvent[]): Promise<void> {
    if (audit.length === 0) return;
    const rows = audit.map((a) => {
      const s = normalizeScope(a.scope);
      return sql`(${a.at}, ${s.userId}, ${s.namespace}, ${a.beliefId}, ${a.action}, ${a.actor})`;
    });
    await sql`insert into ${this.#t('audit')} (at, user_id, namespace, belief_id, action, actor) values ${sql.join(rows)}`.execute(
      trx,
    );
  }

  async get(scope: Scope, id: string): Promise<Belief | null> {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    return this.#run(
      'get',
      async () => {
        const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
          where id = ${id} and user_id = ${s.userId} and namespace = ${s.namespace}`.execute(this.#db);
        const row = r.rows[0];
        return row ? toBelief(row) : null;
      },
      { idempotent: true },
    );
  }

  async getActiveByKeys(
    scope: Scope,
    keys: readonly { readonly subject: string; readonly attribute: string }[],
  ): Promise<Belief[]> {
    const s = normalizeScope(scope);
    if (!Array.isArray(keys)) throw new InvalidInputError('keys', 'must be an array');
    if (keys.length === 0) return [];
    const subjects = keys.map((k, i) => {
      assertText(k.subject, `keys[${i}].subject`, 1024);
      return pgText(k.subject);
    });
    const attributes = keys.map((k, i) => {
      assertText(k.attribute, `keys[${i}].attribute`, 1024);
      return pgText(k.attribute);
    });
    return this.#run(
      'getActiveByKeys',
      async () => {
        const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
          where user_id = ${s.userId} and namespace = ${s.namespace} and status = 'active'
            and (subject, attribute) in (select * from unnest(${subjects}::text[], ${attributes}::text[]))
          order by id desc`.execute(this.#db);
        return r.rows.map(toBelief);
      },
      { idempotent: true },
    );
  }

  async list(scope: Scope, options: ListOptions = {}): Promise<Page<Belief>> {
    const s = normalizeScope(scope);
    const statuses = assertStatuses(options.statuses);
    const limit = options.limit === undefined ? 100 : positiveInt(options.limit, 'limit', 1000);
    const cursor = options.cursor ?? null;
    if (cursor !== null) assertId(cursor, 'cursor');
    return this.#run(
      'list',
      async () => {
        const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
          where user_id = ${s.userId} and namespace = ${s.namespace} and status = any(${statuses}::text[])
            ${cursor === null ? sql`` : sql`and id < ${cursor}`}
          order by id desc limit ${limit + 1}`.execute(this.#db);
        const items = r.rows.slice(0, limit).map(toBelief);
        return { items, nextCursor: r.rows.length > limit ? (items.at(-1)?.id ?? null) : null };
      },
      { idempotent: true },
    );
  }

  /**
   * Lexical search. Score: the sum of the weights of the distinct query lexemes a belief holds, plus `ts_rank_cd`
   * (normalised to [0, 1)). A lexeme's weight is its inverse document frequency
   * ({@link lexemeWeight}) from the planner's statistics of the `tsv` column: a rare word counts for more than a
   * common one, as in BM25. Without statistics (fewer than 1000 beliefs, or before ANALYZE) every weight is 1 and
   * the score is the word count. Ties go to the newer belief (higher id).
   *
   * Cost: ranking needs each candidate's row, and a few query words can match thousands of one user's beliefs.
   * So, inside one statement: (1) the beliefs holding at least two of the lexemes or one rare lexeme (an OR of
   * pairs and rare lexemes, answered by the GIN index) are ranked; (2) only if those are fewer than `limit`,
   * one-word matches are taken from the scope's newest beliefs (an ordered walk of the scope index over a bounded window), and (3) only if that window
   * holds too few, through the GIN index. Query words found in more than half of all beliefs (from the planner's
   * statistics of the `tsv` column, see `#searchStats`) are dropped first, as the SQLite store does. With more
   * than {@link MAX_PAIR_WORDS} lexemes every match is scored. The lexemes come from PostgreSQL's stemmer
   * (`#stems`, cached), so the statement holds them as constants: each weight is a cheap `@@` test per row.
   */
  async searchLexical(scope: Scope, query: string, options: SearchOptions): Promise<LexicalHit[]> {
    const s = normalizeScope(scope);
    if (typeof query !== 'string') throw new InvalidInputError('query', 'must be a string');
    const limit = positiveInt(options?.limit, 'limit', 10_000);
    const statuses = assertStatuses(options.statuses);
    const terms = searchTerms(query);
    if (terms.length === 0) return [];
    return this.#run(
      'searchLexical',
      async () => {
        const stats = await this.#searchStats();
        const common = new Set(stats.lexemes);
        const lexemes = [...new Set((await this.#stems(terms)).flat())].filter((l) => !common.has(l)).sort();
        if (lexemes.length === 0) return [];
        const withStats = stats.lexemeShares.size > 0;
        const shareOf = (l: string) =>
          withStats ? (stats.lexemeShares.get(l) ?? stats.rareShare) : undefined;
        // Each lexeme is a quoted tsquery operand, bound as a parameter: nothing is parsed as syntax.
        const operand = (l: string) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
        const q = lexemes.map(operand).join(' | ');
        // Queries of many words (unusual) score every match; their OR of pairs would be too large.
        const tiered = lexemes.length <= MAX_PAIR_WORDS;
        // Stage 1 holds the beliefs with two of the lexemes, or with one rare lexeme (in at most RARE_LEXEME_ROWS
        // beliefs of the table): its GIN posting list is short, so its one-word matches are cheap to find.
        const stage1: string[] = [];
        for (const [i, a] of tiered ? lexemes.entries() : []) {
          for (const b of lexemes.slice(i + 1)) stage1.push(`${operand(a)} & ${operand(b)}`);
          const f = shareOf(a);
          if (f !== undefined && f * stats.rows <= RARE_LEXEME_ROWS) stage1.push(operand(a));
        }
        const q2 = stage1.join(' | ');
        // A user holding few of the table's rows: their rows, found through the scope index, are fewer than
        // the GIN posting lists of common words across all users, so the GIN index is kept out of stage 1.
        const tsv = this.#smallScope(stats, s.userId) ? sql`coalesce(b.tsv, ''::tsvector)` : sql`b.tsv`;
        const inStage1 = q2 === '' ? sql`false` : sql`${tsv} @@ ${q2}::tsquery`;
        const oneWord = sql`${tsv} @@ ${q}::tsquery and not (${inStage1})`;
        const beliefs = this.#t('beliefs');
        // One status as an equality, so the scope index (user_id, namespace, status, id desc) yields id order.
        const statusFilter =
          statuses.length === 1 ? sql`b.status = ${statuses[0]}` : sql`b.status = any(${statuses}::text[])`;
        const scoped = sql`b.user_id = ${s.userId} and b.namespace = ${s.namespace} and ${statusFilter}`;
        // The weights of the query lexemes the belief holds, summed, plus ts_rank_cd (normalised to [0, 1)).
        const weights = lexemes.map(
          (l) =>
            sql`(case when b.tsv @@ ${operand(l)}::tsquery then ${lexemeWeight(shareOf(l))}::float8 else 0 end)`,
        );
        const score = sql`${sql.join(weights, sql` + `)} + ts_rank_cd(b.tsv, ${q}::tsquery, 32)`;
        const walk = Math.max(ONE_WORD_WALK_MIN, ONE_WORD_WALK_FACTOR * limit);
        const r = !tiered
          ? await sql<BeliefRow & { score: number }>`
          select ${BELIEF_COLUMNS_B}, ${score} as score from ${beliefs} b
          where ${scoped} and ${tsv} @@ ${q}::tsquery
          order by score desc, b.id desc limit ${limit}`.execute(this.#db)
          : await sql<BeliefRow & { score: number }>`
          with s1 as materialized (
            select ${BELIEF_COLUMNS_B}, ${score} as score from ${beliefs} b
            where ${scoped} and ${inStage1}
            order by score desc, b.id desc limit ${limit}
          ), w as materialized (
            select ${BELIEF_COLUMNS_B}, ${score} as score from (
              select ${BELIEF_COLUMNS_B}, b.tsv from ${beliefs} b
              where (select count(*) from s1) < ${limit} and ${scoped}
              order by b.id desc limit ${walk}) b
            where ${oneWord}
            order by score desc, b.id desc limit ${limit}
          ), enough as materialized (
            select (select count(*) from s1) + (select count(*) from w) >= ${limit} as v
          )
          select * from s1
          union all
          select * from w where (select v from enough)
          union all
          (select ${BELIEF_COLUMNS_B}, ${score} as score from ${beliefs} b
            where not (select v from enough) and ${scoped} and ${oneWord}
            order by score desc, b.id desc limit ${limit})`.execute(this.#db);
        return r.rows
          .map((row) => ({ belief: toBelief(row), score: Number(row.score) }))
          .sort(
            (a, b) =>
              b.score - a.score || (a.belief.id < b.belief.id ? 1 : a.belief.id > b.belief.id ? -1 : 0),
          )
          .slice(0, limit);
      },
      { idempotent: true },
    );
  }

  /**
   * The `english` lexemes of each search word (none for a stop word), from PostgreSQL's own parser and stemmer so
   * they match the `tsv` column exactly. Stemming never changes, so results are kept (up to
   * {@link STEM_CACHE_SIZE} words, oldest dropped first) and a repeated word costs no round trip.
   */
  async #stems(terms: readonly string[]): Promise<string[][]> {
    const missing = terms.filter((t) => !this.#stemCache.has(t));
    if (missing.length > 0) {
      const r = await sql<{ t: string; l: string[] | null }>`
        select t, tsvector_to_array(to_tsvector('english'::regconfig, t)) as l from unnest(${missing}::text[]) as t`.execute(
        this.#db,
      );
      for (const row of r.rows) {
        if (this.#stemCache.size >= STEM_CACHE_SIZE) {
          const oldest = this.#stemCache.keys().next().value;
          if (oldest !== undefined) this.#stemCache.delete(oldest);
        }
        this.#stemCache.set(row.t, row.l ?? []);
      }
    }
    return terms.map((t) => this.#stemCache.get(t) ?? []);
  }

  /**
   * The planner's statistics the searches use (kept by ANALYZE/autovacuum), re-read once a minute:
   * - lexemes found in more than half of all beliefs (`pg_stats.most_common_elems` of `tsv`), from 1000 beliefs
   *   on. Such a word says nothing about which belief is meant (every statement reads "The user ..."), but
   *   matching it would make the search rank most of the user's beliefs;
   * - the `user_id` distribution, to tell a user holding a few of the table's rows from one holding most of them
   *   (the estimate the planner makes).
   */
  async #searchStats(): Promise<SearchStats> {
    const now = Date.now();
    const cached = this.#common;
    if (cached && now - cached.at < COMMON_LEXEMES_TTL_MS) return cached;
    const schema = this.options.schema;
    const r = await sql<{
      elems: string[] | null;
      elemFreqs: number[] | null;
      rows: number | null;
      users: string[] | null;
      freqs: number[] | null;
      distinct: number | null;
    }>`
      select
        s.most_common_elems::text::text[] as elems, s.most_common_elem_freqs::float8[] as "elemFreqs",
        (select c.reltuples::float8 from pg_class c where c.oid = to_regclass(${`${schema}.beliefs`})) as rows,
        u.most_common_vals::text::text[] as users, u.most_common_freqs::float8[] as freqs, u.n_distinct::float8 as distinct
      from (select 1) one
      left join pg_stats s on s.schemaname = ${schema} and s.tablename = 'beliefs' and s.attname = 'tsv'
      left join pg_stats u on u.schemaname = ${schema} and u.tablename = 'beliefs' and u.attname = 'user_id'`.execute(
      this.#db,
    );
    const row = r.rows[0];
    const rows = Number(row?.rows ?? 0);
    // most_common_elem_freqs lists one share per element, then the smallest and largest of those and the share
    // of null elements.
    const elems = rows >= MIN_STATS_ROWS ? (row?.elems ?? []) : [];
    const elemFreqs = row?.elemFreqs ?? [];
    const lexemeShares = new Map<string, number>();
    elems.forEach((e, i) => {
      const f = Number(elemFreqs[i]);
      if (typeof e === 'string' && Number.isFinite(f) && f > 0) lexemeShares.set(e, f);
    });
    const smallest = Number(elemFreqs[elems.length]);
    const stats: SearchStats = {
      at: now,
      lexemes: [...lexemeShares].filter(([, f]) => f > 0.5).map(([e]) => e),
      lexemeShares,
      rareShare: Number.isFinite(smallest) && smallest > 0 ? smallest : 0,
      rows,
      users: new Map((row?.users ?? []).map((u, i) => [u, Number(row?.freqs?.[i] ?? 0)])),
      distinct: Number(row?.distinct ?? 0),
    };
    this.#common = stats;
    return stats;
  }

  /** Whether the statistics put the user at no more than `smallScopeRows` rows. */
  #smallScope(stats: SearchStats, userId: string): boolean {
    const share = PostgresStore.#userShare(stats, userId);
    return share !== null && share * stats.rows <= this.options.smallScopeRows;
  }

  /** The planner's estimate of a user's share of all beliefs, or null without statistics. */
  static #userShare(stats: SearchStats, userId: string): number | null {
    if (stats.rows <= 0 || stats.distinct === 0) return null;
    const mcv = stats.users.get(userId);
    if (mcv !== undefined) return mcv;
    const distinct = stats.distinct > 0 ? stats.distinct : -stats.distinct * stats.rows;
    const rest = 1 - [...stats.users.values()].reduce((a, b) => a + b, 0);
    return Math.max(0, rest) / Math.max(1, distinct - stats.users.size);
  }

  async searchVector(scope: Scope, vector: Float32Array, options: SearchOptions): Promise<VectorHit[]> {
    const s = normalizeScope(scope);
    const state = this.#state();
    if (validateEmbedding(vector, 'vector') === null)
      throw new InvalidInputError('vector', 'must be a Float32Array');
    if (vector.length !== state.dimensions)
      throw new DimensionMismatchError(state.dimensions, vector.length, 'query vector');
    const limit = positiveInt(options?.limit, 'limit', 10_000);
    const statuses = assertStatuses(options.statuses);
    const scopeFilter = sql`user_id = ${s.userId} and namespace = ${s.namespace} and status = any(${statuses}::text[]) and embedding is not null`;
    const toHits = (rows: (BeliefRow & { score: number | string | null })[]) =>
      rows
        .map((row) => {
          const score = Number(row.score);
          return { belief: toBelief(row), score: Number.isFinite(score) ? score : 0 };
        })
        .sort(
          (a, b) => b.score - a.score || (a.belief.id < b.belief.id ? 1 : a.belief.id > b.belief.id ? -1 : 0),
        );

    if (state.mode === 'exact') {
      const q = Array.from(normalizeVector(vector));
      return this.#run(
        'searchVector',
        async () => {
          const r = await sql<BeliefRow & { score: number }>`
            select ${BELIEF_COLUMNS}, (select sum(x::float8 * y::float8) from unnest(embedding, ${q}::real[]) as u(x, y)) as score
            from ${this.#t('beliefs')} where ${scopeFilter}
            order by score desc nulls last, id desc limit ${limit}`.execute(this.#db);
          return toHits(r.rows);
        },
        { idempotent: true },
      );
    }

    const ext = sql.id(state.extensionSchema ?? 'public');
    const q = sql`${pgvector.toSql(Array.from(vector))}::${ext}.vector`;
    const distance = sql`embedding OPERATOR(${ext}.<=>) ${q}`;
    // An exact scan over the scope's rows. Ordering by the similarity, not by the `<=>` operator itself, keeps
    // the planner off the HNSW index (an index can only serve ORDER BY column <=> constant); the scope index
    // finds the rows and a top-N sort keeps the best.
    const exact = async () => {
      const r = await sql<BeliefRow & { score: number }>`
        select ${BELIEF_COLUMNS}, 1 - (${distance}) as score from ${this.#t('beliefs')} where ${scopeFilter}
        order by score desc, id desc limit ${limit}`.execute(this.#db);
      return toHits(r.rows);
    };
    return this.#run(
      'searchVector',
      async () => {
        // A scope the statistics put at a few thousand rows is scanned exactly: that costs well under a
        // millisecond per thousand rows, its results are exact, and an index scan filtered down to one user's
        // 0.1% of a big table would walk many other users' vectors and still come back short.
        if (this.#smallScope(await this.#searchStats(), s.userId)) return exact();
        // HNSW with a WHERE filter can stop early; iterative scans keep going until `limit` rows pass the filter.
        // The settings are made transaction-local by the statement itself: the lateral join evaluates them
        // before the index scan starts, and they end with the statement. One round trip instead of five
        // (begin, two set_config, select, commit).
        const ef = String(Math.min(1000, Math.max(40, limit * 2)));
        const settings = state.iterativeScan
          ? sql`select set_config('hnsw.ef_search', ${ef}, true) as ef, set_config('hnsw.iterative_scan', 'strict_order', true) as it offset 0`
          : sql`select set_config('hnsw.ef_search', ${ef}, true) as ef, 'off' as it offset 0`;
        const r = await sql<BeliefRow & { score: number }>`
          select h.* from (${settings}) as cfg cross join lateral (
            select ${BELIEF_COLUMNS}, 1 - (${distance}) as score
            from ${this.#t('beliefs')} where ${scopeFilter} and cfg.ef is not null and cfg.it is not null
            order by ${distance} limit ${limit}) as h`.execute(this.#db);
        if (r.rows.length >= limit) return toHits(r.rows);
        // Fewer than asked: either the scope has fewer embedded beliefs or the index scan gave up early. An exact
        // scan settles it.
        return exact();
      },
      { idempotent: true },
    );
  }

  async history(scope: Scope, options: { readonly id?: string | undefined } = {}): Promise<Belief[]> {
    const s = normalizeScope(scope);
    const id = options?.id;
    if (id !== undefined) assertId(id, 'id');
    return this.#run(
      'history',
      async () => {
        if (id === undefined) {
          const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
            where user_id = ${s.userId} and namespace = ${s.namespace} order by stored_at, id`.execute(
            this.#db,
          );
          return r.rows.map(toBelief);
        }
        const found = new Map<string, Belief>();
        const queried = new Set<string>();
        let frontier = [id];
        while (frontier.length > 0) {
          for (const x of frontier) queried.add(x);
          const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
            where user_id = ${s.userId} and namespace = ${s.namespace}
              and (id = any(${frontier}::text[]) or supersedes = any(${frontier}::text[]) or superseded_by = any(${frontier}::text[]))`.execute(
            this.#db,
          );
          const next = new Set<string>();
          for (const row of r.rows) {
            const b = toBelief(row);
            found.set(b.id, b);
            for (const link of [b.id, b.supersedes, b.supersededBy])
              if (link && !queried.has(link)) next.add(link);
          }
          if (found.size === 0) return [];
          frontier = [...next];
        }
        return [...found.values()].sort((a, b) =>
          a.storedAt < b.storedAt ? -1 : a.storedAt > b.storedAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
        );
      },
      { idempotent: true },
    );
  }

  async forget(
    scope: Scope,
    id: string,
    options: { readonly at: string; readonly expectedVersion?: number | undefined },
  ): Promise<Belief> {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    const at = assertIso(options?.at, 'at');
    const expected = options.expectedVersion;
    if (expected !== undefined && !Number.isInteger(expected))
      throw new InvalidInputError('expectedVersion', 'must be an integer');
    return this.#run('forget', () =>
      this.#tx(async (trx) => {
        const r = await sql<BeliefRow>`select ${BELIEF_COLUMNS} from ${this.#t('beliefs')}
          where id = ${id} and user_id = ${s.userId} and namespace = ${s.namespace} for update`.execute(trx);
        const row = r.rows[0];
        if (!row) throw new NotFoundError(`belief ${id}`);
        const current = toBelief(row);
        if (current.status === 'forgotten') return current;
        if (expected !== undefined && expected !== current.version) {
          throw new VersionConflictError(id, expected, current.version);
        }
        const updated = await sql<BeliefRow>`update ${this.#t('beliefs')}
          set subject = '', attribute = '', value = '', statement = '', evidence = '[]', embedding = null,
              status = 'forgotten', invalidated_at = ${at}, updated_at = ${at}, version = version + 1
          where id = ${id} returning ${BELIEF_COLUMNS}`.execute(trx);
        // The turns the belief came from may still sit in the outbox (queued or dead): erase their text too.
        const sessions = current.evidence.map((e) => e.sessionId);
        const positions = current.evidence.map((e) => e.position);
        if (sessions.length > 0) {
          await sql`update ${this.#t('outbox')} set text = ''
            where user_id = ${s.userId}
              and (session_id, position) in (select * from unnest(${sessions}::text[], ${positions}::int[]))`.execute(
            trx,
          );
        }
        await this.#redactTranscripts(trx, s.userId, current);
        await this.#insertAudit(trx, [{ at, scope: s, beliefId: id, action: 'forget', actor: 'user' }]);
        const out = updated.rows[0];
        if (!out) throw new StoreError('postgres: forget updated no row');
        return toBelief(out);
      }),
    );
  }

  /** The engine's forget policy for transcripts ({@link redactTranscriptItem}): evidence turns lose their text,
   * the user's other items each occurrence of the belief's value and statement. Sessions of other users are never
   * touched. Runs inside the forget transaction. */
  async #redactTranscripts(trx: Transaction<unknown>, userId: string, belief: Belief): Promise<void> {
    const needles = forgetNeedles(belief);
    const sessions = belief.evidence.map((e) => e.sessionId);
    const positions = belief.evidence.map((e) => e.position);
    const notOthers = sql`not exists (select 1 from ${this.#t('transcript_sessions')} ts
      where ts.session_id = i.session_id and ts.user_id is not null and ts.user_id <> ${userId})`;
    const whole =
      sessions.length === 0
        ? []
        : (
            await sql<{ session_id: string; position: number; item: string }>`
              select i.session_id, i.position, i.item from ${this.#t('transcript_items')} i
              where (i.session_id, i.position) in (select * from unnest(${sessions}::text[], ${positions}::int[]))
                and ${notOthers}`.execute(trx)
          ).rows;
    const partial =
      needles.length === 0
        ? []
        : (
            await sql<{ session_id: string; position: number; item: string }>`
              select i.session_id, i.position, i.item from ${this.#t('transcript_items')} i
              where i.session_id in (select session_id from ${this.#t('transcript_sessions')} where user_id = ${userId})
                and (${sql.join(
                  needles.map(
                    (n) => sql`strpos(lower(i.item), lower(${JSON.stringify(n).slice(1, -1)})) > 0`,
                  ),
                  sql` or `,
                )})`.execute(trx)
          ).rows;
    const done = new Set<string>();
    for (const [rows, isWhole] of [
      [whole, true],
      [partial, false],
    ] as const) {
      for (const row of rows) {
        const key = `${row.session_id}\u0000${row.position}`;
        if (done.has(key)) continue;
        done.add(key);
        const next = redactTranscriptItem(JSON.parse(row.item) as unknown, { whole: isWhole, needles });
        if (next === null) continue;
        await sql`update ${this.#t('transcript_items')} set item = ${JSON.stringify(next)}
          where session_id = ${row.session_id} and position = ${row.position}`.execute(trx);
      }
    }
  }

  async getEmbeddings(scope: Scope, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const s = normalizeScope(scope);
    if (!Array.isArray(ids)) throw new InvalidInputError('ids', 'must be an array');
    for (const [i, id] of ids.entries()) assertId(id, `ids[${i}]`);
    const state = this.#state();
    if (ids.length === 0) return new Map();
    return this.#run(
      'getEmbeddings',
      async () => {
        // pgvector's text form is parsed by the pgvector package; real[] arrives as numbers from node-pg.
        const r = await sql<{ id: string; e: string | number[] }>`
          select id, ${state.mode === 'pgvector' ? sql`embedding::text` : sql`embedding`} as e from ${this.#t('beliefs')}
          where user_id = ${s.userId} and namespace = ${s.namespace} and id = any(${[...ids]}::text[])
            and status <> 'forgotten' and embedding is not null`.execute(this.#db);
        const out = new Map<string, Float32Array>();
        for (const row of r.rows) {
          const values = typeof row.e === 'string' ? (pgvector.fromSql(row.e) as number[]) : row.e;
          out.set(row.id, Float32Array.from(values));
        }
        return out;
      },
      { idempotent: true },
    );
  }

  async importBeliefs(records: readonly BeliefInsert[]): Promise<{ inserted: number; skipped: number }> {
    if (!Array.isArray(records)) throw new InvalidInputError('records', 'must be an array');
    const seen = new Set<string>();
    const activeKeys = new Set<string>();
    records.forEach((r, i) => {
      if (r === null || typeof r !== 'object')
        throw new InvalidInputError(`records[${i}]`, 'must be an object');
      validateBelief(r.belief, `records[${i}].belief`, MAX_TEXT_BYTES);
      this.#embeddingSql(r.embedding, `records[${i}].embedding`);
      if (seen.has(r.belief.id)) throw new InvalidInputError(`records[${i}].belief.id`, 'appears twice');
      seen.add(r.belief.id);
      if (r.belief.status === 'active') {
        const s = normalizeScope(r.belief.scope);
        const key = stableJson([s.userId, s.namespace, r.belief.subject, r.belief.attribute]);
        if (activeKeys.has(key)) throw new DuplicateActiveBeliefError(r.belief.subject, r.belief.attribute);
        activeKeys.add(key);
      }
    });
    if (records.length === 0) return { inserted: 0, skipped: 0 };
    return this.#run(
      'importBeliefs',
      () =>
        this.#tx(async (trx) => {
          const ids = records.map((r) => r.belief.id);
          const existing = new Set<string>();
          for (let i = 0; i < ids.length; i += 10_000) {
            const r = await sql<{ id: string }>`select id from ${this.#t('beliefs')}
              where id = any(${ids.slice(i, i + 10_000)}::text[])`.execute(trx);
            for (const row of r.rows) existing.add(row.id);
          }
          const fresh = records.filter((r) => !existing.has(r.belief.id));
          await this.#insertBeliefs(trx, fresh);
          return { inserted: fresh.length, skipped: records.length - fresh.length };
        }),
      // Re-running converges: ids already present are skipped.
      { idempotent: true },
    );
  }

  async eraseUser(userId: string): Promise<EraseReceipt> {
    assertId(userId, 'userId');
    return this.#run(
      'eraseUser',
      () =>
        this.#tx(async (trx) => {
          const count = async (q: RawBuilder<unknown>) =>
            Number((await q.execute(trx)).numAffectedRows ?? 0n);
          const beliefs = await count(sql`delete from ${this.#t('beliefs')} where user_id = ${userId}`);
          const auditEvents = await count(sql`delete from ${this.#t('audit')} where user_id = ${userId}`);
          const outboxEntries = await count(sql`delete from ${this.#t('outbox')} where user_id = ${userId}`);
          const owned = sql`(select session_id from ${this.#t('transcript_sessions')} where user_id = ${userId})`;
          const transcriptItems = await count(
            sql`delete from ${this.#t('transcript_items')} where session_id in ${owned}`,
          );
          await sql`delete from ${this.#t('transcript_operations')} where session_id in ${owned}`.execute(
            trx,
          );
          await sql`delete from ${this.#t('transcript_sessions')} where user_id = ${userId}`.execute(trx);
          return { beliefs, outboxEntries, transcriptItems, auditEvents };
        }),
      { idempotent: true },
    );
  }

  async listScopes(): Promise<ScopeSummary[]> {
    return this.#run(
      'listScopes',
      async () => {
        const r = await sql<{ user_id: string; namespace: string; status: string; n: string }>`
          select user_id, namespace, status, count(*) as n from ${this.#t('beliefs')}
          group by user_id, namespace, status`.execute(this.#db);
        const map = new Map<string, { scope: Scope; counts: Record<BeliefStatus, number> }>();
        for (const row of r.rows) {
          const key = stableJson([row.user_id, row.namespace]);
          let entry = map.get(key);
          if (!entry) {
            const counts = Object.fromEntries(BELIEF_STATUSES.map((st) => [st, 0])) as Record<
              BeliefStatus,
              number
            >;
            entry = { scope: { userId: row.user_id, namespace: row.namespace }, counts };
            map.set(key, entry);
          }
          entry.counts[row.status as BeliefStatus] = Number(row.n);
        }
        const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
        return [...map.values()].sort(
          (a, b) =>
            cmp(a.scope.userId, b.scope.userId) || cmp(a.scope.namespace ?? '', b.scope.namespace ?? ''),
        );
      },
      { idempotent: true },
    );
  }

  async auditLog(
    scope: Scope,
    options: { readonly beliefId?: string; readonly limit?: number } = {},
  ): Promise<AuditEvent[]> {
    const s = normalizeScope(scope);
    if (options.beliefId !== undefined) assertId(options.beliefId, 'beliefId');
    const limit = options.limit === undefined ? 10_000 : positiveInt(options.limit, 'limit');
    return this.#run(
      'auditLog',
      async () => {
        const r = await sql<{ at: string; belief_id: string | null; action: string; actor: string }>`
          select at, belief_id, action, actor from ${this.#t('audit')}
          where user_id = ${s.userId} and namespace = ${s.namespace}
            ${options.beliefId === undefined ? sql`` : sql`and belief_id = ${options.beliefId}`}
          order by seq limit ${limit}`.execute(this.#db);
        return r.rows.map((row) => ({
          at: row.at,
          scope: { userId: s.userId, namespace: s.namespace },
          beliefId: row.belief_id,
          action: row.action as AuditEvent['action'],
          actor: row.actor,
        }));
      },
      { idempotent: true },
    );
  }

  async info(): Promise<StoreInfo> {
    const state = this.#state();
    const outbox = await this.backlog({ now: isoNow() });
    return {
      name: this.name,
      schemaVersion: state.schemaVersion,
      capabilities: this.capabilities,
      dimensions: state.dimensions,
      outbox,
    };
  }

  /**
   * Runs ANALYZE on the beliefs table and re-reads the statistics the searches use (lexeme rarity, common words,
   * each user's share of the rows) on the next search. Autovacuum does the same on its own schedule; call this
   * after a bulk import to have the searches use the new data's statistics at once.
   */
  async analyze(): Promise<void> {
    this.#state();
    await this.#run(
      'analyze',
      async () => {
        await sql`analyze ${this.#t('beliefs')}`.execute(this.#db);
      },
      { idempotent: true },
    );
    this.#common = null;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDb) await this.#db.destroy();
  }

  // ---------------------------------------------------------------- outbox

  #validateInput(e: OutboxInput, where: string): void {
    validateOutboxInput(e, where, MAX_TEXT_BYTES);
  }

  async #insertOutbox(db: Db, entries: readonly OutboxInput[]): Promise<number> {
    let accepted = 0;
    const acceptedAt = isoNow();
    for (let i = 0; i < entries.length; i += INSERT_CHUNK) {
      const rows = entries.slice(i, i + INSERT_CHUNK).map((e) => {
        const s = normalizeScope(e.scope);
        return sql`(${newId()}, ${s.userId}, ${s.namespace}, ${e.sessionId}, ${e.position}, ${e.role}, ${pgText(e.text)}, ${e.at}, ${pgTextOrNull(e.ref)}, ${idempotencyKey(e.sessionId, e.position, e.text)}, ${acceptedAt})`;
      });
      const r =
        await sql`insert into ${this.#t('outbox')} (id, user_id, namespace, session_id, position, role, text, at, ref, idem_key, accepted_at)
        values ${sql.join(rows)} on conflict (idem_key) do nothing returning id`.execute(db);
      accepted += r.rows.length;
    }
    return accepted;
  }

  /**
   * Runs `fn` after every earlier call of this store for the same users has settled. Acceptance order is the
   * order of the outbox sequence; without this, two calls racing on different pool connections could commit in
   * the opposite order of the calls. Registration is synchronous, so the wait graph follows call order.
   */
  #inUserOrder<T>(userIds: Iterable<string>, fn: () => Promise<T>): Promise<T> {
    const users = [...new Set(userIds)];
    const before = users.map((u) => this.#enqueueTails.get(u)).filter((p) => p !== undefined);
    const run = Promise.allSettled(before).then(fn);
    const tail = run.catch(() => undefined);
    for (const u of users) this.#enqueueTails.set(u, tail);
    void tail.then(() => {
      for (const u of users) if (this.#enqueueTails.get(u) === tail) this.#enqueueTails.delete(u);
    });
    return run;
  }

  async enqueue(entries: readonly OutboxInput[]): Promise<{ accepted: number; duplicates: number }> {
    if (!Array.isArray(entries)) throw new InvalidInputError('entries', 'must be an array');
    for (const [i, e] of entries.entries()) this.#validateInput(e, `entries[${i}]`);
    if (entries.length === 0) return { accepted: 0, duplicates: 0 };
    // Idempotent by key, so a retry after a lost connection converges instead of duplicating.
    const accepted = await this.#inUserOrder(
      entries.map((e) => e.scope.userId),
      () =>
        this.#run('enqueue', () => this.#tx((trx) => this.#insertOutbox(trx, entries)), { idempotent: true }),
    );
    return { accepted, duplicates: entries.length - accepted };
  }

  async claim(options: ClaimOptions): Promise<OutboxClaim | null> {
    assertId(options?.worker, 'worker');
    const leaseMs = positiveInt(options.leaseMs, 'leaseMs');
    const now = assertIso(options.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    const maxEntries = options.maxEntries === undefined ? 1 : positiveInt(options.maxEntries, 'maxEntries');
    const maxChars =
      options.maxChars === undefined ? Number.POSITIVE_INFINITY : positiveInt(options.maxChars, 'maxChars');
    const leaseUntil = new Date(Date.parse(now) + leaseMs).toISOString();
    const outbox = this.#t('outbox');
    return this.#run(
      'claim',
      () =>
        this.#tx(async (trx) => {
          // The user's oldest pending entry ("head") is locked; a user whose previous claim is still leased is
          // skipped, and SKIP LOCKED lets concurrent workers move on to other users instead of waiting.
          const head = await sql<{ user_id: string }>`
            select o.user_id from ${outbox} o
            where o.status in ('queued', 'claimed')
              ${options.userId === undefined ? sql`` : sql`and o.user_id = ${options.userId}`}
              and ((o.status = 'queued' and (o.retry_at is null or o.retry_at <= ${now}::timestamptz))
                or (o.status = 'claimed' and o.lease_until <= ${now}::timestamptz))
              and o.seq = (select min(h.seq) from ${outbox} h where h.user_id = o.user_id and h.status in ('queued', 'claimed'))
              and not exists (select 1 from ${outbox} l where l.user_id = o.user_id and l.status = 'claimed' and l.lease_until > ${now}::timestamptz)
            order by o.seq limit 1
            for update of o skip locked`.execute(trx);
          const userId = head.rows[0]?.user_id;
          if (userId === undefined) return null;
          const pending = await sql<OutboxRow>`
            select * from ${outbox} where user_id = ${userId} and status in ('queued', 'claimed')
            order by seq limit ${maxEntries} for update`.execute(trx);
          const first = pending.rows[0];
          if (!first) return null;
          const taken: OutboxRow[] = [];
          let chars = 0;
          for (const row of pending.rows) {
            if (row.namespace !== first.namespace) break;
            if (taken.length > 0 && chars + row.text.length > maxChars) break;
            taken.push(row);
            chars += row.text.length;
          }
          const claimId = newId();
          await sql`update ${outbox} set status = 'claimed', claim_id = ${claimId}, worker = ${options.worker},
              lease_until = ${leaseUntil}::timestamptz
            where id = any(${taken.map((r) => r.id)}::text[])`.execute(trx);
          return {
            claimId,
            worker: options.worker,
            scope: { userId, namespace: first.namespace },
            entries: taken.map((r) => toEntry({ ...r, status: 'claimed' })),
            leaseUntil,
          };
        }),
      // Safe to re-run: if the lost attempt did commit, its entries stay claimed under an id nobody holds and are
      // taken over when that lease expires, so the worst case is one lease period of delay for that user.
      { idempotent: true },
    );
  }

  #claimIds(claim: OutboxClaim): string[] {
    if (claim === null || typeof claim !== 'object') throw new InvalidInputError('claim', 'must be a claim');
    assertId(claim.claimId, 'claim.claimId');
    return claim.entries.map((e) => e.id);
  }

  async fail(
    claim: OutboxClaim,
    error: string,
    options: { readonly maxAttempts: number; readonly retryAt?: string | undefined },
  ): Promise<void> {
    const ids = this.#claimIds(claim);
    const maxAttempts = positiveInt(options?.maxAttempts, 'maxAttempts');
    const retryAt = options.retryAt === undefined ? null : assertIso(options.retryAt, 'retryAt');
    const message = pgText(sanitize(String(error))).slice(0, 2000);
    await this.#run(
      'fail',
      async () => {
        await sql`update ${this.#t('outbox')}
          set attempts = attempts + 1, last_error = ${message},
              status = case when attempts + 1 >= ${maxAttempts} then 'dead' else 'queued' end,
              retry_at = ${retryAt}::timestamptz, claim_id = null, worker = null, lease_until = null
          where claim_id = ${claim.claimId} and status = 'claimed' and id = any(${ids}::text[])`.execute(
          this.#db,
        );
      },
      { idempotent: true },
    );
  }

  async release(
    claim: OutboxClaim,
    options: { readonly retryAt: string; readonly reason: string },
  ): Promise<void> {
    const ids = this.#claimIds(claim);
    const retryAt = assertIso(options?.retryAt, 'retryAt');
    const reason = pgText(sanitize(String(options.reason ?? ''))).slice(0, 2000);
    await this.#run(
      'release',
      async () => {
        await sql`update ${this.#t('outbox')}
          set status = 'queued', last_error = ${reason}, retry_at = ${retryAt}::timestamptz,
              claim_id = null, worker = null, lease_until = null
          where claim_id = ${claim.claimId} and status = 'claimed' and id = any(${ids}::text[])`.execute(
          this.#db,
        );
      },
      { idempotent: true },
    );
  }

  async backlog(options: {
    readonly now: string;
    readonly userId?: string | undefined;
  }): Promise<OutboxBacklog> {
    const now = assertIso(options?.now, 'now');
    if (options.userId !== undefined) assertId(options.userId, 'userId');
    return this.#run(
      'backlog',
      async () => {
        const r = await sql<{
          queued: string;
          claimed: string;
          dead: string;
          stale: string;
          next: Date | string | null;
        }>`
          select count(*) filter (where status = 'queued') as queued,
                 count(*) filter (where status = 'claimed') as claimed,
                 count(*) filter (where status = 'dead') as dead,
                 count(*) filter (where status = 'claimed' and lease_until <= ${now}::timestamptz) as stale,
                 min(case when status = 'claimed' and lease_until > ${now}::timestamptz then lease_until
                          when status = 'queued' and retry_at > ${now}::timestamptz then retry_at end) as next
          from ${this.#t('outbox')}
          where status <> 'done' ${options.userId === undefined ? sql`` : sql`and user_id = ${options.userId}`}`.execute(
          this.#db,
        );
        const row = r.rows[0];
        return {
          queued: Number(row?.queued ?? 0),
          claimed: Number(row?.claimed ?? 0),
          dead: Number(row?.dead ?? 0),
          staleLeases: Number(row?.stale ?? 0),
          nextClaimableAt:
            row?.next === null || row?.next === undefined ? null : new Date(row.next).toISOString(),
        };
      },
      { idempotent: true },
    );
  }

  /** Every outbox entry of a user in acceptance order (diagnostics and tests). */
  async outboxEntries(userId: string): Promise<OutboxEntry[]> {
    assertId(userId, 'userId');
    return this.#run(
      'outboxEntries',
      async () => {
        const r =
          await sql<OutboxRow>`select * from ${this.#t('outbox')} where user_id = ${userId} order by seq`.execute(
            this.#db,
          );
        return r.rows.map(toEntry);
      },
      { idempotent: true },
    );
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
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    if (!Array.isArray(items)) throw new InvalidInputError('items', 'must be an array');
    const encoded = items.map((item, i) => {
      const json = item === undefined ? undefined : JSON.stringify(item);
      if (json === undefined) throw new InvalidInputError(`items[${i}]`, 'must be JSON-serializable');
      return json;
    });
    if (options.operationId !== undefined) assertId(options.operationId, 'operationId');
    const fingerprint = options.operationFingerprint ?? null;
    if (fingerprint !== null && typeof fingerprint !== 'string') {
      throw new InvalidInputError('operationFingerprint', 'must be a string');
    }
    const suffix = options.replaceSuffix;
    if (suffix !== undefined && !Array.isArray(suffix))
      throw new InvalidInputError('replaceSuffix', 'must be an array');
    const enqueue = options.enqueue ?? [];
    if (!Array.isArray(enqueue)) throw new InvalidInputError('enqueue', 'must be an array');
    enqueue.forEach((e, i) => {
      if (!Number.isInteger(e.index) || e.index < 0 || e.index >= items.length) {
        throw new InvalidInputError(`enqueue[${i}].index`, 'must point at an appended item');
      }
      this.#validateInput(
        { scope, sessionId, position: 0, role: e.role, text: e.text, at: e.at, ref: e.ref },
        `enqueue[${i}]`,
      );
    });
    const operationId = options.operationId;
    const append = () =>
      this.#run(
        'appendItems',
        () =>
          this.#tx(async (trx) => {
            await sql`insert into ${this.#t('transcript_sessions')} (session_id, user_id, namespace)
            values (${sessionId}, ${scope.userId}, ${scope.namespace}) on conflict (session_id) do nothing`.execute(
              trx,
            );
            const session = await sql<{ user_id: string | null; namespace: string | null }>`
            select user_id, namespace from ${this.#t('transcript_sessions')} where session_id = ${sessionId} for update`.execute(
              trx,
            );
            const current = session.rows[0];
            if (current?.user_id === null) {
              // A session written before owners were recorded: this first owned append records its owner.
              await sql`update ${this.#t('transcript_sessions')} set user_id = ${scope.userId}, namespace = ${scope.namespace}
                where session_id = ${sessionId}`.execute(trx);
            } else if (
              current !== undefined &&
              (current.user_id !== scope.userId || (current.namespace ?? '') !== scope.namespace)
            ) {
              throw new InvalidInputError('owner', 'the session belongs to another scope');
            }
            if (operationId !== undefined) {
              const op = await sql<{ fingerprint: string | null; positions: string }>`
              select fingerprint, positions from ${this.#t('transcript_operations')}
              where session_id = ${sessionId} and operation_id = ${operationId}`.execute(trx);
              const done = op.rows[0];
              if (done) {
                if (done.fingerprint !== fingerprint) {
                  throw new InvalidInputError(
                    'operationId',
                    'was already applied with a different fingerprint',
                  );
                }
                return { positions: JSON.parse(done.positions) as number[], duplicate: true };
              }
            }
            if (suffix !== undefined && suffix.length > 0) {
              const last = await sql<{ position: number; item: string }>`
              select position, item from ${this.#t('transcript_items')} where session_id = ${sessionId}
              order by position desc limit ${suffix.length}`.execute(trx);
              const stored = last.rows.reverse();
              const matches =
                stored.length === suffix.length &&
                stored.every((row, i) => stableJson(JSON.parse(row.item)) === stableJson(suffix[i]));
              if (!matches)
                throw new InvalidInputError('replaceSuffix', 'does not match the end of the session');
              await sql`delete from ${this.#t('transcript_items')}
              where session_id = ${sessionId} and position >= ${stored[0]?.position ?? 0}`.execute(trx);
            }
            const max = await sql<{ next: number }>`
            select coalesce(max(position) + 1, 0) as next from ${this.#t('transcript_items')} where session_id = ${sessionId}`.execute(
              trx,
            );
            const start = Number(max.rows[0]?.next ?? 0);
            const positions = encoded.map((_, i) => start + i);
            for (let i = 0; i < encoded.length; i += INSERT_CHUNK) {
              const rows = encoded
                .slice(i, i + INSERT_CHUNK)
                .map((json, j) => sql`(${sessionId}, ${start + i + j}, ${json})`);
              await sql`insert into ${this.#t('transcript_items')} (session_id, position, item) values ${sql.join(rows)}`.execute(
                trx,
              );
            }
            if (enqueue.length > 0) {
              await this.#insertOutbox(
                trx,
                enqueue.map((e) => ({
                  scope,
                  sessionId,
                  position: start + e.index,
                  role: e.role,
                  text: e.text,
                  at: e.at,
                  ref: e.ref,
                })),
              );
            }
            if (operationId !== undefined) {
              await sql`insert into ${this.#t('transcript_operations')} (session_id, operation_id, fingerprint, positions)
              values (${sessionId}, ${operationId}, ${fingerprint}, ${JSON.stringify(positions)})`.execute(
                trx,
              );
            }
            return { positions, duplicate: false };
          }),
        // With an operation id a retry after a lost connection is recognised as a duplicate.
        { idempotent: operationId !== undefined },
      );
    // Turns enqueued with the append keep call order per user, like `enqueue`.
    return enqueue.length > 0 ? this.#inUserOrder([scope.userId], append) : append();
  }

  /** The condition that `scope` may read and change the session: it owns it, or it has no owner (yet). */
  #visible(scope: { userId: string; namespace: string }, sessionId: string): RawBuilder<unknown> {
    return sql`not exists (select 1 from ${this.#t('transcript_sessions')} ts where ts.session_id = ${sessionId}
      and ts.user_id is not null and (ts.user_id <> ${scope.userId} or coalesce(ts.namespace, '') <> ${scope.namespace}))`;
  }

  async getItems(owner: Scope, sessionId: string, limit?: number): Promise<unknown[]> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    if (limit !== undefined && (typeof limit !== 'number' || Number.isNaN(limit))) {
      throw new InvalidInputError('limit', 'must be a number');
    }
    if (limit !== undefined && limit <= 0) return [];
    const visible = this.#visible(scope, sessionId);
    return this.#run(
      'getItems',
      async () => {
        const r =
          limit === undefined
            ? await sql<{ item: string }>`select item from ${this.#t('transcript_items')}
                where session_id = ${sessionId} and ${visible} order by position`.execute(this.#db)
            : await sql<{
                item: string;
              }>`select item from (select position, item from ${this.#t('transcript_items')}
                where session_id = ${sessionId} and ${visible} order by position desc limit ${Math.floor(limit)}) t
                order by position`.execute(this.#db);
        return r.rows.map((row) => JSON.parse(row.item) as unknown);
      },
      { idempotent: true },
    );
  }

  async popItem(owner: Scope, sessionId: string): Promise<unknown | undefined> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    return this.#run('popItem', () =>
      this.#tx(async (trx) => {
        const r = await sql<{ item: string }>`delete from ${this.#t('transcript_items')}
          where session_id = ${sessionId} and ${this.#visible(scope, sessionId)}
            and position = (select max(position) from ${this.#t('transcript_items')} where session_id = ${sessionId})
          returning item`.execute(trx);
        const row = r.rows[0];
        return row ? (JSON.parse(row.item) as unknown) : undefined;
      }),
    );
  }

  async clearSession(owner: Scope, sessionId: string): Promise<void> {
    const scope = ownerScope(owner);
    assertId(sessionId, 'sessionId');
    await this.#run(
      'clearSession',
      () =>
        this.#tx(async (trx) => {
          const visible = this.#visible(scope, sessionId);
          await sql`delete from ${this.#t('transcript_items')} where session_id = ${sessionId} and ${visible}`.execute(
            trx,
          );
          await sql`delete from ${this.#t('transcript_operations')} where session_id = ${sessionId} and ${visible}`.execute(
            trx,
          );
        }),
      { idempotent: true },
    );
  }
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
