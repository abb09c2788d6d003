/** Child processes run Node on `dist`: tests that spawn them build what is missing or stale first. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { nodeBinary } from './node.js';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Builds each package folder (with its `tsconfig.build.json`) whose `dist/index.js` is missing or older than a file
 * of its `src`, in the order given (dependencies first).
 */
export function ensureBuilt(packageDirs: readonly string[]): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  for (const dir of packageDirs) {
    const dist = join(dir, 'dist', 'index.js');
    if (!existsSync(dist) || statSync(dist).mtimeMs < newestMtime(join(dir, 'src'))) {
      execFileSync(nodeBinary(), [tsc, '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'pipe' });
    }
  }
}
