/**
 * What `require('mem01session')` resolves to: mem01session is ESM-only. Use `import { … } from 'mem01session'` in an ES module, or
 * `await import('mem01session')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly 'mem01session is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
