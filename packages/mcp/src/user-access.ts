/**
 * Whose memory a server may touch. A single-user server serves exactly one scope and refuses any other user id
 * a client names; a multi-user server takes the user id per call, but only ids matching the operator's
 * `--allow-users` patterns. Every tool, resource and prompt resolves its scope here and nowhere else.
 */
import { ConfigError, InvalidInputError } from '@mem01/engine';
import { normalizeScope } from '@mem01/engine/store-kit';

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
    };

/** Resolves the user id a client named (or none) to the scope it may use, or throws `InvalidInputError`. */
export class UserAccess {
  readonly mode: 'single' | 'multi';
  readonly namespace: string;
  /** The served user (single) or the default user (multi), if any. */
  readonly defaultUserId: string | undefined;
  readonly allowUsers: readonly string[];
  readonly #patterns: readonly ((id: string) => boolean)[];

  constructor(options: UserAccessOptions) {
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
    if (options.defaultUserId !== undefined) {
      checkUserId(options.defaultUserId, 'the default user id');
      if (!this.allows(options.defaultUserId)) {
        throw new ConfigError('the default user (--user) does not match --allow-users');
      }
    }
    this.defaultUserId = options.defaultUserId;
  }

  /** Whether a multi-user server may serve this id (a single-user server: whether it is the served user). */
  allows(userId: string): boolean {
    if (this.mode === 'single') return userId === this.defaultUserId;
    return this.#patterns.some((match) => match(userId));
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
