/**
 * The checks an HTTP request passes before the MCP transport sees it (Host, Origin, body size and syntax), and
 * the one shape of every refusal: a generic JSON-RPC error carrying an error id, with the detail only in the
 * server's log under the same id.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { sanitize } from '@mem01/engine/binding-kit';
import getRawBody from 'raw-body';

export { DEFAULT_MAX_BODY_BYTES } from './http-limits.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The host name of a `Host` header (without the port), lower-cased; `undefined` when it is not one. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Which `Origin` headers are accepted: none at all (a non-browser client), a loopback origin
 * (`http(s)://localhost|127.0.0.1|[::1]` on any port), or one of `extra`, compared as serialised origins.
 * `null` (sandboxed frames, `file:` pages) and every other origin are refused: a browser page there could
 * otherwise reach a local server it was never meant to.
 */
export function originPolicy(extra: readonly string[] = []): (origin: string | undefined) => boolean {
  const allowed = new Set(extra.map(canonicalOrigin));
  return (origin) => {
    if (origin === undefined) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    // An Origin header is a bare origin: anything more (a path, credentials) is not one a browser sends.
    if (url.origin === 'null' || url.origin !== origin.replace(/\/$/, '').toLowerCase()) return false;
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname))
      return true;
    return allowed.has(url.origin);
  };
}

/** `--allow-origin` value to its serialised origin; throws `TypeError` for something that is not a URL. */
export function canonicalOrigin(value: string): string {
  const url = new URL(value.trim());
  if (url.origin === 'null') throw new TypeError(`not an http(s) origin: ${value}`);
  return url.origin;
}

/** A refusal: its HTTP status, JSON-RPC code, the generic text the client sees, and the detail for the log. */
export interface Refusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  /** For the server log only; never secrets or request content. */
  readonly detail: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** The response's own `writeHead` and `end`, where {@link genericErrorsFrom} replaced them. */
const originals = new WeakMap<ServerResponse, { writeHead: WriteHead; end: End }>();
type WriteHead = (status: number, headers?: Record<string, unknown>) => ServerResponse;
type End = (body?: string) => ServerResponse;

/** Writes a refusal: the generic body with a fresh error id, the detail logged under that id. */
export function refuse(res: ServerResponse, refusal: Refusal, log: (line: string) => void): void {
  const errorId = randomUUID();
  log(`mem01-mcp: HTTP ${refusal.status} [${errorId}] ${refusal.detail}`);
  const writeHead = originals.get(res)?.writeHead ?? (res.writeHead.bind(res) as WriteHead);
  const end = originals.get(res)?.end ?? (res.end.bind(res) as End);
  if (res.headersSent) {
    end();
    return;
  }
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: refusal.code, message: refusal.message, data: { errorId } },
    id: null,
  });
  writeHead(refusal.status, {
    ...refusal.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  end(body);
}

/** The outcome of reading a POST body. */
export type BodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly refusal: Refusal };

/**
 * Reads a JSON body of at most `limit` bytes. A declared `Content-Length` over the limit is refused before a
 * byte is read, a streamed body as soon as it passes the limit; either way the connection is then closed rather
 * than drained, so an oversized upload costs the server nothing more.
 */
export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<BodyResult> {
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return refusal(
      415,
      -32000,
      'unsupported media type: send application/json',
      `content-type ${quote(type)}`,
    );
  }
  const declared = req.headers['content-length'];
  const tooLarge: BodyResult = {
    ok: false,
    refusal: {
      status: 413,
      code: -32000,
      message: `request body too large (limit ${limit} bytes)`,
      detail: `body over ${limit} bytes${declared ? ` (declared ${Number(declared)})` : ''}`,
      headers: { connection: 'close' },
    },
  };
  if (declared !== undefined && Number(declared) > limit) return tooLarge;
  // A client that waits for "100 Continue" is invited only now, past every check: Node would otherwise invite
  // the upload before the token was looked at.
  if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
  let text: string;
  try {
    text = await getRawBody(req, { limit, encoding: 'utf8' });
  } catch (err) {
    const type = (err as { type?: unknown }).type;
    if (type === 'entity.too.large') return tooLarge;
    return refusal(400, -32000, 'bad request', `body not read: ${typeof type === 'string' ? type : 'error'}`);
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // The parser's message quotes the body: the log gets its size only.
    return refusal(400, -32700, 'parse error', `malformed JSON (${Buffer.byteLength(text)} bytes)`);
  }
}

function refusal(status: number, code: number, message: string, detail: string): BodyResult {
  return { ok: false, refusal: { status, code, message, detail } };
}

/** A client-sent value for a log line: quoted, control characters escaped, cut short. */
export function quote(value: string | undefined): string {
  return value === undefined ? '(none)' : JSON.stringify(value.slice(0, 200));
}

/**
 * Makes every 4xx/5xx response the MCP transport writes on `res` generic: its body (a protocol message, or, for
 * an unexpected failure, the failure's own text) goes to the log under a fresh error id, and the client gets the
 * HTTP status text, the same JSON-RPC code and the id. Success responses and streams pass untouched.
 */
export function genericErrorsFrom(res: ServerResponse, log: (line: string) => void): void {
  const writeHead = res.writeHead.bind(res) as (
    status: number,
    headers?: Record<string, unknown>,
  ) => ServerResponse;
  const end = res.end.bind(res) as (body?: string) => ServerResponse;
  const patched = res as unknown as {
    writeHead: (status: number, ...rest: unknown[]) => ServerResponse;
    write: (chunk: unknown, ...rest: unknown[]) => boolean;
    end: (...args: unknown[]) => ServerResponse;
  };
  patched.writeHead = (status, ...rest) => {
    if (status < 400) return writeHead(status, ...(rest as [Record<string, unknown>?]));
    const given = rest.find((r) => r !== null && typeof r === 'object') as
      | Record<string, unknown>
      | undefined;
    const headers: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(given ?? {})) {
      if (!/^(content-length|content-type|transfer-encoding)$/i.test(key)) headers[key] = value;
    }
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    patched.write = (chunk) => {
      keep(chunk);
      return true;
    };
    patched.end = (...args) => {
      if (typeof args[0] !== 'function') keep(args[0]);
      const original = Buffer.concat(chunks).toString('utf8');
      const errorId = randomUUID();
      // An unexpected failure's text may quote a connection URL: credentials are masked, as everywhere else.
      log(`mem01-mcp: HTTP ${status} [${errorId}] ${quote(sanitize(original.slice(0, 300)))}`);
      const body = JSON.stringify({
        jsonrpc: '2.0',
        error: {
          code: rpcCode(original),
          message: (STATUS_CODES[status] ?? 'error').toLowerCase(),
          data: { errorId },
        },
        id: null,
      });
      writeHead(status, {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      return end(body);
    };
    return res;
  };
}

function rpcCode(body: string): number {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === 'number' && Number.isInteger(code)) return code;
  } catch {
    // Not JSON-RPC (a plain-text failure): the generic internal error below.
  }
  return -32603;
}

/** Whether `host` is a loopback name the server always accepts in `Host`. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}
