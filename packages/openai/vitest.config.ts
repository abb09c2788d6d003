import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source'] },
  test: {
    // Test files share no state except per-fingerprint clients (each file has its own fake server and port), and
    // loading `openai` + zod once instead of per file halves the suite's time on a busy machine.
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
