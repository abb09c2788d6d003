/** What every tool, resource and prompt of one server shares: the engine and the user policy. */
import type { MemoryEngine } from '@mem01/engine';
import type { ServedScope, UserAccess } from './user-access.js';

export interface ServerContext {
  readonly engine: MemoryEngine;
  readonly access: UserAccess;
  /** Name of the extractor, for hints when nothing was extracted. */
  readonly extractorName: string;
  /** Where unexpected failures are logged (stderr for the bin; never the client). */
  readonly log: (line: string) => void;
  /** The scope a call may use (see {@link UserAccess.resolve}); throws `InvalidInputError` when refused. */
  scope(userId: string | undefined): ServedScope;
}

export function createServerContext(options: {
  readonly engine: MemoryEngine;
  readonly access: UserAccess;
  readonly log?: ((line: string) => void) | undefined;
}): ServerContext {
  const { engine, access } = options;
  const touched = new Set<string>();
  return {
    engine,
    access,
    extractorName: engine.extractor.name,
    log: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
    scope(userId) {
      const scope = access.resolve(userId);
      // Turns of this user left queued by a stopped process are picked up the first time the user is served
      // (a flush drains them); a failure there is the engine's `lastError`, not this call's.
      if (!touched.has(scope.userId) && !engine.isClosed) {
        touched.add(scope.userId);
        engine.flush(scope).catch(() => undefined);
      }
      return scope;
    },
  };
}
