// Cold-start bench child: a fresh agent program on the offline default (SQLite under MEM01_HOME, @mem01/local), up
// to its first recall: the first model call of the first run, which memSession makes after recalling into the input.
import { Agent, Runner } from '@openai/agents';
import { memSession } from 'mem01session';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const user = process.env.BENCH_USER ?? 'bench-user';
/** A model that answers at once and reports whether the recalled block reached its input. */
const model = {
  async getResponse(request) {
    const input = typeof request.input === 'string' ? request.input : JSON.stringify(request.input);
    process.stdout.write(
      `ready ${JSON.stringify({ recalled: input.includes('topic 42'), cpuMs: cpuMs() })}\n`,
    );
    return {
      usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'ok' }],
        },
      ],
    };
  },
  // biome-ignore lint/correctness/useYield: the bench never streams
  async *getStreamedResponse() {
    throw new Error('not streamed');
  },
};
const agent = new Agent({ name: 'bench', instructions: 'Answer briefly.', model });
const session = memSession('cold-start', { userId: user, logger: { info() {}, warn() {} } });
try {
  await new Runner({ tracingDisabled: true }).run(agent, 'What did I note about topic 42?', {
    session,
    ...session.runConfig(),
  });
} finally {
  await session.close();
}
