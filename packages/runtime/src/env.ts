/**
 * The environment and the options, read into typed settings: the `MEM01_*` tuning, the provider variables
 * (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, the model variables), the database (`DATABASE_URL`, `MEM01_HOME`, through
 * `resolveStoreTarget`) and the engine settings, checked and merged. Synchronous and I/O-free: everything malformed is
 * a `ConfigError` (or an `InvalidInputError` for an option) here, before anything is opened.
 */
import {
  ConfigError,
  DEFAULT_CONFIG,
  type EngineBudgets,
  type EngineConfigInput,
  InvalidInputError,
} from '@mem01/engine';
import { resolveConfig } from '@mem01/engine/binding-kit';
import { checkEmbedderOption, embedderKind } from './providers.js';
import type { MemoryRuntimeOptions } from './resolve-runtime.js';
import { resolveStoreTarget, type StoreTarget } from './store-target.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** The provider settings of the environment. Holds the key: never printed, never part of an error. */
export interface ProviderSettings {
  /** `OPENAI_API_KEY`; undefined: the offline models. */
  readonly apiKey: string | undefined;
  /** `OPENAI_BASE_URL`. */
  readonly baseURL: string | undefined;
  /** `MEM01_LLM_MODEL`: the OpenAI extraction model. */
  readonly llmModel: string | undefined;
  /** `MEM01_EMBEDDING_MODEL`: the OpenAI embedding model. */
  readonly embeddingModel: string | undefined;
}

/** Reads the provider variables (empty counts as unset). */
export function providerSettings(env: Env): ProviderSettings {
  return {
    apiKey: nonEmpty(env.OPENAI_API_KEY),
    baseURL: nonEmpty(env.OPENAI_BASE_URL)?.trim(),
    llmModel: nonEmpty(env.MEM01_LLM_MODEL)?.trim(),
    embeddingModel: nonEmpty(env.MEM01_EMBEDDING_MODEL)?.trim(),
  };
}

const DEFAULT_BLOCK_BYTES = DEFAULT_CONFIG.blockBytes;

/**
 * A variable that has a new name and a deprecated one: the value and the name it was read from, or undefined when
 * neither is set. Both set to different values is a `ConfigError` naming both, rather than one silently winning.
 */
function renamedVar(env: Env, name: string, deprecated: string): { name: string; raw: string } | undefined {
  const value = nonEmpty(env[name]);
  const old = nonEmpty(env[deprecated]);
  if (value !== undefined && old !== undefined && value.trim() !== old.trim()) {
    throw new ConfigError(
      `${name} and ${deprecated} (its deprecated name) are both set, to different values; set ${name} only`,
    );
  }
  if (value !== undefined) return { name, raw: value };
  return old === undefined ? undefined : { name: deprecated, raw: old };
}

/**
 * An option that has a deprecated name (`budgetBytes` of `blockBytes`): its value, from either name; both given with
 * different values is a `ConfigError` naming both. `label` is how the option is named in that error.
 */
function renamedOption(
  from: { readonly blockBytes?: number | undefined; readonly budgetBytes?: number | undefined },
  label: string,
): number | undefined {
  const { blockBytes, budgetBytes } = from;
  if (blockBytes !== undefined && budgetBytes !== undefined && blockBytes !== budgetBytes) {
    throw new ConfigError(
      `${label} and ${label.replace('blockBytes', 'budgetBytes')} (its deprecated name) differ: set ${label} only`,
    );
  }
  return blockBytes ?? budgetBytes;
}

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
  const blockBytes = renamedVar(env, 'MEM01_BLOCK_BYTES', 'MEM01_BUDGET_BYTES');
  if (blockBytes !== undefined) out.blockBytes = int(blockBytes.name);
  const recallLimit = int('MEM01_RECALL_LIMIT');
  if (recallLimit !== undefined) out.recallLimit = recallLimit;
  const pendingBelow = renamedVar(env, 'MEM01_PENDING_BELOW', 'MEM01_MIN_CONFIDENCE');
  if (pendingBelow !== undefined) {
    const n = Number(pendingBelow.raw.trim());
    if (!(n >= 0 && n <= 1)) {
      throw new ConfigError(
        `${pendingBelow.name} must be a number from 0 to 1, got ${JSON.stringify(pendingBelow.raw)}`,
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

/**
 * `MEM01_WORKING_MEMORY_SIZE`: `all`, or a count of user turns (0 or more); undefined when unset. A malformed value
 * is a `ConfigError` naming the variable.
 */
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
  ['MEM01_MAX_ACTIVE_TOKENS_PER_USER', 'maxActiveTokensPerUser'],
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

/**
 * Every environment variable mem01 reads, by what it chooses: the one list (the root README's table follows it). Each
 * is read in this package only; the session, the MCP server, the CLI and inspector, the eval and the demo get their
 * settings from here.
 */
export const ENVIRONMENT_VARIABLES = {
  /** Which models: OpenAI's when a key is set, else the offline pair. */
  providers: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'MEM01_LLM_MODEL', 'MEM01_EMBEDDING_MODEL'],
  /** Which database: Postgres at `DATABASE_URL`, else the SQLite file in `MEM01_HOME`. */
  store: ['DATABASE_URL', 'MEM01_HOME'],
  /** The engine's and the session's settings. */
  tuning: [
    'MEM01_BLOCK_BYTES',
    'MEM01_BUDGET_BYTES',
    'MEM01_RECALL_LIMIT',
    'MEM01_PENDING_BELOW',
    'MEM01_MIN_CONFIDENCE',
    'MEM01_EPISODIC',
    'MEM01_WORKING_MEMORY_SIZE',
    ...BUDGET_ENV.map(([name]) => name),
  ],
  /** The MCP server's user and bearer token. */
  server: ['MEM01_USER_ID', 'MEM01_MCP_TOKEN', 'MEM01_MCP_TOKEN_FILE'],
} as const satisfies Readonly<Record<string, readonly string[]>>;

/** A group of {@link ENVIRONMENT_VARIABLES}. */
export type VariableGroup = keyof typeof ENVIRONMENT_VARIABLES;

/**
 * The variables of `groups` that `env` sets (empty counts as unset), as an environment of their own: what an entry
 * point that must not take the rest passes on (the eval passes the providers only, so its headline is the default a
 * user gets, on a store of its own).
 */
export function pickEnvironment(env: Env, groups: readonly VariableGroup[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const group of groups) {
    for (const name of ENVIRONMENT_VARIABLES[group]) {
      const value = nonEmpty(env[name]);
      if (value !== undefined) out[name] = value;
    }
  }
  return out;
}

/** The MCP server's variables. The token is a secret: never printed, never part of an error. */
export interface ServerSettings {
  /** `MEM01_USER_ID`: the user a stdio server serves. */
  readonly userId: string | undefined;
  /** `MEM01_MCP_TOKEN`: the HTTP server's bearer token. */
  readonly token: string | undefined;
  /** `MEM01_MCP_TOKEN_FILE`: a file holding it. */
  readonly tokenFile: string | undefined;
}

/** Reads the MCP server's variables, trimmed (empty counts as unset). */
export function serverSettings(env: Env): ServerSettings {
  return {
    userId: nonEmpty(env.MEM01_USER_ID)?.trim(),
    token: nonEmpty(env.MEM01_MCP_TOKEN)?.trim(),
    tokenFile: nonEmpty(env.MEM01_MCP_TOKEN_FILE)?.trim(),
  };
}

/** @internal The options {@link resolveSettings} reads (the full runtime's and the admin facade's alike). */
export type SettingOptions = Pick<
  MemoryRuntimeOptions,
  | 'db'
  | 'storeKind'
  | 'pgSchema'
  | 'embedder'
  | 'strict'
  | 'blockBytes'
  | 'budgetBytes'
  | 'episodic'
  | 'engine'
  | 'budgets'
  | 'env'
>;

/** @internal The settings shared by the full runtime and the admin facade. */
export interface ResolvedSettings {
  readonly env: Env;
  readonly providers: ProviderSettings;
  /** The database to open, or null when a store is passed in. */
  readonly target: StoreTarget | null;
  readonly strict: boolean;
  readonly blockBytes: number;
  /** The engine settings, checked, environment and options merged. */
  readonly engineConfig: EngineConfigInput;
}

/**
 * @internal Options and environment into settings: the store target, the providers' variables and the engine
 * settings. Synchronous and I/O-free; everything malformed is a `ConfigError` here.
 */
export function resolveSettings(
  options: SettingOptions & Pick<MemoryRuntimeOptions, 'store'>,
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
  const blockBytes =
    renamedOption(options, 'blockBytes') ??
    renamedOption(options.engine ?? {}, 'engine.blockBytes') ??
    fromEnv.blockBytes ??
    DEFAULT_BLOCK_BYTES;
  if (typeof strict !== 'boolean') throw new ConfigError('strict must be a boolean');
  if (!Number.isInteger(blockBytes) || blockBytes < 1) {
    throw new ConfigError('blockBytes must be a positive integer');
  }
  if (options.episodic !== undefined && typeof options.episodic !== 'boolean') {
    throw new ConfigError('episodic must be a boolean');
  }
  // Checked now (a bad setting fails at memSession(), not at the first run), and used as resolved below.
  const engineConfig: EngineConfigInput = {
    ...fromEnv,
    ...options.engine,
    strict,
    blockBytes,
    budgetBytes: blockBytes,
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
  return { env, providers, target, strict, blockBytes, engineConfig };
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
