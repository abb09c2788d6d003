import { runStoreConformance } from '@mem01/store-conformance';
import { createMemoryStore } from './index.js';

runStoreConformance('memory', { open: async ({ dimensions }) => createMemoryStore({ dimensions }) });
