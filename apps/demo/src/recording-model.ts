import type { AgentInputItem, ModelRequest } from '@openai/agents';
import { assistantMessage, modelResponder, ScriptedModel } from '@openai/agents/testing';

/** What one model call was prepared with. */
export interface PreparedInput {
  readonly items: number;
  /** UTF-8 bytes of the JSON input items plus the system instructions: an upper bound on what is sent. */
  readonly bytes: number;
  readonly input: readonly AgentInputItem[];
  readonly instructions: string;
}

const encoder = new TextEncoder();

export function measure(request: Readonly<ModelRequest>): PreparedInput {
  const input: AgentInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : [...request.input];
  const instructions = request.systemInstructions ?? '';
  const bytes = encoder.encode(JSON.stringify(input)).byteLength + encoder.encode(instructions).byteLength;
  return { items: input.length, bytes, input, instructions };
}

/**
 * The offline model: the SDK's own `ScriptedModel`, answering each call with a scripted reply and recording
 * the request the `Runner` prepared. No network.
 */
export class RecordingModel {
  readonly model = new ScriptedModel();
  readonly name = 'mem01-demo-recording-model';

  /** Scripts the reply of the next call. */
  willReply(text: string | ((input: PreparedInput) => string)): void {
    this.model.enqueue(
      modelResponder((call) => [
        assistantMessage(typeof text === 'string' ? text : text(measure(call.request))),
      ]),
    );
  }

  /** The prepared input of the most recent call. */
  last(): PreparedInput {
    const call = this.model.lastCall;
    if (!call) throw new Error('the offline model has not been called');
    return measure(call.request);
  }
}

/** The text of a message item, whatever its content shape. */
export function itemText(item: AgentInputItem): string {
  const content = (item as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((c) => (typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : ''))
      .join('');
  }
  return '';
}
