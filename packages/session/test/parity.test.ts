/**
 * The same runs through the SDK's MemorySession and through memSession leave identical getItems(), even
 * while memSession injects memory into the model input.
 */
import { Agent, type AgentInputItem, handoff, MemorySession, type Session, tool } from '@openai/agents';
import {
  assistantMessage,
  functionCall,
  modelError,
  ScriptedModel,
  type ScriptedModelInput,
} from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { closeSharedRuntimes, type MemSession } from '../src/index.js';
import { runner, testSession } from './harness.js';

afterEach(() => closeSharedRuntimes());

type Turn = { input: string; steps: ScriptedModelInput[]; stream?: boolean; fails?: boolean };

function weatherTool() {
  return tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  });
}

function buildAgents(model: ScriptedModel) {
  const specialist = new Agent({ name: 'specialist', instructions: 'You are the specialist.', model });
  const main = new Agent({
    name: 'main',
    instructions: 'You are the main agent.',
    model,
    tools: [weatherTool()],
    handoffs: [handoff(specialist)],
  });
  return main;
}

async function play(session: Session, turns: Turn[], hooks: () => object): Promise<ScriptedModel> {
  const model = new ScriptedModel(turns.flatMap((t) => t.steps));
  const agent = buildAgents(model);
  for (const turn of turns) {
    const options = { session, ...hooks() };
    const attempt = turn.stream
      ? (async () => {
          const result = await runner().run(agent, turn.input, { ...options, stream: true });
          for await (const _event of result.toStream()) {
            // drain
          }
          await result.completed;
          if (result.error) throw result.error;
        })()
      : runner().run(agent, turn.input, options);
    if (turn.fails) await expect(attempt).rejects.toThrow();
    else await attempt;
    if ('flushMemory' in session) await (session as MemSession).flushMemory();
  }
  return model;
}

const SCRIPTS: Record<string, Turn[]> = {
  text: [
    { input: 'hello there', steps: [[assistantMessage('hi!')]] },
    { input: 'home_city=NYC', steps: [[assistantMessage('noted')]] },
    { input: 'where is my home city?', steps: [[assistantMessage('NYC')]] },
  ],
  'tool calls and results': [
    { input: 'home_city=Paris', steps: [[assistantMessage('noted')]] },
    {
      input: 'weather in my home city?',
      steps: [
        [functionCall('get_weather', { city: 'Paris' }, { callId: 'call_1' })],
        [assistantMessage('It is sunny in Paris.')],
      ],
    },
  ],
  handoffs: [
    { input: 'diet=vegan', steps: [[assistantMessage('noted')]] },
    {
      input: 'what is my diet? ask the specialist',
      steps: [
        [functionCall('transfer_to_specialist', {}, { callId: 'call_h' })],
        [assistantMessage('You are vegan, says the specialist.')],
      ],
    },
  ],
  streaming: [
    { input: 'pet=cat', steps: [[assistantMessage('noted')]], stream: true },
    { input: 'what pet do I have?', steps: [[assistantMessage('a cat')]], stream: true },
  ],
  'a model error': [
    { input: 'job=pilot', steps: [[assistantMessage('noted')]] },
    { input: 'what is my job?', steps: [modelError(new Error('model down'))], fails: true },
    { input: 'again: what is my job?', steps: [[assistantMessage('pilot')]] },
  ],
};

describe('parity with MemorySession through the real Runner', () => {
  for (const [name, turns] of Object.entries(SCRIPTS)) {
    it(`leaves identical getItems() for ${name}`, async () => {
      const reference = new MemorySession({ sessionId: 'ref' });
      await play(reference, turns, () => ({}));
      const { session } = testSession(`parity-${name}`);
      const model = await play(session, turns, () => session.runConfig());
      const expected = await reference.getItems();
      const actual = await session.getItems();
      expect(actual).toEqual(expected);
      expect(JSON.stringify(actual)).not.toContain('mem01-memory');
      // memory did reach the model in the later runs
      const injected = model.calls.filter((c) => JSON.stringify(c.request.input).includes('<mem01-memory'));
      expect(injected.length).toBeGreaterThan(0);
      // limits and pop behave the same
      expect(await session.getItems(2)).toEqual(await reference.getItems(2));
      expect(await session.getItems(0)).toEqual([]);
      expect(await session.popItem()).toEqual(await reference.popItem());
      expect(await session.getItems()).toEqual(await reference.getItems());
      await session.clearSession();
      await reference.clearSession();
      expect(await session.getItems()).toEqual([]);
      await session.close();
    });
  }

  it('returns deep copies', async () => {
    const { session } = testSession('copies');
    await session.addItems([{ role: 'user', content: 'a' } as AgentInputItem]);
    const [first] = await session.getItems();
    (first as { content: string }).content = 'mutated';
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'a' }]);
    await session.close();
  });
});
