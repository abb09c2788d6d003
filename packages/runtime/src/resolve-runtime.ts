/**
 * Every default of mem01 is resolved here, once: which store, transcript, extractor and embedder memory runs on,
 * the engine settings the environment tunes, and the fingerprint runtimes with identical settings are shared by.
 * The session binding, the MCP server and the CLI all open memory through this file.
 */
import { createHash } from 'node:crypto';
import {
  ConfigError,
  DEFAULT_CONFIG,
  type EngineBudgets,
  type EngineConfigInput,
  type EngineStore,
  type Extractor,
  type FullStore,
  InvalidInputError,
  type Logger,
  MemoryEngine,
  type TranscriptStore,
} from '@mem01/engine';
import { resolveConfig, stableJson } from '@mem01/engine/binding-kit';
import {
  checkEmbedderOption,
  credentialKey,
  type EmbedderOption,
  embedderKind,
  extractorKind,
  openEmbedder,
  openExtractor,
  type ProviderSettings,
  providerSettings,
} from './providers.js';
import {
  describeStoreTarget,
  openStoreTarget,
  resolveStoreTarget,
  type StoreSelection,
  type StoreTarget,
} from './store-target.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Options that choose the runtime (store, extractor, embedder, engine settings). */
export interface MemoryRuntimeOptions extends StoreSelection {
  /**
   * A runtime from {@link openMemoryRuntime}, used as it is and left open (it stays the caller's). The other
   * runtime options must then be absent.
   */
  readonly runtime?: MemoryRuntime | undefined;
  /**
   * Where beliefs and the outbox live. A `FullStore` (every mem01 store) also holds the transcript, so a turn
   * is stored and accepted for extraction in one transaction. Default: the database `db`, `storeKind` and the
   * environment select (see `resolveStoreTarget`): Postgres when `DATABASE_URL` is set, else one SQLite file at
   * `$MEM01_HOME/memory.db` (`~/.mem01/memory.db`). A store passed in stays the caller's to close; `db`,
   * `storeKind` and `pgSchema` must then be absent.
   */
  readonly store?: FullStore | EngineStore | undefined;
  /** Where the raw SDK items live. Default: `store` when it is a `FullStore`. Stays the caller's to close. */
  readonly transcript?: TranscriptStore | undefined;
  /** Default: `@mem01/openai` when `OPENAI_API_KEY` is set, else the offline `@mem01/local` extractor. */
  readonly extractor?: Extractor | undefined;
  /**
   * Default: the OpenAI embedder when `OPENAI_API_KEY` is set, else the offline local embedder (384-d).
   * `'local'` or `'openai'`: that built-in embedder whatever the environment. `null`: lexical recall only.
   */
  readonly embedder?: EmbedderOption;
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
   * `config.budgets`): `llmCallsPerUser`, `inputTokensPerUser`, `outputTokensPerUser`, `embeddingCallsPerUser`,
   * `embeddingTokensPerUser` per `periodMs` (default one hour) and `maxActiveBeliefsPerUser` (result capacity). A spent
   * budget leaves turns queued until it frees up (a spent embedding budget also leaves recall lexical).
   * Default: the `MEM01_*` budget variables (see `tuningFromEnv`), else none. Fields given here take precedence over
   * `engine.budgets`, and those over the environment.
   */
  readonly budgets?: Partial<EngineBudgets> | undefined;
  /** Environment to read defaults from. Default `process.env`. */
  readonly env?: Env | undefined;
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
  /** `sqlite`, `postgres`, or the name of a store passed in. */
  readonly store: string;
  /** Where memory lives, safe to print: `sqlite <path>`, `postgres <url without secrets>`, or the store's name. */
  readonly location: string;
  /** `local-rules` (offline), `openai:<model>`, or the name of an extractor passed in. */
  readonly extractor: string;
  /** `local:<model>`, `openai:<model>`, the model of an embedder passed in, or null (lexical recall only). */
  readonly embedder: string | null;
  /** The embedder's vector length, or null without an embedder. */
  readonly dimensions: number | null;
  readonly strict: boolean;
  readonly budgetBytes: number;
}

/**
 * One store + engine: shared by every session with identical settings, or opened by the caller with
 * {@link openMemoryRuntime}.
 */
export interface MemoryRuntime {
  /** Owns acceptance and the read barrier: a turn saved through it is waited for by the user's next read. */
  readonly engine: MemoryEngine;
  readonly store: EngineStore;
  readonly transcript: TranscriptStore;
  readonly budgetBytes: number;
  readonly logger: Logger | undefined;
  readonly description: RuntimeDescription;
  /** Drains accepted writes, then closes what this package opened. Idempotent. */
  close(): Promise<void>;
}

/** The resolved settings: a fingerprint to share by and a way to open the runtime. */
export interface RuntimeSpec {
  /** Hash of the settings (object identities, paths, a hash of credentials); never contains a secret. */
  readonly key: string;
  /** The engine's `strict`, as the runtime will open it. */
  readonly strict: boolean;
  /** The database the runtime opens, or null for a store passed in. */
  readonly target: StoreTarget | null;
  open(): Promise<MemoryRuntime>;
}

const DEFAULT_BUDGET_BYTES = DEFAULT_CONFIG.budgetBytes;

/**
 * The engine settings the environment may set (one table in the README). A malformed value is a `ConfigError`
 * naming the variable, never silently ignored.
 */
export function tuningFromEnv(env: Env): EngineConfigInput {
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
  // Budgets counted in the store (the engine's `config.budgets`), from the variables every entry point reads.
  const budgets = budgetsFromEnv(env);
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

/** How many of the latest user turns of the current conversation recall leaves out: a count, or `'all'`. */
export type WorkingMemorySize = number | 'all';

/**
 * `MEM01_WORKING_MEMORY_SIZE`: `all`, or a count of user turns (0 or more); undefined when unset. A malformed value
 * is a `ConfigError` naming the variable.
 */
/** Working memory by default: the model sees the whole conversation in its history, so recall leaves all of it out. */
export const DEFAULT_WORKING_MEMORY_SIZE: WorkingMemorySize = 'all';

/**
 * The working memory a session uses: the option when given (`InvalidInputError` naming `workingMemorySize` unless it
 * is `'all'` or a whole number), else `MEM01_WORKING_MEMORY_SIZE`, else {@link DEFAULT_WORKING_MEMORY_SIZE}.
 */
export function resolveWorkingMemorySize(
  option: unknown,
  env: Readonly<Record<string, string | undefined>>,
): WorkingMemorySize {
  if (option !== undefined) {
    if (option === 'all' || (typeof option === 'number' && Number.isSafeInteger(option) && option >= 0)) {
      return option;
    }
    throw new InvalidInputError('workingMemorySize', "must be 'all' or a whole number of turns (0 or more)");
  }
  return workingMemorySizeFromEnv(env) ?? DEFAULT_WORKING_MEMORY_SIZE;
}

export function workingMemorySizeFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): WorkingMemorySize | undefined {
  const raw = nonEmpty(env.MEM01_WORKING_MEMORY_SIZE);
  if (raw === undefined) return undefined;
  const value = raw.trim().toLowerCase();
  if (value === 'all') return 'all';
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new ConfigError(
      `MEM01_WORKING_MEMORY_SIZE must be all or a whole number of turns (0 or more), got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

/** The `MEM01_*` variables of the budgets, by field. */
const BUDGET_ENV: readonly (readonly [string, keyof EngineBudgets])[] = [
  ['MEM01_LLM_CALLS_PER_USER', 'llmCallsPerUser'],
  ['MEM01_INPUT_TOKENS_PER_USER', 'inputTokensPerUser'],
  ['MEM01_OUTPUT_TOKENS_PER_USER', 'outputTokensPerUser'],
  ['MEM01_EMBEDDING_CALLS_PER_USER', 'embeddingCallsPerUser'],
  ['MEM01_EMBEDDING_TOKENS_PER_USER', 'embeddingTokensPerUser'],
  ['MEM01_MAX_ACTIVE_BELIEFS_PER_USER', 'maxActiveBeliefsPerUser'],
  ['MEM01_BUDGET_PERIOD_MS', 'periodMs'],
];

/**
 * The budgets the `MEM01_*` variables of `env` set (see {@link BUDGET_ENV}), for every entry point that reads them
 * (the session runtime, the CLI): the fields set, none when none is. `ConfigError` naming the variable for a value
 * that is not a positive integer. The ranges are checked with the rest of the configuration.
 */
function budgetsFromEnv(env: Readonly<Record<string, string | undefined>>): Partial<EngineBudgets> {
  const out: { -readonly [K in keyof EngineBudgets]?: EngineBudgets[K] } = {};
  for (const [name, field] of BUDGET_ENV) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw.trim());
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
    out[field] = n;
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
export async function openMemoryRuntime(options: MemoryRuntimeOptions = {}): Promise<MemoryRuntime> {
  if (options.runtime) throw new ConfigError('openMemoryRuntime opens a runtime: do not pass one');
  return resolveRuntime(options).open();
}

/** Throws unless `options.runtime` is a runtime, given without the options it replaces. */
export function checkGivenRuntime(options: MemoryRuntimeOptions): MemoryRuntime | null {
  const given = options.runtime;
  if (given === undefined) return null;
  if (!given || typeof given !== 'object' || !(given.engine instanceof MemoryEngine)) {
    throw new ConfigError('runtime must be a runtime from openMemoryRuntime()');
  }
  const conflicting = (
    [
      'store',
      'db',
      'storeKind',
      'pgSchema',
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

/** @internal The settings shared by the full runtime and the admin facade. */
export interface ResolvedSettings {
  readonly env: Env;
  readonly providers: ProviderSettings;
  /** The database to open, or null when a store is passed in. */
  readonly target: StoreTarget | null;
  readonly strict: boolean;
  readonly budgetBytes: number;
  /** The engine settings, checked, environment and options merged. */
  readonly engineConfig: EngineConfigInput;
}

/**
 * @internal Options and environment into settings: the store target, the providers' variables and the engine
 * settings. Synchronous and I/O-free; everything malformed is a `ConfigError` here.
 */
export function resolveSettings(
  options: Pick<
    MemoryRuntimeOptions,
    | 'store'
    | 'db'
    | 'storeKind'
    | 'pgSchema'
    | 'embedder'
    | 'strict'
    | 'budgetBytes'
    | 'episodic'
    | 'engine'
    | 'budgets'
    | 'env'
  >,
): ResolvedSettings {
  const env = options.env ?? process.env;
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
  if (options.store !== undefined) {
    const chosen = (['db', 'storeKind', 'pgSchema'] as const).filter((k) => options[k] !== undefined);
    if (chosen.length > 0) {
      throw new ConfigError(
        `store is given, so ${chosen.join(', ')} must not be: they choose a database to open`,
      );
    }
  }
  checkEmbedderOption(options.embedder);
  const providers = providerSettings(env);
  embedderKind(options.embedder, providers); // `'openai'` without a key fails here
  const target = options.store === undefined ? resolveStoreTarget(options, env) : null;
  return { env, providers, target, strict, budgetBytes, engineConfig };
}

/** Resolves options and environment into a runtime spec. Synchronous and I/O-free; opening happens later. */
export function resolveRuntime(options: MemoryRuntimeOptions = {}): RuntimeSpec {
  const settings = resolveSettings(options);
  const { providers, target, strict, budgetBytes, engineConfig } = settings;
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
  const credential = credentialKey(providers);
  const embedder = options.embedder;
  const key = fingerprint(
    JSON.stringify({
      store: options.store
        ? `object:${objectId(options.store)}`
        : target?.kind === 'postgres'
          ? `postgres:${fingerprint(target.connectionString)}:${target.schema ?? ''}`
          : `sqlite:${target?.path}`,
      transcript: options.transcript ? `object:${objectId(options.transcript)}` : 'store',
      extractor: options.extractor ? `object:${objectId(options.extractor)}` : credential,
      embedder:
        embedder === null
          ? 'none'
          : typeof embedder === 'object'
            ? `object:${objectId(embedder)}`
            : `${embedder ?? 'default'}:${credential}`,
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
    target,
    async open(): Promise<MemoryRuntime> {
      const owned: Array<() => Promise<void>> = [];
      const closeOwned = async () => {
        for (const close of owned.reverse()) await close().catch(() => undefined);
      };
      try {
        if (
          extractorKind(options.extractor, providers) === 'local' ||
          embedderKind(options.embedder, providers) === 'local'
        ) {
          if (!providers.apiKey) showNotice(options.logger);
        }
        const embedded = await openEmbedder(options.embedder, providers);
        const extraction = await openExtractor(options.extractor, providers);
        let store: EngineStore;
        let storeName: string;
        let location: string;
        if (options.store) {
          store = options.store;
          storeName = store.name;
          location = store.name;
        } else {
          const where = target as StoreTarget;
          const opened = await openStoreTarget(where, {
            dimensions: embedded.embedder?.dimensions,
            logger: storeLogger(options.logger),
          });
          owned.push(() => opened.close());
          store = opened;
          storeName = where.kind;
          location = describeStoreTarget(where);
        }
        const transcript = options.transcript ?? (store as FullStore);
        const engine = new MemoryEngine({
          store,
          transcript,
          extractor: extraction.extractor,
          embedder: embedded.embedder,
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
          budgetBytes,
          logger: options.logger,
          description: {
            store: storeName,
            location,
            extractor: extraction.name,
            embedder: embedded.name,
            dimensions: embedded.embedder?.dimensions ?? null,
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

/**
 * One line naming what a runtime opened, for an entry point's stderr: `sqlite /home/a/.mem01/memory.db (extractor
 * local-rules, embedder local:mem01-local-hash-v1-384)`. Never contains a secret.
 */
export function describeRuntime(description: RuntimeDescription): string {
  return `${description.location} (extractor ${description.extractor}, embedder ${description.embedder ?? 'none'})`;
}

/** @internal A store's own notices (the vector mode it chose) are dropped; its warnings go to the logger. */
export function storeLogger(logger: Logger | undefined): Logger {
  return {
    info: () => {},
    warn: (message) => (logger ? logger.warn(message) : process.stderr.write(`${message}\n`)),
  };
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
  return createHash('sha256').update(`mem01-runtime\u0000${text}`).digest('hex').slice(0, 16);
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
