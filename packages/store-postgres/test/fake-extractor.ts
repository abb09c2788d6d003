import type { ExtractionOperation, ExtractionRequest, ExtractionResult, Extractor } from '@mem01/engine';

/**
 * Deterministic test extractor: every `key=value` in a user turn becomes an `add` of `user.key = value`.
 * Records each turn it sees (with its user), can wait a fixed latency, and can be held at a gate.
 */
export class FakeExtractor implements Extractor {
  readonly name = 'fake-kv';
  readonly seen: { userId: string; turnId: string; position: number; text: string }[] = [];
  gate: Promise<void> | null = null;
  onCall: ((request: ExtractionRequest) => void) | null = null;

  /** `log`: a list shared by several extractors, to check the global order turns were extracted in. */
  constructor(
    private readonly latencyMs = 0,
    private readonly log: { userId: string; position: number }[] = [],
  ) {}

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    this.onCall?.(request);
    if (this.gate) await this.gate;
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const operations: ExtractionOperation[] = [];
    for (const turn of request.turns) {
      this.seen.push({
        userId: request.scope.userId,
        turnId: turn.id,
        position: turn.position,
        text: turn.text,
      });
      this.log.push({ userId: request.scope.userId, position: turn.position });
      if (turn.role !== 'user') continue;
      for (const part of turn.text.split(';')) {
        const m = /^\s*(\w+)=(.+?)\s*$/.exec(part);
        if (!m) continue;
        const [, key, value] = m as unknown as [string, string, string];
        operations.push({
          op: 'add',
          kind: 'fact',
          subject: 'user',
          attribute: key,
          value,
          statement: `The user's ${key} is ${value}.`,
          confidence: 0.9,
          evidence: [{ turnId: turn.id, quote: part.trim() }],
        });
      }
    }
    return { operations };
  }
}
