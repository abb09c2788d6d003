/**
 * What `require('@mem01/engine')` resolves to: @mem01/engine is ESM-only. Use `import { … } from '@mem01/engine'` in an ES module, or
 * `await import('@mem01/engine')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/engine is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
