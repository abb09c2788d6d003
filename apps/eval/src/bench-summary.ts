#!/usr/bin/env node
/** `pnpm bench`'s last step: writes bench/results/summary.md. Reports problems but never fails the build. */
import { mkdir } from 'node:fs/promises';
import { writeSummary } from './bench-report.js';
import { RESULTS_DIR } from './paths.js';

try {
  await mkdir(RESULTS_DIR, { recursive: true });
  const { figures } = await writeSummary(RESULTS_DIR);
  for (const f of figures) {
    console.log(`${f.figure}: ${f.value === null ? f.source : `${f.value} ${f.unit}`} (target ${f.target})`);
  }
  console.log(`wrote ${RESULTS_DIR}/summary.md`);
} catch (err) {
  console.error(`bench summary: ${err instanceof Error ? err.message : String(err)}`);
}
