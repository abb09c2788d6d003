/**
 * What `require('@mem01/runtime')` resolves to: @mem01/runtime is ESM-only. Use `import { … } from '@mem01/runtime'` in an ES module, or
 * `await import('@mem01/runtime')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/runtime is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
