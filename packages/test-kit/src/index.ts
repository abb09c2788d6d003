/**
 * `@mem01/test-kit` (private): the helpers every mem01 test shares, written once. Packages list it as a
 * devDependency; vitest resolves it to this source (the `mem01-source` condition), plain Node to `dist`.
 * @packageDocumentation
 */

export { ensureBuilt } from './build.js';
export { type CredentialForm, embedded, failureCase, failureOf, partsOf } from './credential-cases.js';
export { failingExtractor, failingMethod } from './failing.js';
export { quiet } from './logger.js';
export { findOldNode, nodeBinary, type OldNode } from './node.js';
export {
  createPgDatabase,
  dropPgDatabase,
  dropPgSchema,
  TEST_PG_URL,
  uniquePgName,
  withPgClient,
} from './postgres.js';
export { type TempDir, tempDir } from './temp.js';
export { waitFor } from './wait.js';
