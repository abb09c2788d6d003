import type { ExtractionRequest, ExtractionResult, Extractor } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';

/**
 * The engine's `KeyValueExtractor` (every `key=value` in a user turn becomes `user.key = value`), instrumented for
 * the fault tests: it records each turn it sees (with its user), can wait a fixed latency, and can be held at a gate.
 */
export class FakeExtractor implements Extractor {
  readonly name = 'fake-kv';
  readonly seen: { userId: string; turnId: string; position: number; text: string }[] = [];
  gate: Promise<void> | null = null;
  onCall: ((request: ExtractionRequest) => void) | null = null;
  readonly #rules = new KeyValueExtractor();

  /** `log`: a list shared by several extractors, to check the global order turns were extracted in. */
  constructor(
    private readonly latencyMs = 0,
    private readonly log: { userId: string; position: number }[] = [],
  ) {}

  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    this.onCall?.(request);
    if (this.gate) await this.gate;
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    for (const turn of request.turns) {
      const { id: turnId, position, text } = turn;
      this.seen.push({ userId: request.scope.userId, turnId, position, text });
      this.log.push({ userId: request.scope.userId, position });
    }
    return this.#rules.extract(request);
  }
}
