/** Client resolution: an injected `OpenAI` client, or one built from a key, shared by a credential fingerprint. */
import { createHash } from 'node:crypto';
import { ConfigError } from '@mem01/engine';
import { sanitize } from '@mem01/engine/provider-kit';
import OpenAI from 'openai';

/** Connection options shared by the extractor and the embedder. */
export interface OpenAIClientOptions {
  /** A ready client. When given, `apiKey` and `baseURL` are ignored. Its own retry settings are overridden per request. */
  readonly client?: OpenAI | undefined;
  /** API key. Default: `env.OPENAI_API_KEY`. Never logged, never part of an error or cache key. */
  readonly apiKey?: string | undefined;
  /** Base URL including `/v1`. Default: `env.OPENAI_BASE_URL`, else the OpenAI API. */
  readonly baseURL?: string | undefined;
  /** Timeout of one HTTP attempt, in ms. Default 60 000 for extraction, 30 000 for embeddings. */
  readonly timeoutMs?: number | undefined;
  /** Attempts per call including the first (retries on 429, 408, 409, 5xx, network errors, bad bodies). Default 4. */
  readonly maxAttempts?: number | undefined;
  /** Environment to read defaults from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
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
export function credentialFingerprint(apiKey: string, baseURL?: string): string {
  return createHash('sha256')
    .update(`mem01-openai\u0000${baseURL ?? ''}\u0000${apiKey}`)
    .digest('hex')
    .slice(0, 12);
}

// Clients built here are shared by fingerprint: an extractor and an embedder with the same key share one
// connection pool. Retries and timeouts are set per request, so sharing is safe whatever the options.
const sharedClients = new Map<string, OpenAI>();

/** Resolves the client from options and environment. Throws `ConfigError` (without the key) when no key is available. */
export function resolveClient(options: OpenAIClientOptions): ResolvedClient {
  const env = options.env ?? process.env;
  if (options.client) {
    const client = options.client;
    const key = typeof client.apiKey === 'string' ? client.apiKey : '';
    return { client, fingerprint: 'injected', host: hostOf(client.baseURL), redact: makeRedactor(key) };
  }
  const apiKey = options.apiKey ?? env.OPENAI_API_KEY;
  const baseURL = options.baseURL ?? env.OPENAI_BASE_URL ?? undefined;
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new ConfigError(
      'OPENAI_API_KEY is not set: pass `apiKey` or `client`, or use @mem01/local for offline extraction',
    );
  }
  const fingerprint = credentialFingerprint(apiKey, baseURL);
  let client = sharedClients.get(fingerprint);
  if (!client) {
    client = new OpenAI({ apiKey, baseURL: baseURL ?? null, maxRetries: 0, logLevel: 'off' });
    sharedClients.set(fingerprint, client);
  }
  return { client, fingerprint, host: hostOf(client.baseURL), redact: makeRedactor(apiKey) };
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
