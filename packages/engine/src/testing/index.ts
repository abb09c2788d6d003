/**
 * Test helpers for code built on the engine. Never import these in production code.
 */
import { createBelief } from '../belief.js';
import { ExtractionError } from '../errors.js';
import type {
  Embedder,
  ExtractionOperation,
  ExtractionRequest,
  ExtractionResult,
  Extractor,
} from '../ports.js';
import type { Belief } from '../types.js';
import { contentHash, normalizeVector } from '../util.js';

export { CREDENTIAL_FORMS, type CredentialForm, leakedSecret } from './credential-forms.js';

export interface KeyValueExtractorOptions {
  /** Delay before answering, per call (e.g. random, to shake out ordering bugs). */
  readonly delayMs?: ((request: ExtractionRequest) => number) | undefined;
  /** Throw this error for a call when it returns one. */
  readonly failWhen?: ((request: ExtractionRequest) => Error | undefined) | undefined;
  /** Character budget per batch; 0 = one turn per call. */
  readonly batchChars?: number | undefined;
  /** Confidence given to every add. Default 0.9. */
  readonly confidence?: number | undefined;
}

/**
 * A deterministic extractor for tests. In a user turn, every `key=value` (separated by `;` or newlines) adds a
 * belief `user.key = value`, and `!key` retracts the candidate on that key. Assistant turns are ignored.
 * It records every turn it was given (`seen`), so tests can check that each turn is extracted exactly once.
 */
export class KeyValueExtractor implements Extractor {
  readonly name = 'key-value-test';
  readonly batchChars: number;
  /** Turn ids in the order they were extracted. */
  readonly seen: string[] = [];
  calls = 0;
  private readonly options: KeyValueExtractorOptions;

  constructor(options: KeyValueExtractorOptions = {}) {
    this.options = options;
    this.batchChars = options.batchChars ?? 0;
  }

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    this.calls++;
    const delay = this.options.delayMs?.(request) ?? 0;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    const failure = this.options.failWhen?.(request);
    if (failure) throw failure;
    const operations: ExtractionOperation[] = [];
    for (const turn of request.turns) {
      this.seen.push(turn.id);
      if (turn.role !== 'user') continue;
      for (const raw of turn.text.split(/[;\n]/)) {
        const part = raw.trim();
        const retract = /^!([\w.:-]+)$/.exec(part);
        if (retract) {
          const c = request.candidates.find((x) => x.attribute === retract[1]);
          if (c) operations.push({ op: 'retract', id: c.id, evidence: [{ turnId: turn.id, quote: part }] });
          continue;
        }
        const kv = /^([\w.:-]+)\s*=\s*(.+)$/.exec(part);
        if (!kv) continue;
        const [, key, value] = kv as unknown as [string, string, string];
        operations.push({
          op: 'add',
          kind: 'fact',
          subject: 'user',
          attribute: key,
          value: value.trim(),
          statement: `The user's ${key.replace(/_/g, ' ')} is ${value.trim()}.`,
          confidence: this.options.confidence ?? 0.9,
          evidence: [{ turnId: turn.id, quote: part }],
        });
      }
    }
    return { operations, usage: { llmCalls: 0 } };
  }
}

/** An assistant turn as the Agents SDK keeps it in a session: a completed message with one `output_text` part. */
export function assistantMessageItem(text: string, id = 'msg_1') {
  return {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    id,
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** An extractor that returns whatever `fn` returns (including malformed output), for validation tests. */
export function scriptedExtractor(
  fn: (request: ExtractionRequest) => unknown,
  name = 'scripted-test',
): Extractor & { requests: ExtractionRequest[] } {
  const requests: ExtractionRequest[] = [];
  return {
    name,
    requests,
    async extract(request) {
      requests.push(request);
      const out = await fn(request);
      if (!out || typeof out !== 'object' || !Array.isArray((out as { operations?: unknown }).operations)) {
        throw new ExtractionError('scripted extractor returned no operations array');
      }
      return out as ExtractionResult;
    },
  };
}

/**
 * A tiny deterministic embedder for tests: hashed lower-case words, L2-normalised. Lexical, not semantic.
 * Counts its calls so tests can check caching and batching.
 */
export class WordHashEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly minSimilarity = 0.2;
  /** Similarity here is shared words: recall weighs the lexical signal more, and a vector match alone is not enough. */
  readonly kind = 'lexical' as const;
  calls = 0;

  constructor(dimensions = 64) {
    this.dimensions = dimensions;
    this.model = `word-hash-test-${dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((text) => {
      const v = new Float32Array(this.dimensions);
      for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
        const h = Number.parseInt(contentHash(word).slice(0, 8), 16);
        v[h % this.dimensions]! += h & 1 ? 1 : -1;
      }
      return normalizeVector(v);
    });
  }
}

/**
 * `count` distinct beliefs of one user for benchmarks and load tests: belief `i` is `fact_i`, "The user noted fact
 * number i about topic i % 97 and hobby i % 13.", told in conversation `s-(i % sessions)` at `start + i × stepMs`.
 */
export function syntheticBeliefs(
  count: number,
  options: {
    readonly userId: string;
    readonly sessions?: number | undefined;
    readonly stepMs?: number | undefined;
    readonly start?: string | undefined;
  },
): Belief[] {
  const start = Date.parse(options.start ?? '2026-01-01T00:00:00Z');
  const sessions = options.sessions ?? 200;
  const step = options.stepMs ?? 1000;
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(start + i * step).toISOString();
    const statement = `The user noted fact number ${i} about topic ${i % 97} and hobby ${i % 13}.`;
    return createBelief({
      scope: { userId: options.userId },
      kind: 'fact',
      subject: 'user',
      attribute: `fact_${i}`,
      value: `value ${i}`,
      statement,
      confidence: 0.9,
      source: 'extracted',
      evidence: [{ sessionId: `s-${i % sessions}`, position: i, role: 'user', quote: statement, at }],
      at,
    });
  });
}
