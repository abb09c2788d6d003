/** `mem01 inspect`: serves the inspector until interrupted. */
import { describeRuntime } from '@mem01/runtime';
import type { CliContext } from '../context.js';
import { writeOut } from '../io.js';
import { startInspector } from './server.js';

export async function inspectCommand(ctx: CliContext, port: number): Promise<void> {
  const inspector = await startInspector({ engine: ctx.engine, store: ctx.store, port });
  await writeOut(ctx.io.stdout, `${ctx.json ? JSON.stringify({ url: inspector.url }) : inspector.url}\n`);
  ctx.io.stderr.write(
    `mem01 inspect: serving ${describeRuntime(ctx.description)} on 127.0.0.1 only; press Ctrl+C to stop\n`,
  );
  try {
    if (ctx.io.waitForStop) await ctx.io.waitForStop();
    else {
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    }
  } finally {
    await inspector.close();
  }
}
