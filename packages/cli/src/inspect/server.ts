/**
 * `mem01 inspect`: a small local web server on 127.0.0.1. Every request needs the random token (in the URL on
 * first load, then an HttpOnly SameSite=Strict cookie); state-changing requests are POSTs that must also come
 * from the page's own origin. All policy goes through the engine.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FullStore, Mem01Error, type MemoryAdmin } from '@mem01/engine';
import { normalizeScope, sanitize } from '@mem01/engine/binding-kit';
import { APP_CSS, APP_JS } from './assets.js';
import {
  beliefPage,
  errorPage,
  MAX_ROWS,
  type PageScope,
  qs,
  recallPage,
  userPage,
  usersPage,
} from './html.js';

export interface InspectorOptions {
  readonly engine: MemoryAdmin;
  readonly store: FullStore;
  /** Default 0: a random free port. */
  readonly port?: number | undefined;
  /** Default: 32 random bytes, base64url. */
  readonly token?: string | undefined;
}

export interface Inspector {
  /** `http://127.0.0.1:PORT/?token=…` */
  readonly url: string;
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const COOKIE = 'mem01_inspect';
const MAX_BODY = 64 * 1024;
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the inspector. Listens on 127.0.0.1 only. */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const token = options.token ?? randomBytes(32).toString('base64url');
  const tokenBuf = Buffer.from(token);
  let port = 0;
  const origins = () => [`http://127.0.0.1:${port}`, `http://localhost:${port}`];

  const tokenOk = (candidate: string | undefined | null): boolean => {
    if (!candidate) return false;
    const buf = Buffer.from(candidate);
    return buf.length === tokenBuf.length && timingSafeEqual(buf, tokenBuf);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : statusOf(err);
      const message =
        err instanceof HttpError || err instanceof Mem01Error
          ? err.message
          : 'internal error (see the terminal)';
      if (!(err instanceof HttpError) && !(err instanceof Mem01Error)) {
        process.stderr.write(`inspect: ${sanitize(err instanceof Error ? err.message : String(err))}\n`);
      }
      if (!res.headersSent) send(res, status, errorPage(status, message));
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    // DNS rebinding: only our own host names.
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      throw new HttpError(421, 'unexpected Host header');

    const cookieToken = readCookie(req.headers.cookie, COOKIE);
    const queryToken = url.searchParams.get('token');
    if (req.method === 'GET' && queryToken !== null) {
      if (!tokenOk(queryToken)) return unauthorized(res);
      // Move the token from the URL into a cookie, then drop it from the address bar.
      url.searchParams.delete('token');
      res.setHeader('Set-Cookie', `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`);
      return redirect(res, url.pathname + url.search);
    }

    if (req.method === 'POST') {
      const form = await readForm(req);
      if (!tokenOk(cookieToken) && !tokenOk(form.get('token'))) return unauthorized(res);
      if (!sameOrigin(req, origins())) throw new HttpError(403, 'cross-origin request refused');
      return act(url.pathname, form, res);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD, POST');
      throw new HttpError(405, 'method not allowed');
    }
    if (!tokenOk(cookieToken) && !tokenOk(bearer(req.headers.authorization))) return unauthorized(res);
    return page(url, res);
  }

  async function page(url: URL, res: ServerResponse): Promise<void> {
    const p = url.searchParams;
    switch (url.pathname) {
      case '/app.css':
        return send(res, 200, APP_CSS, 'text/css; charset=utf-8');
      case '/app.js':
        return send(res, 200, APP_JS, 'text/javascript; charset=utf-8');
      case '/':
        return send(res, 200, usersPage(await options.store.listScopes()));
      case '/user': {
        const s = pageScope(p);
        const scope = normalizeScope(s);
        const q = p.get('q') ?? '';
        // Without a search only the newest rows are shown, so only they are read.
        const [active, pending] = await Promise.all([
          q.trim()
            ? listAll(options.engine, scope, 'active').then((items) => ({ items, more: false }))
            : options.engine
                .list(scope, { statuses: ['active'], limit: MAX_ROWS })
                .then((page) => ({ items: page.items, more: page.nextCursor !== null })),
          listAll(options.engine, scope, 'pending'),
        ]);
        return send(res, 200, userPage(s, active.items, pending, q, p.get('msg') ?? undefined, active.more));
      }
      case '/belief': {
        const s = pageScope(p);
        const id = p.get('id');
        if (!id) throw new HttpError(400, 'missing id');
        const scope = normalizeScope(s);
        const chain = await options.engine.history(scope, { id });
        if (chain.length === 0) throw new HttpError(404, 'belief not found');
        const audit = await options.store.auditLog(scope);
        return send(res, 200, beliefPage(s, id, chain, audit, p.get('msg') ?? undefined));
      }
      case '/recall': {
        const s = pageScope(p);
        const q = p.get('q');
        const result =
          q === null ? null : await options.engine.context(normalizeScope(s), q, { explain: true });
        return send(res, 200, recallPage(s, q ?? '', result));
      }
      case '/favicon.ico':
        res.writeHead(204, securityHeaders());
        res.end();
        return;
      default:
        throw new HttpError(404, 'not found');
    }
  }

  async function act(path: string, form: URLSearchParams, res: ServerResponse): Promise<void> {
    const s = pageScope(form);
    const scope = normalizeScope(s);
    const id = form.get('id');
    if (!id) throw new HttpError(400, 'missing id');
    const back = (pathname: string, extra: Record<string, string>) =>
      redirect(res, `${pathname}${qs({ u: s.userId, ns: s.namespace || undefined, ...extra })}`);
    switch (path) {
      case '/act/forget':
        await options.engine.forget(scope, id);
        return back('/user', { msg: 'Belief forgotten: its content was removed.' });
      case '/act/correct': {
        const text = form.get('text') ?? '';
        const replacement = await options.engine.correct(scope, id, text);
        return back('/belief', {
          id: replacement.id,
          msg: 'Corrected: the old belief is kept as superseded.',
        });
      }
      case '/act/approve':
        await options.engine.approve(scope, id);
        return back('/user', { msg: 'Belief approved.' });
      case '/act/reject':
        await options.engine.reject(scope, id);
        return back('/user', { msg: 'Belief rejected.' });
      default:
        throw new HttpError(404, 'not found');
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function pageScope(p: URLSearchParams): PageScope {
  const userId = p.get('u');
  if (!userId) throw new HttpError(400, 'missing user (u)');
  return { userId, namespace: p.get('ns') ?? '' };
}

async function listAll(
  engine: MemoryAdmin,
  scope: { userId: string; namespace: string },
  status: 'active' | 'pending',
) {
  const out = [];
  let cursor: string | null = null;
  do {
    const page = await engine.list(scope, { statuses: [status], limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function statusOf(err: unknown): number {
  if (!(err instanceof Mem01Error)) return 500;
  switch (err.code) {
    case 'invalid_input':
      return 400;
    case 'not_found':
      return 404;
    case 'version_conflict':
    case 'duplicate_active_belief':
      return 409;
    default:
      return 500;
  }
}

/** Same-origin check for a state-changing request: `Origin` must be ours, else `Sec-Fetch-Site: same-origin`. */
export function sameOrigin(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  // `Origin: null` comes from privacy-sensitive contexts; then only the browser-set Sec-Fetch-Site can vouch.
  if (origin !== undefined && origin !== 'null') return allowed.includes(origin);
  return req.headers['sec-fetch-site'] === 'same-origin';
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

function bearer(header: string | undefined): string | undefined {
  const m = header?.match(/^Bearer\s+(\S+)$/i);
  return m?.[1];
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new HttpError(415, 'expected a form post');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // Not no-referrer: Chromium then sends `Origin: null` on same-origin form posts.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

function send(res: ServerResponse, status: number, body: string, type = 'text/html; charset=utf-8'): void {
  res.writeHead(status, {
    ...securityHeaders(),
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { ...securityHeaders(), Location: location, 'Content-Length': 0 });
  res.end();
}

function unauthorized(res: ServerResponse): void {
  send(res, 401, errorPage(401, 'Unauthorized: open the URL with the token that mem01 inspect printed.'));
}
