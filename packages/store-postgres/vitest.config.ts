import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

// One PGlite (pgvector) server per run, started in globalSetup, for the tests that run against it.
export default mergeConfig(shared, defineConfig({ test: { globalSetup: ['test/global-setup.ts'] } }));
