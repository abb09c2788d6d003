/**
 * Bearer tokens of the HTTP server: the server token (every user the server's policy allows) and per-user tokens
 * (each names the users it may serve). Tokens are compared in constant time and never appear in an error or a log.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '@mem01/engine';
import { parseAllowUsers } from './user-access.js';

/** A bearer token and, for a per-user token, the users it may serve. */
export interface TokenGrant {
  /** The secret (at least 16 characters, no whitespace). */
  readonly token: string;
  /**
   * Glob patterns (as `--allow-users`) of the users this token may serve; a request naming another user is
   * refused with 403. Absent: every user the server's own policy allows (the server token).
   */
  readonly users?: readonly string[] | undefined;
}

/** The shortest token accepted. */
export const MIN_TOKEN_CHARS = 16;

/**
 * Parses per-user token specs, one per line: `TOKEN:user1,user2` (users are globs, as `--allow-users`). Blank
 * lines and lines starting with `#` are skipped. Errors name the line, never the token.
 */
export function parseTokenSpecs(text: string, source = 'token file'): TokenGrant[] {
  const grants: TokenGrant[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source}, line ${index + 1}`;
    const colon = line.indexOf(':');
    if (colon < 0) throw new ConfigError(`${where}: expected the token, a colon and the users it serves`);
    const token = line.slice(0, colon).trim();
    const users = parseAllowUsers([line.slice(colon + 1)]);
    if (users.length === 0) throw new ConfigError(`${where}: the token names no user`);
    checkToken(token, where);
    grants.push({ token, users });
  });
  if (grants.length === 0) throw new ConfigError(`${source} holds no token`);
  return grants;
}

function checkToken(token: string, where: string): void {
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) {
    throw new ConfigError(
      `${where}: a bearer token must be at least ${MIN_TOKEN_CHARS} characters without spaces`,
    );
  }
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The tokens a server accepts. */
export class TokenTable {
  readonly grants: readonly TokenGrant[];
  readonly #digests: readonly Buffer[];

  /** Throws `ConfigError` for a short token, one with whitespace, or the same token twice. */
  constructor(grants: readonly TokenGrant[]) {
    if (grants.length === 0) throw new ConfigError('the HTTP server needs at least one bearer token');
    grants.forEach((g, i) => {
      checkToken(g.token, `token ${i + 1}`);
    });
    this.grants = grants;
    this.#digests = grants.map((g) => digest(g.token));
    if (new Set(this.#digests.map((d) => d.toString('hex'))).size !== grants.length) {
      throw new ConfigError('the same bearer token is given twice');
    }
  }

  /**
   * The index of the grant `candidate` is, or `undefined`. Every token is compared, each as a fixed-length
   * digest with `timingSafeEqual`, so the time taken says nothing about which token, or how much of one, matched.
   */
  match(candidate: string): number | undefined {
    const probe = digest(candidate);
    let found: number | undefined;
    this.#digests.forEach((d, i) => {
      if (timingSafeEqual(d, probe)) found = i;
    });
    return found;
  }
}

/** The bearer token of an `Authorization` header (`Bearer <token>`, scheme case-insensitive), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = header?.match(/^Bearer +(\S+) *$/i);
  return m?.[1];
}

const USER_URI = /^mem01:\/\/users\/([^/]+)\//;

/**
 * The user ids a JSON-RPC message (or batch) names: `userId` of `tools/call` and `prompts/get` arguments, and the
 * user of a `mem01://users/{userId}/…` resource read. Ids the client did not name (the default user) are not
 * listed; the server's own policy resolves them.
 */
export function namedUsers(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const users: string[] = [];
  for (const message of messages) {
    if (message === null || typeof message !== 'object') continue;
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (params === null || typeof params !== 'object') continue;
    if (method === 'tools/call' || method === 'prompts/get') {
      const args = (params as { arguments?: unknown }).arguments;
      const userId =
        args !== null && typeof args === 'object' ? (args as { userId?: unknown }).userId : undefined;
      if (typeof userId === 'string') users.push(userId);
    } else if (method === 'resources/read') {
      const uri = (params as { uri?: unknown }).uri;
      const encoded = typeof uri === 'string' ? uri.match(USER_URI)?.[1] : undefined;
      if (encoded !== undefined) users.push(safeDecode(encoded));
    }
  }
  return users;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    // Undecodable: kept as sent, so it matches no grant unless a glob admits it literally; the resource then refuses it.
    return value;
  }
}
