/**
 * `@mem01/runtime/testing`: helpers for tests of code that opens memory through the runtime.
 * @packageDocumentation
 */
export { resetNoticeForTests } from '../resolve-runtime.js';
