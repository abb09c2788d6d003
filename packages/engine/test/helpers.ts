import { createBelief } from '../src/belief.js';
import type { ExtractionTurn } from '../src/ports.js';
import type { Belief } from '../src/types.js';

export const scope = { userId: 'u1', namespace: '' };
export const T0 = '2026-01-01T00:00:00.000Z';
export const T1 = '2026-02-01T00:00:00.000Z';

export function turn(
  id: string,
  text: string,
  role: 'user' | 'assistant' = 'user',
  position = 0,
): ExtractionTurn {
  return { id, sessionId: 's1', position, role, text, at: T0 };
}

export function belief(attribute: string, value: string, extra: Partial<Belief> = {}): Belief {
  return {
    ...createBelief({
      scope,
      kind: 'fact',
      subject: 'user',
      attribute,
      value,
      statement: `The user's ${attribute} is ${value}.`,
      confidence: 0.8,
      source: 'extracted',
      at: T0,
    }),
    ...extra,
  };
}
