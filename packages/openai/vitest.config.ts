import { mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

export default mergeConfig(shared, {
  // Test files share no state except per-fingerprint clients (each file has its own fake server and port), and
  // loading `openai` + zod once instead of per file halves the suite's time on a busy machine.
  test: { isolate: false },
});
