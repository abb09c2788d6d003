#!/usr/bin/env node
// `pnpm test`: every package's tests through turbo (each builds what it needs first), then one closing line with
// the totals of every vitest run, e.g. "mem01: 812 passed, 0 failed, 3 skipped". Each package's vitest writes its
// counts to .vitest/results.json (vitest.shared.ts); stale ones are removed first so a package whose tests did not
// run cannot be counted. The exit code is turbo's.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
// A package counts when it has a `test` script (store-conformance holds a suite other packages run, and no tests of
// its own).
function hasTestScript(dir) {
  const file = join(dir, 'package.json');
  return existsSync(file) && typeof JSON.parse(readFileSync(file, 'utf8')).scripts?.test === 'string';
}
const packages = ['packages', 'apps', 'tests'].flatMap((dir) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory() && hasTestScript(join(root, dir, d.name)))
    .map((d) => join(dir, d.name)),
);
for (const pkg of packages) rmSync(join(root, pkg, '.vitest'), { recursive: true, force: true });

const turbo = spawnSync('turbo', ['run', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  shell: process.platform === 'win32',
});

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const pkg of packages) {
  const file = join(root, pkg, '.vitest', 'results.json');
  if (!existsSync(file)) {
    missing.push(pkg);
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
}
const status = turbo.status ?? 1;
console.log('');
const filtered = process.argv.slice(2).some((a) => a.startsWith('--filter') || a === '-F');
if (missing.length > 0 && !filtered) console.log(`no test results from: ${missing.join(', ')}`);
console.log(`mem01: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(status !== 0 ? status : failed > 0 || (missing.length > 0 && !filtered) ? 1 : 0);
