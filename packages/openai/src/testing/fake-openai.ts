/**
 * A small OpenAI-compatible HTTP server for tests, smoke runs and benchmarks. It listens on 127.0.0.1 on a
 * random port and serves `POST /v1/responses` and `POST /v1/embeddings`, so the real `openai` client can talk
 * to it through `baseURL`. Replies and faults are scripted per request; every request is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isSummaryRequest } from './summary-data.js';

/** The endpoints the fake serves. */
export type FakeEndpoint = 'responses' | 'embeddings';

/** A recorded request. */
export interface FakeRequest {
  readonly endpoint: FakeEndpoint | 'other';
  readonly method: string;
  /** Path including `/v1`. */
  readonly path: string;
  /** Lower-cased request headers, without `authorization`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether an `Authorization: Bearer …` header was sent (its value is never recorded). */
  readonly authorized: boolean;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  readonly body: unknown;
  /** For `responses`: `instructions` followed by the text of every input message, joined by newlines. */
  readonly inputText: string;
  /** Rough token count of what the request asks the model to read: characters / 4, rounded up. */
  readonly inputTokens: number;
  /** 1-based sequence number across all endpoints. */
  readonly seq: number;
}

/** What to do with one request. Steps are consumed in order per endpoint; then the default behaviour applies. */
export type FakeStep =
  /** Respond with this HTTP status; `body` defaults to an OpenAI-style error object. */
  | {
      readonly type: 'status';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: unknown;
    }
  /** 429 with `Retry-After` (seconds or an HTTP date) and/or `retry-after-ms`. */
  | { readonly type: 'rate_limit'; readonly retryAfter?: string; readonly retryAfterMs?: number }
  /** Wait `delayMs` before replying with `then` (default: the default behaviour). For timeouts. */
  | { readonly type: 'slow'; readonly delayMs: number; readonly then?: FakeStep }
  /** 200 with `Content-Type: application/json` and a body that is not JSON. */
  | { readonly type: 'malformed' }
  /** 200 announcing a longer `Content-Length` than it sends, then the connection is destroyed. */
  | { readonly type: 'truncated' }
  /** Destroys the connection without any response. */
  | { readonly type: 'reset' }
  /** `responses`: a completed response whose output text is `output` (strings as is, anything else as JSON). */
  | { readonly type: 'output'; readonly output: unknown; readonly status?: 'completed' | 'incomplete' }
  /** `responses`: a completed response whose message is a refusal. */
  | { readonly type: 'refusal'; readonly message?: string }
  /** `embeddings`: these vectors, one per input (encoded as the request asks). */
  | { readonly type: 'vectors'; readonly vectors: readonly (readonly number[])[] }
  /** Any JSON body with any status. */
  | { readonly type: 'json'; readonly body: unknown; readonly status?: number }
  /** Decides per request. */
  | { readonly type: 'handler'; readonly handle: (request: FakeRequest) => FakeStep | Promise<FakeStep> };

/** Default output of `/v1/responses`: returns the object to send as output text (serialised as JSON). */
export type FakeResponsesHandler = (request: FakeRequest) => unknown | Promise<unknown>;

export interface FakeOpenAIOptions {
  /**
   * Output of `/v1/responses` when no step is scripted. Default: `{ ops: [] }` (a valid, empty
   * extraction), or `{ summary: '', turns: [] }` (no summary) for a summary request, so a smoke run against the fake
   * does nothing harmful.
   */
  readonly responses?: FakeResponsesHandler | undefined;
  /** Vector length when the request names no `dimensions`. Default: 3072 for text-embedding-3-large, else 1536. */
  readonly embeddingDimensions?: number | undefined;
}

/** A running fake. */
export interface FakeOpenAI {
  /** Base URL for the `openai` client, including `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  readonly url: string;
  /** Every request received, in order (live array). */
  readonly requests: readonly FakeRequest[];
  /** Appends steps for the next requests to `endpoint`. */
  script(endpoint: FakeEndpoint, ...steps: FakeStep[]): void;
  /** Replaces the default `/v1/responses` output. */
  setResponses(handler: FakeResponsesHandler): void;
  /** Recorded requests to one endpoint. */
  requestsFor(endpoint: FakeEndpoint): FakeRequest[];
  /** Steps not consumed yet, per endpoint. */
  pending(): Record<FakeEndpoint, number>;
  /** Clears recorded requests and scripted steps. */
  reset(): void;
  /** Stops the server, closing open connections. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Starts the fake on 127.0.0.1 with a random port.
 *
 * @example
 * ```ts
 * const fake = await startFakeOpenAI();
 * const client = new OpenAI({ apiKey: 'test', baseURL: fake.url });
 * fake.script('responses', { type: 'rate_limit', retryAfterMs: 10 }, { type: 'output', output: { ops: [] } });
 * // … exercise code, then assert on fake.requests …
 * await fake.close();
 * ```
 */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: FakeRequest[] = [];
  const queues: Record<FakeEndpoint, FakeStep[]> = { responses: [], embeddings: [] };
  let responsesHandler: FakeResponsesHandler =
    options.responses ??
    ((request) => (isSummaryRequest(request) ? { summary: '', turns: [] } : { ops: [] }));
  let seq = 0;
  let responseSeq = 0;

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, errorBody(`fake server error: ${String(err)}`, 'server_error'));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown = raw;
    try {
      body = raw === '' ? null : JSON.parse(raw);
    } catch {
      // keep the raw text
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const endpoint: FakeEndpoint | 'other' =
      req.method === 'POST' && path === '/v1/responses'
        ? 'responses'
        : req.method === 'POST' && path === '/v1/embeddings'
          ? 'embeddings'
          : 'other';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (k === 'authorization' || v === undefined) continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const inputText = endpoint === 'responses' ? responsesInputText(body) : embeddingInputs(body).join('\n');
    const formatChars = endpoint === 'responses' ? JSON.stringify(textFormatOf(body) ?? '').length : 0;
    const request: FakeRequest = {
      endpoint,
      method: req.method ?? 'GET',
      path,
      headers,
      authorized: /^Bearer\s+\S/i.test(req.headers.authorization ?? ''),
      body,
      inputText,
      inputTokens: Math.ceil((inputText.length + formatChars) / 4),
      seq: ++seq,
    };
    requests.push(request);
    if (endpoint === 'other') {
      sendJson(res, 404, errorBody(`fake OpenAI: no route for ${req.method} ${path}`, 'not_found'));
      return;
    }
    const step = queues[endpoint].shift();
    await respond(endpoint, step, request, req, res);
  }

  async function respond(
    endpoint: FakeEndpoint,
    step: FakeStep | undefined,
    request: FakeRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    if (!step) {
      if (endpoint === 'responses') {
        sendJson(res, 200, responseBody(request, await responsesHandler(request), ++responseSeq));
      } else {
        const inputs = embeddingInputs(request.body);
        const dims = dimensionsFor(request.body, options.embeddingDimensions);
        sendJson(
          res,
          200,
          embeddingsBody(
            request,
            inputs.map((t) => fakeEmbedding(t, dims)),
          ),
        );
      }
      return;
    }
    switch (step.type) {
      case 'handler':
        return respond(endpoint, await step.handle(request), request, req, res);
      case 'status':
        sendJson(
          res,
          step.status,
          step.body ??
            errorBody(
              `fake OpenAI error ${step.status}`,
              step.status >= 500 ? 'server_error' : 'invalid_request_error',
            ),
          step.headers,
        );
        return;
      case 'rate_limit': {
        const h: Record<string, string> = {};
        if (step.retryAfter !== undefined) h['retry-after'] = step.retryAfter;
        if (step.retryAfterMs !== undefined) h['retry-after-ms'] = String(step.retryAfterMs);
        sendJson(res, 429, errorBody('Rate limit reached (fake)', 'rate_limit_exceeded'), h);
        return;
      }
      case 'slow': {
        const closed = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => {
            res.off('close', onClose);
            resolve(false);
          }, step.delayMs);
          const onClose = () => {
            clearTimeout(timer);
            resolve(true);
          };
          res.once('close', onClose);
        });
        if (closed || res.destroyed) return;
        return respond(endpoint, step.then, request, req, res);
      }
      case 'malformed': {
        const text = '{"id": "resp_broken", "output": [ this is not json';
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(encoder.encode(text).length),
        });
        res.end(text);
        return;
      }
      case 'truncated': {
        const full = JSON.stringify(
          endpoint === 'responses'
            ? responseBody(request, { ops: [] }, ++responseSeq)
            : embeddingsBody(request, [[0]]),
        );
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(full.length + 500),
        });
        res.write(full.slice(0, Math.floor(full.length / 2)), () => {
          setTimeout(() => res.destroy(), 10);
        });
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'output':
        sendJson(res, 200, responseBody(request, step.output, ++responseSeq, step.status));
        return;
      case 'refusal':
        sendJson(
          res,
          200,
          refusalBody(request, step.message ?? "I'm sorry, I can't help with that.", ++responseSeq),
        );
        return;
      case 'vectors':
        sendJson(res, 200, embeddingsBody(request, step.vectors));
        return;
      case 'json':
        sendJson(res, step.status ?? 200, step.body);
        return;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script(endpoint, ...steps) {
      queues[endpoint].push(...steps);
    },
    setResponses(handler) {
      responsesHandler = handler;
    },
    requestsFor(endpoint) {
      return requests.filter((r) => r.endpoint === endpoint);
    },
    pending() {
      return { responses: queues.responses.length, embeddings: queues.embeddings.length };
    },
    reset() {
      requests.length = 0;
      queues.responses.length = 0;
      queues.embeddings.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * A deterministic embedding of `text`: hashed bag of lower-cased words (signed feature hashing), unit length.
 * Texts sharing words get a positive cosine similarity, so demos against the fake recall sensibly.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const v = new Float64Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const features = words.length > 0 ? words : [text];
  for (const w of features) {
    const h = fnv1a(w);
    const sign = (h & 1) === 0 ? 1 : -1;
    v[(h >>> 1) % dimensions]! += sign;
    const h2 = fnv1a(`#${w}`);
    v[(h2 >>> 1) % dimensions]! += 0.5 * ((h2 & 1) === 0 ? 1 : -1);
  }
  let n = 0;
  for (const x of v) n += x * x;
  const inv = n === 0 ? 0 : 1 / Math.sqrt(n);
  return Array.from(v, (x) => x * inv);
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(encoder.encode(text).length),
    'x-request-id': `req_fake_${Math.random().toString(36).slice(2, 10)}`,
    ...headers,
  });
  res.end(text);
}

function errorBody(message: string, type: string): unknown {
  return { error: { message, type, param: null, code: type } };
}

function textFormatOf(body: unknown): unknown {
  return (body as { text?: { format?: unknown } } | null)?.text?.format;
}

function responsesInputText(body: unknown): string {
  const b = body as { instructions?: unknown; input?: unknown } | null;
  const parts: string[] = [];
  if (typeof b?.instructions === 'string') parts.push(b.instructions);
  const input = b?.input;
  if (typeof input === 'string') parts.push(input);
  else if (Array.isArray(input)) {
    for (const item of input as { content?: unknown }[]) {
      const c = item?.content;
      if (typeof c === 'string') parts.push(c);
      else if (Array.isArray(c)) {
        for (const p of c as { text?: unknown }[]) if (typeof p?.text === 'string') parts.push(p.text);
      }
    }
  }
  return parts.join('\n');
}

function embeddingInputs(body: unknown): string[] {
  const input = (body as { input?: unknown } | null)?.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) return input.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  return [];
}

function dimensionsFor(body: unknown, fallback: number | undefined): number {
  const b = body as { dimensions?: unknown; model?: unknown } | null;
  if (typeof b?.dimensions === 'number' && b.dimensions > 0) return b.dimensions;
  if (fallback) return fallback;
  return b?.model === 'text-embedding-3-large' ? 3072 : 1536;
}

function modelOf(request: FakeRequest): string {
  const m = (request.body as { model?: unknown } | null)?.model;
  return typeof m === 'string' ? m : 'fake-model';
}

function responseBody(
  request: FakeRequest,
  output: unknown,
  n: number,
  status: 'completed' | 'incomplete' = 'completed',
) {
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  const outputTokens = Math.ceil(text.length / 4);
  return {
    id: `resp_fake_${n}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    error: null,
    model: modelOf(request),
    output: [
      {
        type: 'message',
        id: `msg_fake_${n}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
    ],
    usage: {
      input_tokens: request.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: request.inputTokens + outputTokens,
    },
  };
}

function refusalBody(request: FakeRequest, refusal: string, n: number) {
  const body = responseBody(request, '', n);
  return {
    ...body,
    output: [
      {
        type: 'message',
        id: `msg_fake_${n}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'refusal', refusal }],
      },
    ],
  };
}

function embeddingsBody(request: FakeRequest, vectors: readonly (readonly number[])[]) {
  const base64 = (request.body as { encoding_format?: unknown } | null)?.encoding_format === 'base64';
  return {
    object: 'list',
    model: modelOf(request),
    data: vectors.map((v, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v,
    })),
    usage: { prompt_tokens: request.inputTokens, total_tokens: request.inputTokens },
  };
}
