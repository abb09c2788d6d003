import { defineConfig } from 'vitest/config';

// Workspace dependencies resolve to their TypeScript source (the `source` export condition), also in Vitest's
// SSR (node) environment, so tests never need a prior build of the packages they import.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: { include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 },
});
