/** SQLite driver errors as the engine's typed errors. */
import { CorruptStoreError, Mem01Error, StoreError } from '@mem01/engine';

interface SqliteErrorLike {
  errcode?: number;
  errstr?: string;
  message?: string;
}

export function sqliteCode(err: unknown): number | null {
  const code = (err as SqliteErrorLike | null)?.errcode;
  return typeof code === 'number' ? code : null;
}

/** Maps a driver error to the engine's typed errors, keeping it as `cause`. */
export function mapDriverError(err: unknown, path: string, action: string): Error {
  if (err instanceof Mem01Error) return err;
  const code = sqliteCode(err);
  const primary = code === null ? null : code & 0xff;
  const detail = err instanceof Error ? err.message : String(err);
  if (primary === 11 || primary === 26) {
    return new CorruptStoreError(`${path} is corrupt or not a SQLite database (${detail})`, {
      cause: err,
    });
  }
  if (primary === 5 || primary === 6) {
    return new StoreError(`${path}: ${action} timed out waiting for the database lock (${detail})`, {
      cause: err,
    });
  }
  if (primary === 8 || primary === 14 || primary === 3) {
    return new StoreError(
      `${path}: ${action} failed: the database or its folder is not writable (${detail})`,
      {
        cause: err,
      },
    );
  }
  if (primary === 13)
    return new StoreError(`${path}: ${action} failed: disk full (${detail})`, { cause: err });
  return new StoreError(`${path}: ${action} failed: ${detail}`, { cause: err });
}
