/**
 * What `require('mem01-demo')` resolves to: mem01-demo is ESM-only. Use `import { … } from 'mem01-demo'` in an ES module, or
 * `await import('mem01-demo')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly 'mem01-demo is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
