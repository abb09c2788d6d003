/**
 * What `require('@mem01/cli')` resolves to: @mem01/cli is ESM-only. Use `import { … } from '@mem01/cli'` in an ES module, or
 * `await import('@mem01/cli')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/cli is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
