/**
 * What a runtime would open, without opening it, and a check of the environment by its form: for an entry point
 * that reports its configuration (the demo's `--check`) or needs to know it before it opens anything (the eval sizes
 * its own stores by the embedder's dimensions; the demo's `--live` names its agent's model). No file is created, no
 * connection is made, no network call is sent; no secret is returned.
 */
import { ConfigError, type Extractor } from '@mem01/engine';
import { type Env, resolveSettings, type SettingOptions } from './env.js';
import { extractorName, openEmbedder, openSummarizer } from './open.js';
import { extractorKind } from './providers.js';
import type { RuntimeDescription } from './resolve-runtime.js';
import { describeStoreTarget, type StoreTarget } from './store-target.js';

/** What {@link openMemoryRuntime} would open with the same options and environment. */
export interface RuntimePlan extends RuntimeDescription {
  /** The built-in models the environment selects (`openai` when `OPENAI_API_KEY` is set), or `given`. */
  readonly provider: 'openai' | 'local' | 'given';
  /** The OpenAI extraction model (`MEM01_LLM_MODEL`, else the package default), or null for another extractor. */
  readonly llmModel: string | null;
  /** The database, without its connection string (see `location` for a printable one), or null for a store passed in. */
  readonly target: PlannedTarget | null;
}

/** A database to open, safe to print: a SQLite file, or a Postgres schema (the URL, which may hold a password, left out). */
export type PlannedTarget =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly schema: string };

/** Options of {@link planRuntime}: those of `openMemoryRuntime` that choose what is opened. */
export type PlanOptions = SettingOptions & {
  readonly extractor?: Extractor | undefined;
  readonly store?: { readonly name: string } | undefined;
};

/**
 * Resolves what `openMemoryRuntime(options)` would open (store, extractor, summarizer, embedder and its dimensions,
 * settings), without opening the store or calling a model. A malformed setting is the `ConfigError` opening would throw.
 */
export async function planRuntime(options: PlanOptions = {}): Promise<RuntimePlan> {
  const settings = resolveSettings(options as Parameters<typeof resolveSettings>[0]);
  const kind = extractorKind(options.extractor, settings.providers);
  const extractor = await extractorName(options.extractor, settings.providers);
  // Building the summarizer sends nothing either: it names the model.
  const summarizer = (await openSummarizer(options.extractor, settings.providers)).name;
  // Building an embedder sends nothing: it names the model and fixes the vector length.
  const embedded = await openEmbedder(options.embedder, settings.providers);
  const target = settings.target;
  return {
    store: target?.kind ?? options.store?.name ?? 'store',
    location: target ? describeStoreTarget(target) : (options.store?.name ?? 'store'),
    extractor,
    summarizer,
    embedder: embedded.name,
    dimensions: embedded.embedder?.dimensions ?? null,
    strict: settings.strict,
    blockBytes: settings.blockBytes,
    budgetBytes: settings.blockBytes,
    provider: kind === 'openai' ? 'openai' : kind === 'local' ? 'local' : 'given',
    llmModel: kind === 'openai' ? extractor.slice('openai:'.length) : null,
    target: target === null ? null : planned(target),
  };
}

function planned(target: StoreTarget): PlannedTarget {
  return target.kind === 'sqlite'
    ? { kind: 'sqlite', path: target.path }
    : { kind: 'postgres', schema: target.schema ?? 'mem01' };
}

/** One variable, checked by its form. `shown` is masked: a key's prefix and last 4 characters, a URL without password. */
export interface VariableCheck {
  readonly set: boolean;
  readonly valid: boolean;
  readonly shown: string | null;
  readonly problem?: string;
}

/** The environment checked by its form, and what would run on it. */
export interface EnvironmentCheck {
  /** Every variable valid and the settings accepted. */
  readonly ok: boolean;
  readonly variables: {
    readonly OPENAI_API_KEY: VariableCheck;
    readonly DATABASE_URL: VariableCheck;
  };
  /** What `openMemoryRuntime` would open, or null when it would refuse the settings (`problem` says why). */
  readonly plan: RuntimePlan | null;
  readonly problem?: string;
}

/**
 * Checks `OPENAI_API_KEY` and `DATABASE_URL` by their form and resolves what would run (see {@link planRuntime}),
 * with no network call and no secret in the result.
 */
export async function checkEnvironment(env: Env): Promise<EnvironmentCheck> {
  const variables = {
    OPENAI_API_KEY: checkOpenAIKey(env.OPENAI_API_KEY),
    DATABASE_URL: checkDatabaseUrl(env.DATABASE_URL),
  };
  let plan: RuntimePlan | null = null;
  let problem: string | undefined;
  try {
    plan = await planRuntime({ env });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problem = err.message;
  }
  return {
    ok: variables.OPENAI_API_KEY.valid && variables.DATABASE_URL.valid && plan !== null,
    variables,
    plan,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** `sk-…` keys: shown as their prefix and last 4 characters only. */
export function maskKey(key: string): string {
  return key.length <= 12 ? '***' : `${key.slice(0, 3)}…${key.slice(-4)}`;
}

/** A URL with its password removed. */
function maskUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password) copy.password = '***';
  return copy.href;
}

function checkOpenAIKey(key: string | undefined): VariableCheck {
  if (key === undefined || key === '') return { set: false, valid: true, shown: null };
  if (/\s/.test(key)) return { set: true, valid: false, shown: null, problem: 'contains whitespace' };
  if (!/^sk-[A-Za-z0-9_-]{16,}$/.test(key)) {
    return {
      set: true,
      valid: false,
      shown: null,
      problem: 'does not look like an OpenAI key (sk-… with at least 16 more characters)',
    };
  }
  return { set: true, valid: true, shown: maskKey(key) };
}

function checkDatabaseUrl(value: string | undefined): VariableCheck {
  if (value === undefined || value === '') return { set: false, valid: true, shown: null };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      set: true,
      valid: false,
      shown: null,
      problem: 'is not a URL (expected postgres://user:pass@host:5432/db)',
    };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return {
      set: true,
      valid: false,
      shown: maskUrl(url),
      problem: `has protocol ${url.protocol} (expected postgres:)`,
    };
  }
  if (!url.hostname) return { set: true, valid: false, shown: maskUrl(url), problem: 'has no host' };
  return { set: true, valid: true, shown: maskUrl(url) };
}
