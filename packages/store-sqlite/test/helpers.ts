import { readFileSync } from 'node:fs';
import { type Belief, createBelief, type Scope } from '@mem01/engine';
import { tempDir as newTempDir, quiet, type TempDir } from '@mem01/test-kit';
import { afterEach } from 'vitest';

export { quiet };

const dirs: TempDir[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** A fresh temporary folder, removed after the test. */
export function tempDir(): string {
  const d = newTempDir('mem01-sqlite-');
  dirs.push(d);
  return d.path;
}

export function t(n: number): string {
  return new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
}

export function belief(scope: Scope, over: Partial<Parameters<typeof createBelief>[0]> = {}): Belief {
  return createBelief({
    scope,
    kind: 'fact',
    subject: 'user',
    attribute: 'home_city',
    value: 'Lisbon',
    statement: 'The user lives in Lisbon.',
    confidence: 0.9,
    source: 'extracted',
    at: t(1),
    ...over,
  });
}

/** The bytes of the database file and its WAL (if any), concatenated. */
export function fileBytes(path: string): Buffer {
  const parts = [readFileSync(path)];
  for (const suffix of ['-wal']) {
    try {
      parts.push(readFileSync(path + suffix));
    } catch {
      // no WAL
    }
  }
  return Buffer.concat(parts);
}

/** A small seeded PRNG (mulberry32): the same numbers on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
