/** Client resolution: an injected `OpenAI` client, or one built from a key, shared by a credential fingerprint. */
import { createHash } from 'node:crypto';
import { ConfigError } from '@mem01/engine';
import { sanitize } from '@mem01/engine/provider-kit';
import OpenAI from 'openai';

/** Connection options shared by the extractor and the embedder. */
export interface OpenAIClientOptions {
  /** A ready client. When given, `apiKey` and `baseURL` are ignored. Its own retry settings are overridden per request. */
  readonly client?: OpenAI | undefined;
  /**
   * API key. Default: the `openai` client's own default (its `OPENAI_API_KEY`). Never logged, never part of an error or
   * cache key. This package reads no environment itself: `@mem01/runtime` is where mem01 reads the environment.
   */
  readonly apiKey?: string | undefined;
  /**
   * Base URL including `/v1`. Default (undefined): the `openai` client's own default (its `OPENAI_BASE_URL`, else the
   * OpenAI API); null: the OpenAI API, whatever the environment says.
   */
  readonly baseURL?: string | null | undefined;
  /** Timeout of one HTTP attempt, in ms. Default 60 000 for extraction, 30 000 for embeddings. */
  readonly timeoutMs?: number | undefined;
  /** Attempts per call including the first (retries on 429, 408, 409, 5xx, network errors, bad bodies). Default 4. */
  readonly maxAttempts?: number | undefined;
}

/** A resolved client plus what is safe to show about it. */
export interface ResolvedClient {
  readonly client: OpenAI;
  /** Short hash of the credentials (never the key itself), or `injected` for a caller's client. */
  readonly fingerprint: string;
  /** Host of the base URL, for messages. */
  readonly host: string;
  /** Removes secrets, including the literal key, from text. */
  readonly redact: (text: string) => string;
}

/**
 * A short, stable, non-reversible fingerprint of a key + base URL (first 12 hex chars of SHA-256).
 * Used to share clients between extractor and embedder, and to tell credentials apart in logs.
 */
export function credentialFingerprint(apiKey: string, baseURL?: string | null): string {
  return createHash('sha256')
    .update(`mem01-openai\u0000${baseURL ?? ''}\u0000${apiKey}`)
    .digest('hex')
    .slice(0, 12);
}

// Clients built here are shared by fingerprint: an extractor and an embedder with the same key share one
// connection pool. Retries and timeouts are set per request, so sharing is safe whatever the options.
const sharedClients = new Map<string, OpenAI>();

/**
 * Resolves the client from the options (the `openai` client applies its own defaults to what is not given). Throws
 * `ConfigError` (without the key) when no key is available.
 */
export function resolveClient(options: OpenAIClientOptions, factory = 'the OpenAI client'): ResolvedClient {
  refuseEnvOption(options, factory);
  if (options.client) {
    const client = options.client;
    const key = typeof client.apiKey === 'string' ? client.apiKey : '';
    return { client, fingerprint: 'injected', host: hostOf(client.baseURL), redact: makeRedactor(key) };
  }
  // The `openai` client fills in what is not given (its own OPENAI_API_KEY / OPENAI_BASE_URL defaults); the key and
  // URL it settled on decide which shared client this is.
  let built: OpenAI | undefined;
  try {
    built = new OpenAI({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      maxRetries: 0,
      logLevel: 'off',
    });
  } catch {
    built = undefined; // the client refuses to start without a key: the error below says so, without its text
  }
  const apiKey = built?.apiKey;
  if (built === undefined || typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new ConfigError(
      'no OpenAI API key: pass `apiKey` or `client` (or set OPENAI_API_KEY), or use @mem01/local for offline extraction',
    );
  }
  const baseURL = built.baseURL;
  const fingerprint = credentialFingerprint(apiKey, baseURL);
  let client = sharedClients.get(fingerprint);
  if (!client) {
    client = built;
    sharedClients.set(fingerprint, client);
  }
  return { client, fingerprint, host: hostOf(client.baseURL), redact: makeRedactor(apiKey) };
}

/**
 * `ConfigError` for the removed `env` option: this package reads no environment of its own. mem01's environment
 * (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `MEM01_LLM_MODEL`, `MEM01_EMBEDDING_MODEL`) is read by `@mem01/runtime`.
 */
function refuseEnvOption(options: object, factory: string): void {
  if ((options as { env?: unknown }).env !== undefined) {
    throw new ConfigError(
      `${factory} takes no env option any more: pass apiKey, baseURL and model, or open memory through @mem01/runtime (openMemoryRuntime), which reads the environment`,
    );
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'openai';
  }
}

function makeRedactor(key: string): (text: string) => string {
  const literal = key.length >= 4 ? key : '';
  return (text: string) => {
    const out = literal ? text.split(literal).join('***') : text;
    return sanitize(out);
  };
}
