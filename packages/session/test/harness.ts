/** Shared pieces of the tests: an offline model that records its inputs, a recording extractor, stores. */
import type { ExtractionRequest, ExtractionResult, Extractor } from '@mem01/engine';
import { KeyValueExtractor, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { Agent, type AgentInputItem, Runner } from '@openai/agents';
import {
  assistantMessage,
  modelResponder,
  type RecordedModelCall,
  ScriptedModel,
} from '@openai/agents/testing';
import { type MemSessionOptions, memSession } from '../src/index.js';

/** An extractor that records every request it gets (turn texts), delegating to KeyValueExtractor. */
export class RecordingExtractor implements Extractor {
  readonly name = 'recording-test';
  readonly requests: ExtractionRequest[] = [];
  private readonly inner: KeyValueExtractor;
  constructor(options: ConstructorParameters<typeof KeyValueExtractor>[0] = {}) {
    this.inner = new KeyValueExtractor(options);
  }
  get batchChars() {
    return this.inner.batchChars;
  }
  async extract(request: ExtractionRequest): Promise<ExtractionResult> {
    this.requests.push(request);
    return this.inner.extract(request);
  }
  get texts(): string[] {
    return this.requests.flatMap((r) => r.turns.map((t) => t.text));
  }
}

/** A model that answers "ok: <latest user text>" to every call, forever, recording calls. */
export function echoModel(): ScriptedModel & { readonly inputs: AgentInputItem[][] } {
  const model = new ScriptedModel();
  const inputs: AgentInputItem[][] = [];
  const answer = (call: RecordedModelCall) => {
    const input = call.request.input;
    inputs.push(typeof input === 'string' ? [{ role: 'user', content: input }] : [...input]);
    model.enqueue(modelResponder(answer));
    return [assistantMessage(`ok ${call.index}`)];
  };
  model.enqueue(modelResponder(answer));
  return Object.assign(model, { inputs });
}

export function inputText(input: readonly AgentInputItem[] | string): string {
  return typeof input === 'string' ? input : JSON.stringify(input);
}

export const runner = () => new Runner({ tracingDisabled: true });

export function agentWith(model: ScriptedModel, instructions = 'You are helpful.') {
  return new Agent({ name: 'assistant', instructions, model });
}

/** A memSession on an in-memory store with the recording extractor. */
export function testSession(sessionId: string, options: Partial<MemSessionOptions> = {}) {
  const store = options.store ?? createMemoryStore();
  const extractor = (options.extractor as RecordingExtractor | undefined) ?? new RecordingExtractor();
  const embedder = options.embedder === undefined ? new WordHashEmbedder() : options.embedder;
  const session = memSession(sessionId, { userId: 'u1', ...options, store, extractor, embedder });
  return { session, store, extractor, embedder };
}
