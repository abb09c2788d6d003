/**
 * What `require('@mem01/openai')` resolves to: @mem01/openai is ESM-only. Use `import { … } from '@mem01/openai'` in an ES module, or
 * `await import('@mem01/openai')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/openai is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
