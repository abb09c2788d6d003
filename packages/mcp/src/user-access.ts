/**
 * Whose memory a server may touch. A single-user server serves exactly one scope and refuses any other user id
 * a client names; a multi-user server takes the user id per call, but only ids matching the operator's
 * `--allow-users` patterns, narrowed further by the users a per-user token names. Every tool, resource and
 * prompt resolves its scope here and nowhere else.
 */
import { ConfigError, InvalidInputError } from '@mem01/engine';
import { normalizeScope } from '@mem01/engine/binding-kit';

/** A scope in canonical form. */
export interface ServedScope {
  readonly userId: string;
  readonly namespace: string;
}

/** How a server decides whose memory a request may use. */
export type UserAccessOptions =
  | {
      readonly mode: 'single';
      /** The one user this server serves. */
      readonly userId: string;
      readonly namespace?: string | undefined;
      /** The users a per-user token names: the served user must match one of these globs. */
      readonly grantedUsers?: readonly string[] | undefined;
    }
  | {
      readonly mode: 'multi';
      /**
       * Glob patterns (`*` any run of characters, `?` one character, everything else literal) a user id must
       * match in full. `*` alone allows every user.
       */
      readonly allowUsers: readonly string[];
      /** Used when a call names no user. Without it, every call must name one. It must match `allowUsers`. */
      readonly defaultUserId?: string | undefined;
      readonly namespace?: string | undefined;
      /**
       * The users a per-user token names (same glob syntax): an id must match `allowUsers` and one of these.
       * The default user is kept only when it matches them too.
       */
      readonly grantedUsers?: readonly string[] | undefined;
    };

/** Resolves the user id a client named (or none) to the scope it may use, or throws `InvalidInputError`. */
export class UserAccess {
  readonly mode: 'single' | 'multi';
  readonly namespace: string;
  /** The served user (single) or the default user (multi), if any. */
  readonly defaultUserId: string | undefined;
  readonly allowUsers: readonly string[];
  /** The globs of a per-user token this policy is narrowed to, if any. */
  readonly grantedUsers: readonly string[] | undefined;
  readonly #patterns: readonly ((id: string) => boolean)[];
  readonly #granted: readonly ((id: string) => boolean)[] | undefined;
  readonly #options: UserAccessOptions;

  constructor(options: UserAccessOptions) {
    this.#options = options;
    const granted = options.grantedUsers?.map((p) => p.trim()).filter((p) => p !== '');
    if (granted !== undefined && granted.length === 0) {
      throw new ConfigError('a per-user token must name at least one user');
    }
    this.grantedUsers = granted;
    this.#granted = granted?.map(globMatcher);
    const ns = options.namespace?.trim() ? options.namespace : '';
    try {
      if (ns) normalizeScope({ userId: 'x', namespace: ns });
    } catch (err) {
      throw new ConfigError(`namespace is invalid: ${(err as Error).message}`);
    }
    this.namespace = ns;
    this.mode = options.mode;
    if (options.mode === 'single') {
      checkUserId(options.userId, 'the served user id');
      if (this.#granted && !this.#granted.some((match) => match(options.userId))) {
        throw new ConfigError('a per-user token does not name the served user (--user)');
      }
      this.defaultUserId = options.userId;
      this.allowUsers = [];
      this.#patterns = [];
      return;
    }
    const patterns = options.allowUsers.map((p) => p.trim()).filter((p) => p !== '');
    if (patterns.length === 0) {
      throw new ConfigError(
        '--multi-user needs --allow-users <patterns> (comma-separated globs such as "team-*", or "*" for every user)',
      );
    }
    this.allowUsers = patterns;
    this.#patterns = patterns.map(globMatcher);
    const fallback = options.defaultUserId;
    if (fallback !== undefined) {
      checkUserId(fallback, 'the default user id');
      if (!this.#patterns.some((match) => match(fallback))) {
        throw new ConfigError('the default user (--user) does not match --allow-users');
      }
    }
    // A client whose token does not name the default user must name its user on every call.
    this.defaultUserId = fallback !== undefined && this.allows(fallback) ? fallback : undefined;
  }

  /** Whether a multi-user server may serve this id (a single-user server: whether it is the served user). */
  allows(userId: string): boolean {
    if (this.mode === 'single') return userId === this.defaultUserId;
    return (
      this.#patterns.some((match) => match(userId)) &&
      (this.#granted === undefined || this.#granted.some((match) => match(userId)))
    );
  }

  /**
   * This policy narrowed to the users a per-user token names (globs, as `allowUsers`): an id is served only when
   * both allow it (an earlier grant is replaced, not combined). Throws `ConfigError` when a single-user server's
   * user is not among them: such a token could serve no one.
   */
  narrow(grantedUsers: readonly string[]): UserAccess {
    return new UserAccess({ ...this.#options, grantedUsers });
  }

  /**
   * The scope a request may use. `userId` is what the client named, if anything. Refusals name no other user
   * and say nothing about whether the named user has any memory.
   */
  resolve(userId: string | undefined): ServedScope {
    if (this.mode === 'single') {
      if (userId !== undefined && userId !== this.defaultUserId) {
        throw new InvalidInputError(
          'userId',
          'this server serves one user only; leave userId out (other users are not reachable here)',
        );
      }
      return normalizeScope({ userId: this.defaultUserId, namespace: this.namespace });
    }
    const id = userId ?? this.defaultUserId;
    if (id === undefined) throw new InvalidInputError('userId', 'is required on this multi-user server');
    // Checked before matching: a pattern must never admit an id the stores would refuse or read differently.
    const scope = normalizeScope({ userId: id, namespace: this.namespace });
    if (!this.allows(id)) throw new InvalidInputError('userId', 'is not allowed on this server');
    return scope;
  }
}

function checkUserId(userId: unknown, what: string): asserts userId is string {
  try {
    normalizeScope({ userId });
  } catch (err) {
    throw new ConfigError(`${what} is invalid: ${(err as Error).message}`);
  }
}

/**
 * A glob matcher: `*` any run of characters, `?` one character, everything else literal, matched against the
 * whole id by code points. Greedy two-pointer matching, O(pattern × id) at worst: a client's id can never make
 * an operator's pattern backtrack exponentially, as a regular expression could.
 */
export function globMatcher(glob: string): (id: string) => boolean {
  const pattern = [...glob];
  return (id) => {
    const text = [...id];
    let p = 0;
    let t = 0;
    let star = -1;
    let mark = 0;
    while (t < text.length) {
      if (pattern[p] === '*') {
        star = p++;
        mark = t;
      } else if (p < pattern.length && (pattern[p] === '?' || pattern[p] === text[t])) {
        p++;
        t++;
      } else if (star !== -1) {
        p = star + 1;
        t = ++mark;
      } else {
        return false;
      }
    }
    while (pattern[p] === '*') p++;
    return p === pattern.length;
  };
}

/** Splits `--allow-users` values: comma-separated, repeatable. */
export function parseAllowUsers(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
}
