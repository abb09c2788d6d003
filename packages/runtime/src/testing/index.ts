/**
 * `@mem01/runtime/testing`: helpers for tests of code that opens memory through the runtime.
 * @packageDocumentation
 */
export { resetNoticeForTests } from '../open.js';
