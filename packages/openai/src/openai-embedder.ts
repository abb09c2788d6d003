import { inspect } from 'node:util';
import {
  DimensionMismatchError,
  type Embedder,
  InvalidInputError,
  type Logger,
  type Scope,
} from '@mem01/engine';
import { contentHash, normalizeScope, type Usage } from '@mem01/engine/provider-kit';
import { budgetUsedRemoved, refuseOwnBudgets } from './budget.js';
import { type OpenAIClientOptions, type ResolvedClient, resolveClient } from './client.js';
import { type EmbeddingCache, LruCache } from './lru-cache.js';
import { nonNegative, positive } from './openai-extractor.js';
import { MalformedResponseError, type RetryPolicy, withRetries } from './retry.js';
import { emitUsage, type UsageListener } from './usage.js';

/** Default embedding model, unless `model` says otherwise (`@mem01/runtime` passes `MEM01_EMBEDDING_MODEL` as `model`). */
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';

const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * @deprecated The embedder keeps no budgets: passing `budgets` throws a `ConfigError`. Set the engine's
 * `config.budgets` (same field names), which counts the usage the embedder reports, in the store.
 */
export interface EmbeddingBudgets {
  readonly embeddingCallsPerUser?: number | undefined;
  readonly embeddingTokensPerUser?: number | undefined;
  readonly periodMs?: number | undefined;
}

export interface OpenAIEmbedderOptions extends OpenAIClientOptions {
  /** Model id. Default `text-embedding-3-small`. */
  readonly model?: string | undefined;
  /**
   * Vector length. Default: the model's native length (1536 for text-embedding-3-small). When set, it is sent
   * as the `dimensions` request parameter (text-embedding-3 models shorten their vectors).
   */
  readonly dimensions?: number | undefined;
  /** Texts per request. Default 128 (the API takes up to 2048). */
  readonly batchSize?: number | undefined;
  /** Cache: entries kept (default 10 000; 0 disables), or your own `EmbeddingCache` to share between embedders. */
  readonly cache?: number | EmbeddingCache | undefined;
  /** Cosine similarity floor for a vector-only match. Default 0.25. */
  readonly minSimilarity?: number | undefined;
  /**
   * @deprecated Throws a `ConfigError`: budgets are the engine's `config.budgets`, counted in the store from the usage
   * every request reports.
   */
  readonly budgets?: EmbeddingBudgets | undefined;
  readonly onUsage?: UsageListener | undefined;
  readonly logger?: Logger | undefined;
  readonly retry?: Omit<RetryPolicy, 'maxAttempts' | 'onRetry'> | undefined;
  /** @deprecated Unused (it timed the removed in-process budgets). */
  readonly clock?: (() => number) | undefined;
}

export interface EmbedOptions {
  readonly signal?: AbortSignal | undefined;
  /** Whose text it embeds (the engine passes the user), for the usage report. */
  readonly scope?: Scope | undefined;
  /**
   * The engine's usage report (the `Embedder` port): called after each embeddings request with
   * `{ embeddingCalls: 1, embeddingTokens }` (the response's `usage.prompt_tokens`, else `total_tokens`, else the
   * chars/4 estimate), or once with zeros when the cache served every text. Exceptions thrown by it are ignored.
   */
  readonly onUsage?: ((usage: Usage) => void) | undefined;
}

/** An `Embedder` for the OpenAI embeddings endpoint: batched, cached, dimension-checked. */
export interface OpenAIEmbedder extends Embedder {
  readonly fingerprint: string;
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Cache hits and misses since creation, and requests made. */
  stats(): { hits: number; misses: number; requests: number };
  /** @deprecated Throws a `ConfigError`: the engine counts usage; read it with `engine.usage(scope)`. */
  budgetUsed(userId: string): Record<string, number>;
}

const UNSCOPED = '\u0000unscoped';

class OpenAIEmbedderImpl implements OpenAIEmbedder {
  readonly model: string;
  readonly dimensions: number;
  readonly minSimilarity: number;
  readonly #sendDimensions: boolean;
  readonly #batchSize: number;
  readonly #cache: EmbeddingCache | null;
  readonly #resolved: ResolvedClient;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #options: OpenAIEmbedderOptions;
  #hits = 0;
  #misses = 0;
  #requests = 0;

  constructor(options: OpenAIEmbedderOptions) {
    this.#options = options;
    this.model = options.model ?? DEFAULT_EMBEDDING_MODEL;
    this.#sendDimensions = options.dimensions !== undefined;
    this.dimensions = Math.floor(
      positive(options.dimensions ?? NATIVE_DIMENSIONS[this.model] ?? 1536, 'dimensions'),
    );
    this.minSimilarity = options.minSimilarity ?? 0.25;
    this.#batchSize = Math.min(2048, Math.floor(positive(options.batchSize ?? 128, 'batchSize')));
    const cache = options.cache ?? 10_000;
    this.#cache =
      typeof cache === 'number' ? (nonNegative(cache, 'cache') > 0 ? new LruCache(cache) : null) : cache;
    this.#timeoutMs = positive(options.timeoutMs ?? 30_000, 'timeoutMs');
    this.#maxAttempts = positive(options.maxAttempts ?? 4, 'maxAttempts');
    refuseOwnBudgets(options, 'createOpenAIEmbedder');
    this.#resolved = resolveClient(options, 'createOpenAIEmbedder');
  }

  get fingerprint(): string {
    return this.#resolved.fingerprint;
  }

  stats(): { hits: number; misses: number; requests: number } {
    return { hits: this.#hits, misses: this.#misses, requests: this.#requests };
  }

  budgetUsed(_userId: string): Record<string, number> {
    return budgetUsedRemoved();
  }

  /** Cache key: model, dimensions and a hash of the text. Never the key, never the text. */
  #key(text: string): string {
    return `${this.model}:${this.dimensions}:${contentHash(text)}:${text.length}`;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts)) throw new InvalidInputError('texts', 'must be an array of strings');
    texts.forEach((t, i) => {
      if (typeof t !== 'string') throw new InvalidInputError(`texts[${i}]`, 'must be a string');
      if (t.trim() === '') throw new InvalidInputError(`texts[${i}]`, 'must not be empty');
    });
    const userId = options.scope ? normalizeScope(options.scope).userId : UNSCOPED;
    const out: (Float32Array | undefined)[] = new Array(texts.length);
    const missing = new Map<string, number[]>(); // text -> positions
    let hits = 0;
    texts.forEach((text, i) => {
      const cached = this.#cache?.get(this.#key(text));
      if (cached && cached.length === this.dimensions) {
        out[i] = cached;
        hits++;
        return;
      }
      const positions = missing.get(text);
      if (positions) positions.push(i);
      else missing.set(text, [i]);
    });
    this.#hits += hits;
    this.#misses += missing.size;

    const unique = [...missing.keys()];
    const report = (usage: Usage): void => {
      try {
        options.onUsage?.(usage);
      } catch {
        // The caller's accounting must never break the call.
      }
    };
    for (let start = 0; start < unique.length; start += this.#batchSize) {
      const batch = unique.slice(start, start + this.#batchSize);
      const vectors = await this.#request(batch, userId, options.signal, start === 0 ? hits : 0, report);
      batch.forEach((text, j) => {
        const v = vectors[j]!;
        this.#cache?.set(this.#key(text), v);
        for (const p of missing.get(text) ?? []) out[p] = v;
      });
    }
    if (unique.length === 0) report({ embeddingCalls: 0, embeddingTokens: 0 });
    if (unique.length === 0 && hits > 0) {
      emitUsage(this.#options.onUsage, {
        kind: 'embedding',
        userId: userId === UNSCOPED ? null : userId,
        model: this.model,
        usage: { embeddingCalls: 0, embeddingTokens: 0 },
        attempts: 0,
        cacheHits: hits,
      });
    }
    return out as Float32Array[];
  }

  async #request(
    batch: readonly string[],
    userId: string,
    signal: AbortSignal | undefined,
    cacheHits: number,
    report: (usage: Usage) => void,
  ): Promise<Float32Array[]> {
    const estimate = Math.ceil(batch.reduce((n, t) => n + t.length, 0) / 4);
    const { client, redact, host } = this.#resolved;
    let attempts = 0;
    const logger = this.#options.logger;
    type EmbeddingsResponse = {
      data: { index?: unknown; embedding?: unknown }[];
      usage?: { prompt_tokens?: unknown; total_tokens?: unknown };
    };
    const response: EmbeddingsResponse = await withRetries(
      `embeddings call to ${host}`,
      {
        ...this.#options.retry,
        maxAttempts: this.#maxAttempts,
        onRetry: ({ attempt, delayMs, reason }) =>
          logger?.warn(
            `mem01/openai: embedding attempt ${attempt}/${this.#maxAttempts} failed (${reason}); retrying in ${delayMs} ms`,
          ),
      },
      signal,
      redact,
      async (n) => {
        attempts = n;
        this.#requests++;
        const res: unknown = await client.embeddings.create(
          {
            model: this.model,
            input: [...batch],
            ...(this.#sendDimensions ? { dimensions: this.dimensions } : {}),
          },
          { signal, timeout: this.#timeoutMs, maxRetries: 0 },
        );
        const data = (res as { data?: unknown } | null)?.data;
        if (!Array.isArray(data) || data.length !== batch.length) {
          throw new MalformedResponseError(
            `embeddings response has ${Array.isArray(data) ? data.length : 'no'} vectors for ${batch.length} inputs`,
          );
        }
        return res as EmbeddingsResponse;
      },
    );
    const vectors: Float32Array[] = new Array(batch.length);
    response.data.forEach((item, j) => {
      const index = typeof item.index === 'number' ? item.index : j;
      const raw = item.embedding;
      if (!Array.isArray(raw) && !(raw instanceof Float32Array)) {
        throw new DimensionMismatchError(this.dimensions, 0, `OpenAI embedding ${index}`);
      }
      if (raw.length !== this.dimensions) {
        throw new DimensionMismatchError(
          this.dimensions,
          raw.length,
          `OpenAI embedding ${index} (${this.model})`,
        );
      }
      vectors[index] = Float32Array.from(raw as ArrayLike<number>);
    });
    if (vectors.some((v) => v === undefined) || vectors.length !== batch.length) {
      throw new DimensionMismatchError(
        batch.length,
        response.data.length,
        'OpenAI embeddings response (vector count)',
      );
    }
    const tokens =
      tokenCount(response.usage?.prompt_tokens) ?? tokenCount(response.usage?.total_tokens) ?? estimate;
    const usage: Usage = { embeddingCalls: 1, embeddingTokens: tokens };
    report(usage);
    emitUsage(this.#options.onUsage, {
      kind: 'embedding',
      userId: userId === UNSCOPED ? null : userId,
      model: this.model,
      usage,
      attempts,
      cacheHits,
    });
    return vectors;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: 'openai-embedder',
      model: this.model,
      dimensions: this.dimensions,
      host: this.#resolved.host,
      credentials: this.#resolved.fingerprint,
    };
  }

  toString(): string {
    return `OpenAIEmbedder(${this.model}/${this.dimensions} @ ${this.#resolved.host}, credentials ${this.#resolved.fingerprint})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** A token count from a response: a non-negative safe integer, else undefined. */
function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Creates the OpenAI embedder: batched requests, an LRU cache keyed by model + dimensions + content hash,
 * vector lengths checked against `dimensions`. Throws `ConfigError` when no client or API key is available.
 */
export function createOpenAIEmbedder(options: OpenAIEmbedderOptions = {}): OpenAIEmbedder {
  return new OpenAIEmbedderImpl(options);
}
