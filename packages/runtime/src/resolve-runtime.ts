/**
 * Every default of mem01session is resolved here, once: which store, transcript, extractor and embedder a
 * session runs on, and the fingerprint sessions with identical settings share a runtime by.
 */
import { createHash } from 'node:crypto';
import {
  ConfigError,
  DEFAULT_CONFIG,
  type Embedder,
  type EngineBudgets,
  type EngineConfigInput,
  type EngineStore,
  type Extractor,
  type FullStore,
  type Logger,
  MemoryEngine,
  type TranscriptStore,
} from '@mem01/engine';
import { resolveConfig, stableJson } from '@mem01/engine/store-kit';
import { defaultSqlitePath } from '@mem01/store-sqlite/paths';
import { InjectedBlocks } from './items.js';

/** Options that choose the runtime (store, extractor, embedder, engine settings). */
export interface MemoryRuntimeOptions {
  /**
   * A runtime from {@link openMemoryRuntime}, used as it is and left open (it stays the caller's). The other
   * runtime options must then be absent.
   */
  readonly runtime?: Runtime | undefined;
  /**
   * Where beliefs and the outbox live. A `FullStore` (every mem01 store) also holds the transcript, so a turn
   * is stored and accepted for extraction in one transaction. Default: Postgres when `DATABASE_URL` is set,
   * else one SQLite file at `defaultSqlitePath()` (`~/.mem01/memory.db`). Stays the caller's to close.
   */
  readonly store?: FullStore | EngineStore | undefined;
  /** Where the raw SDK items live. Default: `store` when it is a `FullStore`. Stays the caller's to close. */
  readonly transcript?: TranscriptStore | undefined;
  /** Default: `@mem01/openai` when `OPENAI_API_KEY` is set, else the offline `@mem01/local` extractor. */
  readonly extractor?: Extractor | undefined;
  /**
   * Default: the OpenAI embedder when `OPENAI_API_KEY` is set, else the offline local embedder (384-d).
   * `null`: lexical recall only.
   */
  readonly embedder?: Embedder | null | undefined;
  /** Raise memory failures instead of degrading to no memory. Default false (failure-open). */
  readonly strict?: boolean | undefined;
  /** Size of the injected memory block in UTF-8 bytes. Default `MEM01_BUDGET_BYTES`, else 800. */
  readonly budgetBytes?: number | undefined;
  /**
   * Recall what the user said (dated episodes) beside the beliefs drawn from it. Default `MEM01_EPISODIC`, else
   * true. `false`: beliefs only.
   */
  readonly episodic?: boolean | undefined;
  /**
   * Engine settings (`@mem01/engine`'s `EngineConfigInput`): the outbox lease (`leaseMs`, how long a crashed
   * process holds a user's turns), `flushTimeoutMs`, the pending threshold, recall limits, ranking. `strict`,
   * `budgetBytes` and `episodic` above take precedence over the same fields here, and these over the environment.
   */
  readonly engine?: EngineConfigInput | undefined;
  /**
   * Per-user budgets, counted in the store so that every worker sharing it respects one budget (the engine's
   * `config.budgets`): `llmCallsPerUser`, `inputTokensPerUser`, `outputTokensPerUser` per `periodMs` (default one
   * hour) and `maxActiveBeliefsPerUser` (result capacity). A spent budget leaves turns queued until it frees up.
   * Default: the `MEM01_*` budget variables (see `tuningFromEnv`), else none. Fields given here take precedence over
   * `engine.budgets`, and those over the environment.
   */
  readonly budgets?: Partial<EngineBudgets> | undefined;
  /** Environment to read defaults from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Process, in the background, the turns an earlier process left queued in the store, for every user. Default
   * true. A server that must only ever extract the users it serves turns it off (and flushes each user it serves).
   */
  readonly resume?: boolean | undefined;
  /** Where notices and warnings go. Default: the one-line notice goes to stderr; the engine stays silent. */
  readonly logger?: Logger | undefined;
}

/** What a runtime is built on, without secrets. */
export interface RuntimeDescription {
  readonly store: string;
  readonly extractor: string;
  readonly embedder: string | null;
  readonly strict: boolean;
  readonly budgetBytes: number;
}

/**
 * One store + engine: shared by every session with identical settings, or opened by the caller with
 * {@link openMemoryRuntime}.
 */
export interface Runtime {
  /** Owns acceptance and the read barrier: a turn saved through it is waited for by the user's next read. */
  readonly engine: MemoryEngine;
  readonly store: EngineStore;
  readonly transcript: TranscriptStore;
  /** Block texts this runtime injected; the synthetic item is recognised by them. */
  readonly injected: InjectedBlocks;
  readonly budgetBytes: number;
  readonly logger: Logger | undefined;
  readonly description: RuntimeDescription;
  /** Drains accepted writes, then closes what this package opened. */
  close(): Promise<void>;
}

/** The resolved settings: a fingerprint to share by and a way to open the runtime. */
export interface RuntimeSpec {
  /** Hash of the settings (object identities, paths, a hash of credentials); never contains a secret. */
  readonly key: string;
  /** The engine's `strict`, as the runtime will open it. */
  readonly strict: boolean;
  open(): Promise<Runtime>;
}

const DEFAULT_BUDGET_BYTES = DEFAULT_CONFIG.budgetBytes;

/**
 * The engine settings the environment may set (one table in the README). A malformed value is a `ConfigError`
 * naming the variable, never silently ignored.
 */
export function tuningFromEnv(env: Readonly<Record<string, string | undefined>>): EngineConfigInput {
  const out: { -readonly [K in keyof EngineConfigInput]: EngineConfigInput[K] } = {};
  const int = (name: string): number | undefined => {
    const raw = nonEmpty(env[name]);
    if (raw === undefined) return undefined;
    const n = Number(raw.trim());
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    return n;
  };
  const budgetBytes = int('MEM01_BUDGET_BYTES');
  if (budgetBytes !== undefined) out.budgetBytes = budgetBytes;
  const recallLimit = int('MEM01_RECALL_LIMIT');
  if (recallLimit !== undefined) out.recallLimit = recallLimit;
  const confidence = nonEmpty(env.MEM01_MIN_CONFIDENCE);
  if (confidence !== undefined) {
    const n = Number(confidence.trim());
    if (!(n >= 0 && n <= 1)) {
      throw new ConfigError(
        `MEM01_MIN_CONFIDENCE must be a number from 0 to 1, got ${JSON.stringify(confidence)}`,
      );
    }
    out.pendingBelow = n;
  }
  // Budgets counted in the store (the engine's `config.budgets`).
  const budgets: { -readonly [K in keyof EngineBudgets]?: EngineBudgets[K] } = {};
  for (const [name, field] of [
    ['MEM01_LLM_CALLS_PER_USER', 'llmCallsPerUser'],
    ['MEM01_INPUT_TOKENS_PER_USER', 'inputTokensPerUser'],
    ['MEM01_OUTPUT_TOKENS_PER_USER', 'outputTokensPerUser'],
    ['MEM01_MAX_ACTIVE_BELIEFS_PER_USER', 'maxActiveBeliefsPerUser'],
    ['MEM01_BUDGET_PERIOD_MS', 'periodMs'],
  ] as const) {
    const n = int(name);
    if (n !== undefined) budgets[field] = n;
  }
  if (Object.keys(budgets).length > 0) out.budgets = budgets;
  const episodic = nonEmpty(env.MEM01_EPISODIC)?.trim().toLowerCase();
  if (episodic !== undefined) {
    if (['1', 'true', 'on', 'yes'].includes(episodic)) out.episodic = true;
    else if (['0', 'false', 'off', 'no'].includes(episodic)) out.episodic = false;
    else
      throw new ConfigError(
        `MEM01_EPISODIC must be on or off (1/0, true/false), got ${JSON.stringify(episodic)}`,
      );
  }
  return out;
}
let noticeShown = false;

/**
 * Opens the runtime `memSession` would open with these options (its defaults: one SQLite file, or Postgres with
 * `DATABASE_URL`; the offline extractor and embedder, or OpenAI's with `OPENAI_API_KEY`; episodes on; an 800-byte
 * block), for the caller to own: pass it as `runtime` to any number of sessions and helpers, and close it when
 * done. Stores passed in stay the caller's.
 *
 * @example
 * const runtime = await openMemoryRuntime({ engine: { leaseMs: 10_000 } });
 * const session = memSession('conversation-7', { userId: 'user-123', runtime });
 * // ...
 * await runtime.close();
 */
export async function openMemoryRuntime(options: MemoryRuntimeOptions = {}): Promise<Runtime> {
  if (options.runtime) throw new ConfigError('openMemoryRuntime opens a runtime: do not pass one');
  return resolveRuntime(options).open();
}

/** Throws unless `options.runtime` is a runtime, given without the options it replaces. */
export function checkGivenRuntime(options: MemoryRuntimeOptions): Runtime | null {
  const given = options.runtime;
  if (given === undefined) return null;
  if (!given || typeof given !== 'object' || !(given.engine instanceof MemoryEngine)) {
    throw new ConfigError('runtime must be a runtime from openMemoryRuntime()');
  }
  const conflicting = (
    [
      'store',
      'transcript',
      'extractor',
      'embedder',
      'strict',
      'budgetBytes',
      'episodic',
      'engine',
      'budgets',
    ] as const
  ).filter((k) => options[k] !== undefined);
  if (conflicting.length > 0) {
    throw new ConfigError(
      `runtime is given, so ${conflicting.join(', ')} must not be: set them when opening it`,
    );
  }
  return given;
}

/** Resolves options and environment into a runtime spec. Synchronous and I/O-free; opening happens later. */
export function resolveRuntime(options: MemoryRuntimeOptions = {}): RuntimeSpec {
  const env = options.env ?? process.env;
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const baseURL = nonEmpty(env.OPENAI_BASE_URL);
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (options.engine !== undefined && (options.engine === null || typeof options.engine !== 'object')) {
    throw new ConfigError('engine must be an object of engine settings');
  }
  const fromEnv = tuningFromEnv(env);
  // `strict` has one home, the engine's config: the shorthand and `engine.strict` are two ways to set it.
  if (
    options.strict !== undefined &&
    options.engine?.strict !== undefined &&
    options.strict !== options.engine.strict
  ) {
    throw new ConfigError('strict and engine.strict disagree: set one of them');
  }
  const strict = options.strict ?? options.engine?.strict ?? false;
  const budgetBytes =
    options.budgetBytes ?? options.engine?.budgetBytes ?? fromEnv.budgetBytes ?? DEFAULT_BUDGET_BYTES;
  if (typeof strict !== 'boolean') throw new ConfigError('strict must be a boolean');
  if (!Number.isInteger(budgetBytes) || budgetBytes < 1) {
    throw new ConfigError('budgetBytes must be a positive integer');
  }
  if (options.episodic !== undefined && typeof options.episodic !== 'boolean') {
    throw new ConfigError('episodic must be a boolean');
  }
  // Checked now (a bad setting fails at memSession(), not at the first run), and used as resolved below.
  const engineConfig: EngineConfigInput = {
    ...fromEnv,
    ...options.engine,
    strict,
    budgetBytes,
    ...(options.episodic === undefined ? {} : { episodic: options.episodic }),
    ...(fromEnv.budgets || options.engine?.budgets || options.budgets
      ? { budgets: { ...fromEnv.budgets, ...options.engine?.budgets, ...options.budgets } }
      : {}),
  };
  resolveConfig(engineConfig, null);
  if (options.store !== undefined && !isEngineStore(options.store)) {
    throw new ConfigError('store must implement the mem01 EngineStore port (commit, enqueue, claim, ...)');
  }
  if (options.transcript !== undefined && !isTranscriptStore(options.transcript)) {
    throw new ConfigError(
      'transcript must implement the mem01 TranscriptStore port (appendItems, getItems, ...)',
    );
  }
  if (options.store && !options.transcript && !isTranscriptStore(options.store)) {
    throw new ConfigError(
      'store keeps no transcript: pass `transcript` too, or a store that implements TranscriptStore',
    );
  }
  const credential = apiKey ? `openai:${fingerprint(`${baseURL ?? ''}\u0000${apiKey}`)}` : 'local';
  // The one rule for the default file (store-sqlite's `./paths` loads no driver).
  const sqlitePath = databaseUrl ? null : defaultSqlitePath(env as NodeJS.ProcessEnv);
  const key = fingerprint(
    JSON.stringify({
      store: options.store
        ? `object:${objectId(options.store)}`
        : databaseUrl
          ? `postgres:${fingerprint(databaseUrl)}`
          : `sqlite:${sqlitePath}`,
      transcript: options.transcript ? `object:${objectId(options.transcript)}` : 'store',
      extractor: options.extractor ? `object:${objectId(options.extractor)}` : credential,
      embedder:
        options.embedder === null
          ? 'none'
          : options.embedder
            ? `object:${objectId(options.embedder)}`
            : credential,
      logger: options.logger ? `object:${objectId(options.logger)}` : 'default',
      resume: options.resume !== false,
      strict,
      budgetBytes,
      engine: stableJson(engineConfig),
    }),
  );

  return {
    key,
    strict,
    async open(): Promise<Runtime> {
      const owned: Array<() => Promise<void>> = [];
      const closeOwned = async () => {
        for (const close of owned.reverse()) await close().catch(() => undefined);
      };
      try {
        if (!apiKey && (options.extractor === undefined || options.embedder === undefined)) {
          showNotice(options.logger);
        }
        let embedder: Embedder | null;
        let embedderName: string | null;
        if (options.embedder !== undefined) {
          embedder = options.embedder;
          embedderName = embedder ? embedder.model : null;
        } else if (apiKey) {
          const openai = await import('@mem01/openai');
          const created = openai.createOpenAIEmbedder({ env });
          embedder = created;
          embedderName = `openai:${created.model}`;
        } else {
          embedder = (await loadLocal()).embedder;
          embedderName = `local:${embedder.model}`;
        }
        let extractor: Extractor;
        if (options.extractor) {
          extractor = options.extractor;
        } else if (apiKey) {
          const openai = await import('@mem01/openai');
          extractor = openai.createOpenAIExtractor({ env });
        } else {
          extractor = (await loadLocal()).extractor;
        }
        let store: EngineStore;
        let storeName: string;
        if (options.store) {
          store = options.store;
          storeName = store.name;
        } else if (databaseUrl) {
          const pg = await loadOptionalPeer<PostgresModule>(
            '@mem01/store-postgres',
            'DATABASE_URL is set, so mem01session stores memory in PostgreSQL, but @mem01/store-postgres is not installed: run `npm i @mem01/store-postgres` (or unset DATABASE_URL to use the local SQLite file)',
          );
          const opened = await pg.openPostgresStore({
            connectionString: databaseUrl,
            ...(embedder ? { dimensions: embedder.dimensions } : {}),
            ...(options.logger ? { logger: options.logger } : {}),
          });
          owned.push(() => opened.close());
          store = opened;
          storeName = 'postgres';
        } else {
          const sqlite = await import('@mem01/store-sqlite');
          const path = sqlite.defaultSqlitePath(env as NodeJS.ProcessEnv);
          const opened = sqlite.openSqliteStore({
            path,
            ...(embedder ? { dimensions: embedder.dimensions } : {}),
            logger: options.logger ?? quietLogger,
          });
          owned.push(() => opened.close());
          store = opened;
          storeName = 'sqlite';
        }
        const transcript = options.transcript ?? (store as FullStore);
        const engine = new MemoryEngine({
          store,
          transcript,
          extractor,
          embedder,
          config: engineConfig,
          logger: options.logger,
        });
        // Turns accepted before a crash are still queued in a durable store: process them in the background.
        const resumed =
          options.resume === false
            ? Promise.resolve()
            : engine.resume().catch((err: unknown) => {
                options.logger?.warn(`mem01: resuming queued extraction failed: ${String(err)}`);
              });
        let closing: Promise<void> | null = null;
        return {
          engine,
          store,
          transcript,
          injected: new InjectedBlocks(),
          budgetBytes,
          logger: options.logger,
          description: {
            store: storeName,
            extractor: extractor.name,
            embedder: embedderName,
            strict: engine.config.strict,
            budgetBytes,
          },
          close() {
            closing ??= (async () => {
              await resumed;
              await engine.close();
              await closeOwned();
            })();
            return closing;
          },
        };
      } catch (err) {
        await closeOwned();
        throw err;
      }
    },
  };
}

interface PostgresModule {
  openPostgresStore(options: {
    connectionString: string;
    dimensions?: number;
    logger?: Logger;
  }): Promise<FullStore>;
}

/** Without a caller's logger: informational lines are dropped, warnings go to stderr. */
const quietLogger: Logger = {
  info: () => {},
  warn: (message) => process.stderr.write(`${message}\n`),
};

async function loadLocal(): Promise<{ extractor: Extractor; embedder: Embedder }> {
  const local = await import('@mem01/local');
  return { extractor: local.createLocalExtractor(), embedder: local.createLocalEmbedder() };
}

/**
 * Imports an optional peer dependency. When it is not installed, throws a `ConfigError` with `hint` (what to
 * install); other failures propagate.
 */
export async function loadOptionalPeer<T>(specifier: string, hint: string): Promise<T> {
  try {
    return (await import(/* @vite-ignore */ specifier)) as T;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const message = err instanceof Error ? err.message : String(err);
    if (
      code === 'ERR_MODULE_NOT_FOUND' ||
      code === 'MODULE_NOT_FOUND' ||
      /cannot find (module|package)|failed to (load|resolve)/i.test(message)
    ) {
      throw new ConfigError(hint, { cause: err });
    }
    throw err;
  }
}

function showNotice(logger: Logger | undefined): void {
  if (noticeShown) return;
  noticeShown = true;
  const line =
    'mem01: OPENAI_API_KEY is not set; using the offline extractor and embedder from @mem01/local (set OPENAI_API_KEY for model-based extraction).';
  if (logger) logger.info(line);
  else process.stderr.write(`${line}\n`);
}

/** For tests: lets the once-per-process notice show again. */
export function resetNoticeForTests(): void {
  noticeShown = false;
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function fingerprint(text: string): string {
  return createHash('sha256').update(`mem01session\u0000${text}`).digest('hex').slice(0, 16);
}

const ids = new WeakMap<object, number>();
let nextId = 1;
function objectId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) {
    id = nextId++;
    ids.set(o, id);
  }
  return id;
}

/** An object with a function under each of `methods` (a duck-typed port). */
function hasMethods(value: unknown, methods: readonly string[]): boolean {
  return (
    !!value &&
    typeof value === 'object' &&
    methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  );
}

function isEngineStore(value: unknown): value is EngineStore {
  return hasMethods(value, ['commit', 'enqueue', 'claim', 'searchLexical']);
}

function isTranscriptStore(value: unknown): value is TranscriptStore {
  return hasMethods(value, ['appendItems', 'getItems', 'popItem', 'clearSession']);
}
