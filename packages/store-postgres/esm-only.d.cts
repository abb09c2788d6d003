/**
 * What `require('@mem01/store-postgres')` resolves to: @mem01/store-postgres is ESM-only. Use `import { … } from '@mem01/store-postgres'` in an ES module, or
 * `await import('@mem01/store-postgres')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/store-postgres is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
