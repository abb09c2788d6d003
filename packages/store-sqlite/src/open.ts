/**
 * Opening a SQLite store: options with their defaults (resolved in one place), checks of the file before anything
 * is written, pragmas, sqlite-vec, migrations and the search workers.
 */
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
import type { DatabaseSync } from 'node:sqlite';
import {
  CapabilityError,
  ConfigError,
  CorruptStoreError,
  InvalidInputError,
  type Logger,
  SchemaTooNewError,
  StoreError,
} from '@mem01/engine';
import type { ProcessIdentity } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import * as sqliteVec from 'sqlite-vec';
import { STORE_NAME } from './connection.js';
import { mapDriverError } from './errors.js';
import { SEARCH_SETUP_SQL, TermStatsCache } from './lexical-search.js';
import { APPLICATION_ID, migrate, readSchemaVersion, SQLITE_SCHEMA_VERSION } from './migrations.js';
import { loadNodeSqlite } from './node-sqlite.js';
import { SearchPool } from './search-pool.js';
import { SqliteStore } from './sqlite-store.js';
import { syncVecTable } from './vector-search.js';

/** Options of {@link openSqliteStore}. Defaults are resolved in one place, {@link resolveOptions}. */
export interface SqliteStoreOptions {
  /** Database file; required unless `database` is given. A folder created for it gets mode 0700, a new file 0600.
   * (The default file of mem01, `$MEM01_HOME/memory.db` or `~/.mem01/memory.db`, is `@mem01/runtime`'s rule:
   * `openMemoryRuntime` and every entry point open it; this store reads no environment.) */
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
  /**
   * The process this store's outbox claims are recorded for: a claim of a process on this host that has exited is
   * taken over at once. Default: this process. Set it only to act for another process (the conformance suite opens
   * a store as an exited process).
   */
  leaseOwner?: ProcessIdentity | undefined;
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
  readonly leaseOwner: ProcessIdentity;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** One sqlite-vec chunk (its default `chunk_size`). */
const DEFAULT_VECTOR_INDEX_MIN = 1024;

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${message}\n`),
};

function resolveOptions(options: SqliteStoreOptions): ResolvedOptions {
  const { dimensions, busyTimeoutMs, maxTextBytes } = options;
  if (!options.database && (typeof options.path !== 'string' || options.path.trim() === '')) {
    throw new ConfigError(
      'openSqliteStore needs a path (or a database handle); the default file ($MEM01_HOME/memory.db) is what @mem01/runtime opens',
    );
  }
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
    path: options.database ? null : resolve(options.path as string),
    database: options.database ?? null,
    dimensions: dimensions ?? null,
    vector,
    busyTimeoutMs: busyTimeoutMs ?? 5000,
    maxTextBytes: maxTextBytes ?? 65536,
    synchronous,
    logger: options.logger ?? stderrLogger,
    searchWorkers: searchWorkers ?? Math.min(2, availableParallelism()),
    vectorIndexMinBeliefs: vectorIndexMinBeliefs ?? DEFAULT_VECTOR_INDEX_MIN,
    leaseOwner:
      options.leaseOwner === undefined
        ? kit.processIdentity.current
        : kit.processIdentity.validate(options.leaseOwner, 'leaseOwner'),
  };
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
      tables = (db.prepare('SELECT name FROM sqlite_master').all() as { name: unknown }[]).map((r) =>
        String(r.name),
      );
    } catch (err) {
      throw mapDriverError(err, path, 'open');
    }
    const version = tables.includes('meta') ? readSchemaVersion(db) : 0;
    if (version > SQLITE_SCHEMA_VERSION) throw new SchemaTooNewError(path, version, SQLITE_SCHEMA_VERSION);
    if (owned && version === 0 && tables.length > 0) {
      const appId = Number(
        (db.prepare('PRAGMA application_id').get() as { [key: string]: unknown }).application_id,
      );
      if (appId !== APPLICATION_ID) {
        throw new StoreError(
          `${path} is a SQLite database of another application; refusing to use it for mem01`,
        );
      }
    }
    const journal = (db.prepare('PRAGMA journal_mode = WAL').get() as { [key: string]: unknown } | undefined)
      ?.journal_mode;
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
        vecVersion = String((db.prepare('SELECT vec_version() AS v').get() as { [key: string]: unknown }).v);
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
        : `[mem01/store-sqlite] ${path}: vector search via exact cosine${vecFailure ? ` (sqlite-vec unavailable: ${kit.sanitize(vecFailure).split('\n')[0]})` : ''}`,
    );
    return new SqliteStore(db, {
      path,
      owned,
      vectorMode,
      dimensions,
      maxTextBytes: opts.maxTextBytes,
      logger: opts.logger,
      owner: opts.leaseOwner,
      termStats: new TermStatsCache(),
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
  const row = db.prepare("SELECT value FROM meta WHERE key = 'dimensions'").get() as
    | { [key: string]: unknown }
    | undefined;
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
