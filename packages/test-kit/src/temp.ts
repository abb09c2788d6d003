/** Temporary folders for tests: each is removed by `remove()`, and in any case when the process exits. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  readonly path: string;
  /** Removes the folder and everything in it. Idempotent. */
  remove(): void;
}

const live = new Set<string>();
let hooked = false;

/** A fresh folder under the system's temporary folder, its name starting with `prefix`. */
export function tempDir(prefix = 'mem01-test-'): TempDir {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const path of live) rmSync(path, { recursive: true, force: true });
    });
  }
  const path = mkdtempSync(join(tmpdir(), prefix));
  live.add(path);
  return {
    path,
    remove() {
      live.delete(path);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
