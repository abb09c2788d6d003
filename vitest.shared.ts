import { defineConfig } from 'vitest/config';

/**
 * The vitest settings every package shares. Workspace packages resolve to their TypeScript source through the
 * `source` export condition, also under SSR (which vitest uses for node tests): without `ssr.resolve`, a stale
 * `dist` of a dependency would be tested instead. Child processes started by tests run Node on `dist`.
 */
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: { include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 },
});
