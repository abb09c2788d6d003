/**
 * The Streamable HTTP transport, built from the MCP SDK's own parts: `createMcpExpressApp` (Host header checked
 * against DNS rebinding), `requireBearerAuth` (401 without the token) and one `StreamableHTTPServerTransport` per
 * client session. Binds 127.0.0.1 unless told otherwise.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, type MemoryEngine } from '@mem01/engine';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import { StatementKeys } from './remember-keys.js';
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
  /** The bearer token clients must send (at least 16 characters). Default: 32 random bytes, base64url. */
  readonly token?: string | undefined;
  /**
   * Host names (without port) the `Host` header may carry. Default: `localhost`, `127.0.0.1` and `[::1]`, plus
   * `host` when it is neither a loopback nor a wildcard address.
   */
  readonly allowedHosts?: readonly string[] | undefined;
  /** Open client sessions kept at once; past it the least recently used one is closed. Default 100. */
  readonly maxSessions?: number | undefined;
  /** Where unexpected failures are logged. Default stderr. */
  readonly log?: ((line: string) => void) | undefined;
}

/** A running HTTP server. */
export interface HttpServer {
  /** `http://HOST:PORT/mcp` */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The token was generated (and must be shown to the user once). */
  readonly tokenGenerated: boolean;
  /** Closes every session and the listener. The engine stays open. */
  close(): Promise<void>;
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
const MIN_TOKEN_CHARS = 16;

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  lastUsed: number;
}

/** Starts the Streamable HTTP server at `/mcp`. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const host = options.host ?? '127.0.0.1';
  const tokenGenerated = options.token === undefined;
  const token = options.token ?? randomBytes(32).toString('base64url');
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) {
    throw new ConfigError(`the bearer token must be at least ${MIN_TOKEN_CHARS} characters without spaces`);
  }
  const maxSessions = options.maxSessions ?? 100;
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new ConfigError('maxSessions must be >= 1');
  const access = options.access instanceof UserAccess ? options.access : new UserAccess(options.access);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const bracketed = host.includes(':') ? `[${host}]` : host;
  const wildcard = host === '0.0.0.0' || host === '::';
  const allowedHosts = [
    ...new Set([
      ...LOOPBACK,
      ...(wildcard || LOOPBACK.includes(bracketed) ? [] : [bracketed]),
      ...(options.allowedHosts ?? []),
    ]),
  ];

  const tokenBuf = Buffer.from(token);
  const auth = requireBearerAuth({
    verifier: {
      async verifyAccessToken(candidate) {
        const buf = Buffer.from(candidate);
        if (buf.length !== tokenBuf.length || !timingSafeEqual(buf, tokenBuf)) {
          throw new InvalidTokenError('invalid bearer token');
        }
        // A static token does not expire; the SDK's middleware wants an expiry, so it gets one far away.
        return { token: candidate, clientId: 'mem01-mcp', scopes: [], expiresAt: 4_102_444_800 };
      },
    },
  });

  const keys = new StatementKeys();
  const sessions = new Map<string, Session>();
  let closing = false;

  const evictIdlest = async () => {
    let oldest: [string, Session] | undefined;
    for (const entry of sessions) if (!oldest || entry[1].lastUsed < oldest[1].lastUsed) oldest = entry;
    if (!oldest) return;
    sessions.delete(oldest[0]);
    await oldest[1].server.close().catch(() => undefined);
  };

  const jsonError = (res: Response, status: number, code: number, message: string) => {
    res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
  };

  const handle = async (req: Request, res: Response): Promise<void> => {
    if (closing) return jsonError(res, 503, -32000, 'server is shutting down');
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      if (!session) return jsonError(res, 404, -32001, 'session not found');
      session.lastUsed = Date.now();
      return session.transport.handleRequest(req, res, req.body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      return jsonError(
        res,
        400,
        -32000,
        'bad request: no valid mcp-session-id, and not an initialize request',
      );
    }
    if (sessions.size >= maxSessions) await evictIdlest();
    const server = createMemoryServer({ engine: options.engine, access, keys, log });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastUsed: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  const app = createMcpExpressApp({ host, allowedHosts });
  app.all('/mcp', auth, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`mem01-mcp: HTTP request failed: ${err instanceof Error ? err.name : 'error'}`);
      if (!res.headersSent) jsonError(res, 500, -32603, 'internal error');
      else res.end();
    });
  });

  const listener: Server = await new Promise((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once('error', reject);
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
