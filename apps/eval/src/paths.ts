/** Where things are, relative to this package (`apps/eval/{src,dist}/paths.*`). */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The LoCoMo file, outside the repository (it is evaluation data and is never copied in). */
export const DEFAULT_DATA = resolve(REPO_ROOT, '../shared/bench/locomo10.json');
/** Repo-root `bench/results`. */
export const RESULTS_DIR = resolve(REPO_ROOT, 'bench/results');
/**
 * Where `eval:locomo` writes its reports unless told otherwise: `bench/results/local`, ignored by git, so a run
 * never leaves the clone dirty. `--update-results` (what `pnpm bench` passes) writes the committed ones.
 */
export const LOCAL_RESULTS_DIR = resolve(RESULTS_DIR, 'local');
