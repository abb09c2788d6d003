/**
 * What `require('@mem01/mcp')` resolves to: @mem01/mcp is ESM-only. Use `import { … } from '@mem01/mcp'` in an ES module, or
 * `await import('@mem01/mcp')` in CommonJS. The property name carries the advice into TypeScript's error message.
 */
declare const esmOnly: {
  readonly '@mem01/mcp is ESM-only: use import, or await import() from CommonJS': never;
};
export = esmOnly;
