/** CLI errors and exit codes. */
import { Mem01Error } from '@mem01/engine';
import { sanitize } from '@mem01/engine/binding-kit';

/** Process exit codes of `mem01`. */
export const EXIT = { ok: 0, runtime: 1, usage: 2 } as const;

/** Wrong or missing arguments: exit code 2. Code `usage`. */
export class UsageError extends Mem01Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, options);
  }
}

/**
 * A runtime failure of the CLI itself (a bad export file, a refused operation): exit code 1. Its code names the
 * failure (`not_found`, `missing_dependency`, `dimension_mismatch`, ...).
 */
export class CliError extends Mem01Error {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** One line for stderr, never with secrets, and the exit code the error maps to. */
export function describeForCli(err: unknown): { line: string; exitCode: number } {
  if (err instanceof UsageError)
    return { line: `error [usage]: ${oneLine(sanitize(err.message))}`, exitCode: EXIT.usage };
  if (err instanceof CliError)
    return { line: `error [${err.code}]: ${oneLine(sanitize(err.message))}`, exitCode: EXIT.runtime };
  if (err instanceof Mem01Error) {
    return {
      line: `error [${err.code}]: ${oneLine(sanitize(err.message))}`,
      exitCode: err.code === 'invalid_input' ? EXIT.usage : EXIT.runtime,
    };
  }
  // Not one of ours (a driver's, say): still one line with a code, so scripts can match every error the same way.
  if (err instanceof Error)
    return { line: `error [unexpected]: ${oneLine(sanitize(err.message))}`, exitCode: EXIT.runtime };
  return { line: `error [unexpected]: ${oneLine(sanitize(String(err)))}`, exitCode: EXIT.runtime };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
