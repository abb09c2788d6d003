import { Mem01Error, StoreError } from '@mem01/engine';

/** SQLSTATE codes after which the statement did not run to completion and the session may be gone. */
const CONNECTION_CODES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
/** SQLSTATE codes after which the whole transaction was rolled back and may simply be run again. */
const RETRY_CODES = new Set(['40001', '40P01']);

interface DriverError {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly constraint?: unknown;
  readonly detail?: unknown;
}

function asDriverError(err: unknown): DriverError {
  return err !== null && typeof err === 'object' ? (err as DriverError) : {};
}

export function sqlState(err: unknown): string | undefined {
  const code = asDriverError(err).code;
  return typeof code === 'string' ? code : undefined;
}

export function constraintOf(err: unknown): string | undefined {
  const c = asDriverError(err).constraint;
  return typeof c === 'string' ? c : undefined;
}

export function detailOf(err: unknown): string {
  const d = asDriverError(err).detail;
  return typeof d === 'string' ? d : '';
}

function messageOf(err: unknown): string {
  const m = asDriverError(err).message;
  return typeof m === 'string' ? m : String(err);
}

/** The connection broke (backend terminated, socket reset, server shut down). */
export function isConnectionLoss(err: unknown): boolean {
  if (err instanceof Mem01Error) return false;
  const code = sqlState(err);
  if (code !== undefined && CONNECTION_CODES.has(code)) return true;
  // "has been discarded": kysely's refusal to use a connection whose rollback failed, which a lost connection causes.
  return /Connection terminated|ECONNRESET|ECONNREFUSED|EPIPE|connection error|terminating connection|Client was closed|not queryable|has been discarded/i.test(
    messageOf(err),
  );
}

/** Serialization failure or deadlock: the transaction was rolled back and can be retried as is. */
export function isRetryableConflict(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && RETRY_CODES.has(code);
}

/**
 * The server could not be reached or is not ready yet: worth retrying an open (connection refused, terminated,
 * "the database system is starting up" 57P03, too many connections 53300). Looks through a mem01 error's cause.
 */
export function isTransientOpenFailure(err: unknown): boolean {
  const inner = err instanceof Mem01Error && err.cause !== undefined ? err.cause : err;
  if (inner instanceof Mem01Error) return false;
  const code = sqlState(inner);
  return code === '53300' || isConnectionLoss(inner) || isPoolTimeout(inner);
}

export function isPoolTimeout(err: unknown): boolean {
  return /timeout exceeded when trying to connect/i.test(messageOf(err));
}

/** Turns a driver error into a typed mem01 error with a clear message; mem01 errors pass through. */
export function toStoreError(
  err: unknown,
  operation: string,
  limits: { statementTimeoutMs: number | null; connectionTimeoutMs: number | null },
): Error {
  if (err instanceof Mem01Error) return err;
  const code = sqlState(err);
  if (code === '57014') {
    const ms = limits.statementTimeoutMs === null ? '' : ` of ${limits.statementTimeoutMs} ms`;
    return new StoreError(`postgres: ${operation} was cancelled by the statement timeout${ms}`, {
      cause: err,
    });
  }
  if (isPoolTimeout(err)) {
    const ms = limits.connectionTimeoutMs === null ? '' : ` within ${limits.connectionTimeoutMs} ms`;
    return new StoreError(
      `postgres: ${operation}: no connection available from the pool${ms} (pool exhausted or server unreachable)`,
      { cause: err },
    );
  }
  if (isConnectionLoss(err)) {
    return new StoreError(`postgres: ${operation}: the database connection was lost (${messageOf(err)})`, {
      cause: err,
    });
  }
  const suffix = code === undefined ? '' : ` [${code}]`;
  return new StoreError(`postgres: ${operation} failed${suffix}: ${messageOf(err)}`, { cause: err });
}

/**
 * The error of a failed migration. `first` is the error that started the failure when later ones followed it (the
 * rollback, then the release of the Migrator's lock, fail on a dead connection): the typed error describes and
 * carries (`cause`) that first error, and its message names the later one. Mem01 errors pass through.
 */
export function migrationError(
  err: unknown,
  first: { readonly error: unknown } | null,
  limits: { statementTimeoutMs: number | null; connectionTimeoutMs: number | null },
): Error {
  if (err instanceof Mem01Error || first === null || first.error === err) {
    return toStoreError(err, 'migrate', limits);
  }
  const original = toStoreError(first.error, 'migrate', limits);
  if (!(original instanceof StoreError) || original.cause !== first.error) return original;
  return new StoreError(`${original.message}; cleaning up after it failed too (${messageOf(err)})`, {
    cause: first.error,
  });
}
