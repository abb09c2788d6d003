/**
 * The OpenAI Agents SDK as the MCP client: an `Agent` with `MCPServerStdio` pointed at the built bin, run by the
 * real `Runner` with an offline `ScriptedModel` that calls `recall` and then answers from what came back.
 */
import { MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
import { nodeBinary } from '@mem01/test-kit';
import { Agent, MCPServerStdio, Runner } from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { describe, expect, it } from 'vitest';
import { BIN, childEnv, connectStdio, ok, type RememberOut, tempDirForFile } from './helpers.js';

const USER = 'agent-user';
const home = tempDirForFile();

describe('the Agents SDK over MCPServerStdio', () => {
  it('an agent calls recall and gets the fact an earlier connection remembered', {
    timeout: 120_000,
  }, async () => {
    const earlier = await connectStdio(['--user', USER], childEnv(home.path));
    try {
      const r = await ok<RememberOut>(earlier.client, 'add_memory', {
        text: 'My favorite color is teal.',
        wait: true,
      });
      expect(r.accepted).toBe(true);
    } finally {
      await earlier.close();
    }

    const server = new MCPServerStdio({
      name: 'mem01',
      command: nodeBinary(),
      args: [BIN, '--user', USER],
      env: childEnv(home.path),
      cacheToolsList: true,
    });
    await server.connect();
    try {
      let toolOutput = '';
      let offered: string[] = [];
      const model = new ScriptedModel([
        modelResponder((call) => {
          offered = call.request.tools.map((t) => String((t as { name?: unknown }).name));
          return [
            functionCall(
              'search_memory',
              { query: 'What is my favorite color?' },
              { callId: 'call-recall-1' },
            ),
          ];
        }),
        modelResponder((call) => {
          const input = call.request.input;
          toolOutput = typeof input === 'string' ? input : JSON.stringify(input);
          return [
            assistantMessage(toolOutput.includes('teal') ? 'Your favorite color is teal.' : 'I do not know.'),
          ];
        }),
      ]);
      const agent = new Agent({
        name: 'assistant',
        instructions: 'Answer from memory.',
        model,
        mcpServers: [server],
      });
      const result = await new Runner({ tracingDisabled: true }).run(agent, 'What is my favorite color?');
      expect(offered).toEqual(
        expect.arrayContaining([
          'add_memory',
          'search_memory',
          'list_memories',
          'memory_history',
          'update_memory',
          'delete_memory',
          'summarize_conversation',
        ]),
      );
      expect(result.finalOutput).toBe('Your favorite color is teal.');
      // What the model saw is the recalled block of untrusted data.
      expect(toolOutput).toContain(JSON.stringify(MEMORY_BLOCK_OPEN).slice(1, -1));
      expect(toolOutput).toContain("The user's favorite color is teal.");
      expect(model.remainingSteps).toBe(0);
    } finally {
      await server.close();
    }
  });
});
