import { defineConfig } from 'vitest/config';

/**
 * The vitest settings every package shares. Workspace packages resolve to their TypeScript source through the
 * `mem01-source` export condition, also under SSR (which vitest uses for node tests): without `ssr.resolve`, a
 * stale `dist` of a dependency would be tested instead. The condition has a name of our own because some
 * third-party packages publish TypeScript under a plain `source` condition. Child processes run Node on `dist`.
 */
export default defineConfig({
  resolve: { conditions: ['mem01-source'] },
  ssr: { resolve: { conditions: ['mem01-source'], externalConditions: ['mem01-source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The counts `pnpm test` adds up into its closing line (scripts/test-all.mjs); the default output is unchanged.
    reporters: ['default', ['json', { outputFile: '.vitest/results.json' }]],
  },
});
