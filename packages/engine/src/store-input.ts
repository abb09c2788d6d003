/**
 * The checks of what callers pass to the store ports live in the store kit (`store-kit/validate.ts`, published as
 * `@mem01/engine/store-kit`). This module keeps the engine's own imports of them (`assertPosition`) where they were.
 */
export * from './store-kit/validate.js';
