/**
 * The runtime's public face: the options that choose memory, what a runtime is, and `resolveRuntime` /
 * `openMemoryRuntime`, which read them (`env.ts`), fingerprint them (`fingerprint.ts`) and open them (`open.ts`).
 * The session binding, the MCP server and the CLI all open memory through this package.
 */
import {
  ConfigError,
  type EngineBudgets,
  type EngineConfigInput,
  type EngineStore,
  type Extractor,
  type FullStore,
  type Logger,
  MemoryEngine,
  type TranscriptStore,
} from '@mem01/engine';
import { type Env, resolveSettings } from './env.js';
import { runtimeKey } from './fingerprint.js';
import { openRuntime } from './open.js';
import type { EmbedderOption } from './providers.js';
import type { StoreSelection, StoreTarget } from './store-target.js';

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
  /** Size of the injected memory block in UTF-8 bytes. Default `MEM01_BLOCK_BYTES`, else 800. */
  readonly blockBytes?: number | undefined;
  /** @deprecated The earlier name of `blockBytes`; use `blockBytes`. */
  readonly budgetBytes?: number | undefined;
  /**
   * Recall what the user said (dated episodes) beside the beliefs drawn from it. Default `MEM01_EPISODIC`, else
   * true. `false`: beliefs only.
   */
  readonly episodic?: boolean | undefined;
  /**
   * Engine settings (`@mem01/engine`'s `EngineConfigInput`): the outbox lease (`leaseMs`, how long a crashed
   * process holds a user's turns), `flushTimeoutMs`, the pending threshold, recall limits, ranking. `strict`,
   * `blockBytes` and `episodic` above take precedence over the same fields here, and these over the environment.
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
  /**
   * What writes conversation summaries (`engine.summarize`, `autoSummaries`): `openai:<model>` when the OpenAI
   * extractor is used, else `extractive` (the engine's offline summarizer).
   */
  readonly summarizer: string;
  /** `local:<model>`, `openai:<model>`, the model of an embedder passed in, or null (lexical recall only). */
  readonly embedder: string | null;
  /** The embedder's vector length, or null without an embedder. */
  readonly dimensions: number | null;
  readonly strict: boolean;
  /** The block's size in UTF-8 bytes. */
  readonly blockBytes: number;
  /** @deprecated The earlier name of `blockBytes` (the same value); use `blockBytes`. */
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
  /** The block's size in UTF-8 bytes (the engine's `config.blockBytes`). */
  readonly blockBytes: number;
  /** @deprecated The earlier name of `blockBytes` (the same value); use `blockBytes`. */
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
      'blockBytes',
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
  const settings = resolveSettings(options);
  const { target, strict } = settings;
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
  return {
    key: runtimeKey(options, settings),
    strict,
    target,
    open: () => openRuntime(options, settings),
  };
}

/**
 * One line naming what a runtime opened, for an entry point's stderr: `sqlite /home/a/.mem01/memory.db (extractor
 * local-rules, embedder local:mem01-local-hash-v1-384)`. Never contains a secret.
 */
export function describeRuntime(
  description: Omit<RuntimeDescription, 'summarizer'> & Partial<Pick<RuntimeDescription, 'summarizer'>>,
): string {
  return `${description.location} (extractor ${description.extractor}, embedder ${description.embedder ?? 'none'})`;
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
