/**
 * What `require('@mem01/local')` resolves to: @mem01/local is ESM-only. Use `import { … } from '@mem01/local'` in an ES module, or
 * `await import('@mem01/local')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/local is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
