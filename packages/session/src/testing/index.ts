/**
 * Test helpers for mem01session users (not for production): a store wrapper that fails on demand.
 * @packageDocumentation
 */
export { type FaultControl, withFaults } from './faulty-store.js';
