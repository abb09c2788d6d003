export * from './types.js';
export * from './errors.js';
export type * from './ports.js';
export * from './util.js';
export * from './belief.js';
