/**
 * `@mem01/store-conformance` (private): the one vitest suite that every mem01 store runs.
 * @packageDocumentation
 */
export type { ConformanceHarness, ConformanceOptions } from './context.js';
export { completeOnly, completing } from './fixtures.js';
export { expectCurrentFeatures, expectOldGrantWorks } from './migrated.js';
export { expectRestartServedAll, type RestartReport } from './restart.js';
export { CONFORMANCE_AREAS, runStoreConformance } from './run-store-conformance.js';
