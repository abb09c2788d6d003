/**
 * What `require('@mem01/store-memory')` resolves to: @mem01/store-memory is ESM-only. Use `import { … } from '@mem01/store-memory'` in an ES module, or
 * `await import('@mem01/store-memory')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/store-memory is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
