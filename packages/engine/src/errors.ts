/**
 * Errors. One base class sets `name` from the subclass; each has a stable `code`; a driver's error is kept
 * as `cause`. Messages never contain secrets: build them with {@link sanitize} when they include foreign text.
 */

/**
 * The codes the engine's own errors carry. Each error class's code is its name in snake_case without `Error`
 * (`PendingWritesError` → `pending_writes`); a subclass (the OpenAI package's `OpenAIProviderError`) keeps its
 * parent's code. `pipeline_error` is the code of a pipeline failure raised in strict mode, which has no class.
 */
export type Mem01KnownErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'version_conflict'
  | 'duplicate_active_belief'
  | 'lease_lost'
  | 'store'
  | 'schema_too_new'
  | 'corrupt_store'
  | 'capability'
  | 'extraction'
  | 'dimension_mismatch'
  | 'budget_exceeded'
  | 'config'
  | 'closed'
  | 'run_config_reused'
  | 'provider'
  | 'pending_writes'
  | 'aborted'
  | 'unsupported_runtime'
  | 'pipeline_error'
  | 'operation_conflict'
  | 'duplicate_operation'
  | 'capture_not_authorized'
  | 'capture_grant_ended';

/**
 * A stable, machine-readable error code: one of the engine's, or one a package adds for its own errors (the CLI's
 * `usage`, say), in snake_case.
 */
export type Mem01ErrorCode = Mem01KnownErrorCode | (string & {});

export class Mem01Error extends Error {
  readonly code: Mem01ErrorCode;
  constructor(code: Mem01ErrorCode, message: string, options?: { cause?: unknown }) {
    super(sanitize(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad input: empty ids, wrong types, NaN, oversized text, unknown enum values. Nothing was written. */
export class InvalidInputError extends Mem01Error {
  /** The offending field, e.g. `scope.userId`. */
  readonly field: string;
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('invalid_input', `${field}: ${message}`, options);
    this.field = field;
  }
}

/**
 * One record of a batch (an import) is invalid: `index` (from 0) names it and `recordField` the field within it
 * (`belief.status`). Nothing of the batch was written. Code `invalid_input`, as every {@link InvalidInputError}.
 */
export class InvalidRecordError extends InvalidInputError {
  /** Position of the bad record in the batch, from 0. */
  readonly index: number;
  /** The offending field within the record, e.g. `belief.status`. */
  readonly recordField: string;
  /** What is wrong with it, without the field name. */
  readonly reason: string;
  constructor(index: number, recordField: string, reason: string, options?: { cause?: unknown }) {
    super(`records[${index}].${recordField}`, reason, options);
    this.index = index;
    this.recordField = recordField;
    this.reason = reason;
  }
}

export class NotFoundError extends Mem01Error {
  constructor(what: string, options?: { cause?: unknown }) {
    super('not_found', `${what} not found`, options);
  }
}

/** Optimistic concurrency: the record changed since it was read. Nothing was written. */
export class VersionConflictError extends Mem01Error {
  constructor(id: string, expected: number, actual: number | null, options?: { cause?: unknown }) {
    super(
      'version_conflict',
      `belief ${id}: expected version ${expected}, found ${actual === null ? 'none' : actual}`,
      options,
    );
  }
}

/** A commit would have made two active beliefs for one scope + subject + attribute. Nothing was written. */
export class DuplicateActiveBeliefError extends Mem01Error {
  constructor(subject: string, attribute: string, options?: { cause?: unknown }) {
    super('duplicate_active_belief', `an active belief already exists for ${subject}.${attribute}`, options);
  }
}

/** The outbox claim expired and was taken by another worker; the commit was refused. */
export class LeaseLostError extends Mem01Error {
  constructor(
    message = 'outbox lease lost: another worker took over these turns',
    options?: { cause?: unknown },
  ) {
    super('lease_lost', message, options);
  }
}

export class StoreError extends Mem01Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super('store', message, options);
  }
}

/** The database was written by a newer schema than this code knows. */
export class SchemaTooNewError extends Mem01Error {
  readonly found: number;
  readonly supported: number;
  constructor(where: string, found: number, supported: number) {
    super(
      'schema_too_new',
      `${where} has schema version ${found}, but this version of mem01 supports up to ${supported}; upgrade mem01`,
    );
    this.found = found;
    this.supported = supported;
  }
}

export class CorruptStoreError extends Mem01Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super('corrupt_store', message, options);
  }
}

/**
 * An operation key was used again with a different request (another action, belief, text or version). Nothing was
 * written. A retry with the same request returns the first result instead.
 */
export class OperationConflictError extends Mem01Error {
  /** The operation key. */
  readonly key: string;
  constructor(key: string, options?: { cause?: unknown }) {
    super(
      'operation_conflict',
      `operation key ${JSON.stringify(key)} was already used for a different request`,
      options,
    );
    this.key = key;
  }
}

/**
 * A store refused a write whose operation key is already recorded in the scope (a racing call with the same key won).
 * Nothing was written. The engine reads the recorded operation and replays it or raises `OperationConflictError`.
 */
export class DuplicateOperationError extends Mem01Error {
  readonly key: string;
  constructor(key: string, options?: { cause?: unknown }) {
    super('duplicate_operation', `operation key ${JSON.stringify(key)} is already recorded`, options);
    this.key = key;
  }
}

/**
 * Capture was refused: the engine requires a capture grant (`config.requireCaptureGrant`) and the user + namespace has
 * no valid one (none recorded, revoked, or expired by the engine's clock). Nothing was written.
 */
export class CaptureNotAuthorizedError extends Mem01Error {
  readonly userId: string;
  readonly namespace: string;
  constructor(scope: { readonly userId: string; readonly namespace: string }) {
    super(
      'capture_not_authorized',
      `no valid capture grant for user ${JSON.stringify(scope.userId)}${scope.namespace ? ` in namespace ${JSON.stringify(scope.namespace)}` : ''}; nothing was captured`,
    );
    this.userId = scope.userId;
    this.namespace = scope.namespace;
  }
}

/**
 * A belief captured under a capture grant that has since been revoked or has expired (by the engine's clock) cannot be
 * approved: what the grant captured is no longer authorised. Nothing was written. The message holds ids only.
 */
export class CaptureGrantEndedError extends Mem01Error {
  readonly beliefId: string;
  readonly grantId: string;
  /** How the grant ended. */
  readonly ended: 'revoked' | 'expired';
  constructor(beliefId: string, grantId: string, ended: 'revoked' | 'expired') {
    super(
      'capture_grant_ended',
      `belief ${beliefId} was captured under capture grant ${grantId}, which ${ended === 'revoked' ? 'was revoked' : 'has expired'}; it cannot be approved`,
    );
    this.beliefId = beliefId;
    this.grantId = grantId;
    this.ended = ended;
  }
}

/** An optional store capability was needed but the store does not have it. */
export class CapabilityError extends Mem01Error {
  constructor(store: string, capability: string) {
    super('capability', `store "${store}" does not support ${capability}`);
  }
}

/** Model output that does not validate. Nothing was written. */
export class ExtractionError extends Mem01Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super('extraction', message, options);
  }
}

export class DimensionMismatchError extends Mem01Error {
  constructor(expected: number, actual: number, where = 'embedding') {
    super('dimension_mismatch', `${where}: expected ${expected} dimensions, got ${actual}`);
  }
}

/** A configured budget is spent. The work stays queued. */
export class BudgetExceededError extends Mem01Error {
  /** When the budget frees up again, ISO-8601 UTC, if the extractor knows. The engine retries the turns then. */
  readonly resetAt: string | undefined;
  constructor(message: string, options?: { resetAt?: string | undefined; cause?: unknown }) {
    super('budget_exceeded', message, options);
    this.resetAt = options?.resetAt;
  }
}

/**
 * Accepted turns of a user were still unprocessed when `flush` gave up waiting: another worker's lease holds them
 * (a crashed process holds them until its lease expires), or they wait for a retry after a failure.
 */
export class PendingWritesError extends Mem01Error {
  /** How many turns were still queued or claimed. */
  readonly pending: number;
  /** When they become claimable again, if known (ISO-8601 UTC). */
  readonly until: string | null;
  constructor(message: string, options: { pending: number; until: string | null; cause?: unknown }) {
    super('pending_writes', message, options);
    this.pending = options.pending;
    this.until = options.until;
  }
}

/** The caller cancelled the operation through its `AbortSignal`. */
export class AbortedError extends Mem01Error {
  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super('aborted', message, options);
  }
}

/**
 * The JavaScript runtime lacks something a part of mem01 needs, e.g. `node:sqlite` (the SQLite store) before
 * Node.js 22.13. The message says what is needed and what works instead.
 */
export class UnsupportedRuntimeError extends Mem01Error {
  /** What is needed, e.g. `Node.js >= 22.13`. */
  readonly required: string;
  /** What this process runs, e.g. `Node.js 20.20.2`. */
  readonly found: string;
  constructor(message: string, options: { required: string; found: string; cause?: unknown }) {
    super('unsupported_runtime', message, options);
    this.required = options.required;
    this.found = options.found;
  }
}

export class ConfigError extends Mem01Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super('config', message, options);
  }
}

export class ClosedError extends Mem01Error {
  constructor(what: string) {
    super('closed', `${what} is closed`);
  }
}

export class ProviderError extends Mem01Error {
  readonly status: number | null;
  /** How long the provider asked to wait before retrying, if it said. The engine retries the turns after it. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    status: number | null,
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super('provider', message, options);
    this.status = status;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/**
 * One credential shape that {@link sanitize} masks. `pattern` is global; what it captures in the named group `keep`
 * (a header name, a URL's scheme and user, an AWS key id) stays, the rest of the match becomes `***`.
 */
export interface SecretPattern {
  /** Stable name of the shape, e.g. `github-token`. */
  readonly id: string;
  /** Where the shape comes from: gitleaks rule ids (its `config/gitleaks.toml`) or secretlint rules. */
  readonly source: string;
  readonly pattern: RegExp;
}

/** The characters of a base64 (or base64url) body, as a class body. */
const B64 = 'A-Za-z0-9+/';

/**
 * The one table of credential shapes: every message, `cause`, stack, log line, `lastError`, CLI and MCP output is
 * masked with it (through {@link sanitize}, {@link sanitizeError} and {@link describeError}). Each entry follows a
 * public, maintained rule set (gitleaks' default config, secretlint's recommended preset), loosened where masking
 * differs from detection: a token cut short by a message limit is still a secret, so lengths are minimums, not
 * exact, and no entropy or allowlist check applies. Order matters: whole blocks (PEM keys, URLs, headers) are masked
 * before the token shapes inside them, and the generic `name=value` rule comes last.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    id: 'private-key',
    source: 'gitleaks private-key; secretlint privatekey',
    // A block without its END line (cut short by a message limit) is masked to the end of its base64 body.
    pattern: new RegExp(
      `-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[${B64}=\\s\\\\:,-]*)`,
      'g',
    ),
  },
  {
    id: 'url-password',
    source: 'secretlint basicauth, database-connection-string',
    // Greedy up to the last `@` of the authority, so a password with an unencoded `@` is masked whole.
    pattern: /(?<keep>\b[a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]*:)[^\s/]*(?=@)/gi,
  },
  {
    id: 'aws-secret-access-key-pair',
    source: 'gitleaks aws-access-token; secretlint aws (AWSSecretAccessKey)',
    // A 40-character secret written right after its access key id (`AKIA…:secret`, `AKIA… secret`).
    pattern: new RegExp(
      `(?<keep>\\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\\b[\\s:,;|/"'=]{1,3})[${B64}]{40}(?![${B64}])`,
      'g',
    ),
  },
  {
    id: 'authorization-header',
    source: 'gitleaks curl-auth-header',
    // Any scheme (Basic, Bearer, Token, Digest, …): the credentials after it go.
    pattern:
      /(?<keep>\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|token|digest|negotiate|apikey|api-key)\s+)?)(?!(?:basic|bearer|token|digest|negotiate|apikey|api-key)\s|\*{3}(?:\W|$))[^\s"',;}]{3,}/gi,
  },
  {
    id: 'bearer-token',
    source: 'gitleaks curl-auth-header',
    // A word after "bearer" is a token when it has a digit or a token character, or is long: "bearer bonds" stays.
    pattern: /(?<keep>\bbearer\s+)(?=[\w.~+/=-]*[\d._~+/=-]|[\w.~+/=-]{20})[\w.~+/=-]{8,}/gi,
  },
  {
    id: 'basic-credentials',
    source: 'gitleaks curl-auth-header; secretlint basicauth',
    // base64 of `user:password`; "Basic information" has no digit, `+`, `/` or `=` and stays.
    pattern: new RegExp(`(?<keep>\\bBasic\\s+)(?=[${B64}]*[0-9+/=])[${B64}]{8,}={0,2}`, 'g'),
  },
  {
    id: 'openai-anthropic-key',
    source: 'gitleaks openai-api-key, anthropic-api-key; secretlint openai, anthropic',
    // sk-, sk-proj-, sk-svcacct-, sk-admin-, sk-ant-api03-…: any OpenAI or Anthropic key, old or new.
    pattern: /\bsk-[A-Za-z0-9_-]{8,}/g,
  },
  {
    id: 'github-token',
    source:
      'gitleaks github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{22,})/g,
  },
  {
    id: 'gitlab-token',
    source:
      'gitleaks gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-ptt, gitlab-runner-authentication-token, …',
    pattern: /\bgl(?:pat|dt|ptt|rt|cbt|ft|imt|agent|oas|soat|ffct)-[\w.-]{16,}/g,
  },
  {
    id: 'slack-token',
    source: 'gitleaks slack-bot-token, slack-user-token, slack-app-token, slack-legacy-*; secretlint slack',
    pattern: /\b(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{8,}/g,
  },
  {
    id: 'slack-webhook',
    source: 'gitleaks slack-webhook-url',
    pattern: /(?<keep>hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9+/_-]{8,}/g,
  },
  {
    id: 'google-api-key',
    source: 'gitleaks gcp-api-key; secretlint gcp',
    pattern: /\bAIza[\w-]{30,}/g,
  },
  {
    id: 'stripe-key',
    source: 'gitleaks stripe-access-token; secretlint stripe',
    // pk_ keys are publishable, but a message has no reason to carry one either.
    pattern: /\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}/g,
  },
  {
    id: 'aws-access-key-id',
    source: 'gitleaks aws-access-token; secretlint aws (AWSAccessKeyID)',
    pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b/g,
  },
  {
    id: 'jwt',
    source: 'gitleaks jwt',
    pattern: /\bey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?/g,
  },
  {
    id: 'secret-assignment',
    source: 'gitleaks generic-api-key (its secret-naming keywords); secretlint aws (AWSSecretAccessKey)',
    // `password=…`, `"client_secret": "…"`, `AWS_SECRET_ACCESS_KEY=…`, `x-api-key: …`, `access_token=…`: a name
    // ending in a secret word, then `:` or `=`. "max_tokens: 512" and "the secret is out" stay.
    pattern:
      /(?<keep>(?<![\w-])(?:(?:[\w-]*?[_-])?(?:pass|pwd)|[\w-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|auth[_-]?key|session[_-]?key))["']?\s*[:=]\s*)(?:"[^"\n]{1,300}"|'[^'\n]{1,300}'|(?!\*{3}(?:\W|$))[^\s"'`,;}&]{3,})/gi,
  },
];

/**
 * Masks every credential shape of {@link SECRET_PATTERNS} in a string with `***`: API keys and tokens (OpenAI,
 * Anthropic, AWS, GitHub, GitLab, Slack, Google, Stripe), JWTs, PEM private keys, `Authorization` headers and bearer
 * tokens, passwords in URLs and `name=value` secrets. Ordinary text, ids and ISO dates pass unchanged. Used for
 * every error message and every recorded `lastError`. Idempotent.
 */
export function sanitize(text: string): string {
  let out = text;
  for (const { pattern } of SECRET_PATTERNS) {
    out = out.replace(pattern, (...args: unknown[]) => {
      const groups = args[args.length - 1] as { keep?: string } | undefined;
      return `${typeof groups === 'object' && groups?.keep ? groups.keep : ''}***`;
    });
  }
  return out;
}

/** How deep {@link sanitizeError} follows `cause`. */
const MAX_CAUSE_DEPTH = 8;

/**
 * A copy of a thrown value that is safe to hand to callers, print with `util.inspect` or log: its message, stack
 * and every `cause` down the chain pass through {@link sanitize}, and only plain error fields are kept (no
 * request objects, headers or configs a driver may hang on its errors). A `Mem01Error` keeps its class and code.
 */
export function sanitizeError(err: unknown, depth = 0): Error {
  const cause =
    depth < MAX_CAUSE_DEPTH && err instanceof Error && err.cause !== undefined
      ? sanitizeError(err.cause, depth + 1)
      : undefined;
  let out: Error;
  if (err instanceof Mem01Error) {
    out = Object.create(Object.getPrototypeOf(err) as object) as Error;
    for (const [key, value] of Object.entries(err)) {
      if (key === 'cause') continue;
      // Own fields of mem01 errors are codes, counts, ids and times; a string among them is sanitised too.
      (out as unknown as Record<string, unknown>)[key] = typeof value === 'string' ? sanitize(value) : value;
    }
    Object.defineProperty(out, 'message', {
      value: sanitize(err.message),
      writable: true,
      configurable: true,
    });
  } else if (err instanceof Error) {
    out = new Error(sanitize(err.message));
    Object.defineProperty(out, 'name', { value: sanitize(err.name), writable: true, configurable: true });
  } else {
    out = new Error(sanitize(String(err)).slice(0, 500));
  }
  const stack = err instanceof Error && typeof err.stack === 'string' ? sanitize(err.stack) : undefined;
  Object.defineProperty(out, 'stack', { value: stack, writable: true, configurable: true });
  if (cause !== undefined)
    Object.defineProperty(out, 'cause', { value: cause, writable: true, configurable: true });
  return out;
}

/** A short, secret-free description of any thrown value, for `lastError` and logs. */
export function describeError(err: unknown): string {
  if (err instanceof Mem01Error) return `${err.name} [${err.code}]: ${sanitize(err.message)}`;
  if (err instanceof Error) return `${sanitize(err.name)}: ${sanitize(err.message)}`.slice(0, 500);
  return sanitize(String(err)).slice(0, 500);
}
