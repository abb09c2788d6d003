import type { ExtractionTurn } from '@mem01/engine/provider-kit';

export const API_KEY = 'sk-test-0123456789abcdefSECRET';
export const NOW = '2026-02-01T12:00:00.000Z';

let n = 0;
export function turn(role: 'user' | 'assistant', text: string, id?: string): ExtractionTurn {
  n++;
  return {
    id: id ?? `entry-${role}-${n}`,
    sessionId: 'sess-1',
    position: n,
    role,
    text,
    at: '2026-02-01T11:00:00.000Z',
  };
}

/** Fast retry tuning so tests do not sleep long. */
export const FAST_RETRY = { baseDelayMs: 5, maxDelayMs: 20 } as const;

export function captureLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) },
  };
}
