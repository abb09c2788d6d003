/**
 * The Streamable HTTP transport: one `StreamableHTTPServerTransport` (the MCP SDK's) per client session, behind a
 * front door that decides before reading a byte of the body: the path, the `Host` header (DNS rebinding), the
 * `Origin` header (browser pages), the bearer token (constant time, per-user tokens), and only then the body,
 * within a size limit. Every refusal is a generic JSON-RPC error with an error id; the detail is logged under it.
 * Binds 127.0.0.1 unless told otherwise.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, type MemoryEngine } from '@mem01/engine';
import { describeError } from '@mem01/engine/binding-kit';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  canonicalOrigin,
  DEFAULT_MAX_BODY_BYTES,
  genericErrorsFrom,
  hostName,
  isLoopbackHost,
  originPolicy,
  quote,
  type Refusal,
  readJsonBody,
  refuse,
} from './http-guard.js';
import { bearerToken, namedUsers, type TokenGrant, TokenTable } from './http-tokens.js';
import { createMemoryServer } from './server.js';
import { UserAccess, type UserAccessOptions } from './user-access.js';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  readonly engine: MemoryEngine;
  readonly access: UserAccess | UserAccessOptions;
  /** Interface to bind. Default `127.0.0.1`. */
  readonly host?: string | undefined;
  /** Port. Default 0: a free port. */
  readonly port?: number | undefined;
  /**
   * The server token (at least 16 characters): it serves every user `access` allows. Default: 32 random bytes,
   * base64url, unless `tokens` is given, in which case there is no server token.
   */
  readonly token?: string | undefined;
  /** Per-user tokens: each serves only the users it names (and `access` allows). */
  readonly tokens?: readonly TokenGrant[] | undefined;
  /**
   * Host names (without port) the `Host` header may carry. Default: `localhost`, `127.0.0.1` and `[::1]`, plus
   * `host` when it is neither a loopback nor a wildcard address.
   */
  readonly allowedHosts?: readonly string[] | undefined;
  /**
   * Origins (`https://app.example`) a browser page may call from, besides the loopback origins
   * (`http(s)://localhost|127.0.0.1|[::1]` on any port), which are always allowed. A request without `Origin`
   * (a non-browser client) is allowed; `null` and any other origin get 403.
   */
  readonly allowedOrigins?: readonly string[] | undefined;
  /** Largest request body in bytes; a larger one gets 413 without being read. Default 1 MiB. */
  readonly maxBodyBytes?: number | undefined;
  /** Open client sessions kept at once; past it the least recently used one is closed. Default 100. */
  readonly maxSessions?: number | undefined;
  /** Where refusals (with their error id) and unexpected failures are logged. Default stderr. Never secrets. */
  readonly log?: ((line: string) => void) | undefined;
}

/** A running HTTP server. */
export interface HttpServer {
  /** `http://HOST:PORT/mcp` */
  readonly url: string;
  readonly port: number;
  /** The server token; `undefined` when only per-user tokens were given. */
  readonly token: string | undefined;
  /** The token was generated (and must be shown to the user once). */
  readonly tokenGenerated: boolean;
  /** Closes every session and the listener. The engine stays open. */
  close(): Promise<void>;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  /** The token grant that opened it: every later request of the session must carry the same token. */
  readonly grant: number;
  lastUsed: number;
}

/** Starts the Streamable HTTP server at `/mcp`. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const host = options.host ?? '127.0.0.1';
  const tokenGenerated = options.token === undefined && !options.tokens?.length;
  const token = options.token ?? (tokenGenerated ? randomBytes(32).toString('base64url') : undefined);
  const tokens = new TokenTable([...(token === undefined ? [] : [{ token }]), ...(options.tokens ?? [])]);
  const maxSessions = options.maxSessions ?? 100;
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new ConfigError('maxSessions must be >= 1');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw new ConfigError('maxBodyBytes must be >= 1');
  const originAllowed = originPolicy(
    (options.allowedOrigins ?? []).map((o) => {
      try {
        return canonicalOrigin(o);
      } catch {
        throw new ConfigError(`allowed origin ${JSON.stringify(o)} is not an http(s) origin`);
      }
    }),
  );
  const access = options.access instanceof UserAccess ? options.access : new UserAccess(options.access);
  // Each grant's policy, resolved once: a per-user token's sessions can reach only the users it names.
  const accessOf = tokens.grants.map((g) => (g.users ? access.narrow(g.users) : access));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const bracketed = host.includes(':') ? `[${host}]` : host;
  const wildcard = host === '0.0.0.0' || host === '::';
  const allowedHosts = new Set(
    [
      ...LOOPBACK,
      ...(wildcard || isLoopbackHost(bracketed) ? [] : [bracketed]),
      ...(options.allowedHosts ?? []),
    ].map((h) => h.toLowerCase()),
  );

  const sessions = new Map<string, Session>();
  let closing = false;

  const evictIdlest = async () => {
    let oldest: [string, Session] | undefined;
    for (const entry of sessions) if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    if (!oldest) return;
    sessions.delete(oldest[0]);
    await oldest[1].server.close().catch(() => undefined);
  };

  /** The front door: a refusal, or the grant the request is authenticated as. Reads no body. */
  const admit = (req: IncomingMessage): Refusal | number => {
    // The path only: a query string is the client's and may hold anything, a mistakenly sent secret included.
    const path = (req.url ?? '').split('?')[0];
    const what = `${req.method ?? '?'} ${quote(path)}`;
    if (closing) return { status: 503, code: -32000, message: 'server is shutting down', detail: what };
    if (path !== '/mcp')
      return { status: 404, code: -32000, message: 'not found', detail: `${what}: no such path` };
    const name = hostName(req.headers.host);
    if (name === undefined || !allowedHosts.has(name)) {
      return {
        status: 403,
        code: -32000,
        message: 'forbidden',
        detail: `${what}: Host ${quote(req.headers.host)} not allowed`,
      };
    }
    const origin = req.headers.origin;
    if (!originAllowed(origin)) {
      return {
        status: 403,
        code: -32000,
        message: 'forbidden',
        detail: `${what}: Origin ${quote(origin)} not allowed`,
      };
    }
    const candidate = bearerToken(req.headers.authorization);
    const grant = candidate === undefined ? undefined : tokens.match(candidate);
    if (grant === undefined) {
      return {
        status: 401,
        code: -32000,
        message: 'unauthorized',
        detail: `${what}: ${candidate === undefined ? 'no bearer token' : 'unknown bearer token'}`,
        headers: { 'www-authenticate': 'Bearer' },
      };
    }
    return grant;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const admitted = admit(req);
    if (typeof admitted !== 'number') return refuse(res, admitted, log);
    const grant = admitted;
    const what = `${req.method ?? '?'} /mcp`;
    const sid = req.headers['mcp-session-id'];
    const session = typeof sid === 'string' ? sessions.get(sid) : undefined;
    // A session opened with another token is reported exactly as an unknown one: ids are not probed.
    if (typeof sid === 'string' && (!session || session.grant !== grant)) {
      return refuse(
        res,
        {
          status: 404,
          code: -32001,
          message: 'session not found',
          detail: `${what}: ${session ? 'session of another token' : 'unknown session'}`,
        },
        log,
      );
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJsonBody(req, res, maxBodyBytes);
      if (!read.ok) return refuse(res, { ...read.refusal, detail: `${what}: ${read.refusal.detail}` }, log);
      body = read.value;
      const served = accessOf[grant];
      if (served && tokens.grants[grant]?.users) {
        const refused = namedUsers(body).filter((u) => !served.allows(u)).length;
        if (refused > 0) {
          return refuse(
            res,
            {
              status: 403,
              code: -32000,
              message: 'forbidden',
              detail: `${what}: token ${grant + 1} names ${refused} user id(s) it may not serve`,
            },
            log,
          );
        }
      }
    }
    if (!session && (req.method !== 'POST' || !isInitializeRequest(body))) {
      return refuse(
        res,
        {
          status: 400,
          code: -32000,
          message: 'bad request: no valid mcp-session-id, and not an initialize request',
          detail: `${what}: no session, not initialize`,
        },
        log,
      );
    }
    genericErrorsFrom(res, log);
    if (session) {
      session.lastUsed = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (sessions.size >= maxSessions) await evictIdlest();
    const server = createMemoryServer({
      engine: options.engine,
      access: accessOf[grant] ?? access,
      log,
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, grant, lastUsed: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      refuse(
        res,
        {
          status: 500,
          code: -32603,
          message: 'internal error',
          detail: `request failed: ${describeError(err)}`,
        },
        log,
      );
    });
  };
  const listener: Server = createServer(serve);
  // Without this listener Node answers "Expect: 100-continue" itself, inviting the body before any check.
  listener.on('checkContinue', serve);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? 0, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const port = (listener.address() as AddressInfo).port;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${bracketed}:${port}/mcp`,
    port,
    token,
    tokenGenerated,
    close() {
      closed ??= (async () => {
        closing = true;
        const open = [...sessions.values()];
        sessions.clear();
        await Promise.all(open.map((s) => s.server.close().catch(() => undefined)));
        await new Promise<void>((resolve) => {
          listener.close(() => resolve());
          listener.closeAllConnections();
        });
      })();
      return closed;
    },
  };
}
