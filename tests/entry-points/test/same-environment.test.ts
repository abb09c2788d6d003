/**
 * Every entry point opens memory through `@mem01/runtime`: given one environment (the SQLite file in MEM01_HOME,
 * MEM01_* tuning, and for one case OPENAI_API_KEY + OPENAI_BASE_URL on the fake OpenAI server), the session's
 * `openMemoryRuntime`, the MCP server's `openMcpRuntime` and the CLI (whose context the inspector uses) open the same
 * store, extractor and embedder (name and dimensions) with the same settings, and recall the same block. The demo's
 * `--check` reports that same runtime; the eval runs the same extractor and embedder and, by design, neither the
 * tuning nor the store of the environment (its headline is the default a user gets, on a store of its own), and says
 * which variables it left out.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { run } from '@mem01/cli';
import {
  defaultEmbedderDimensions,
  ignoredVariables,
  openStore,
  openSystem,
  providerEnv,
  resolveProvider,
} from '@mem01/eval';
import { openMcpRuntime } from '@mem01/mcp';
import { type FakeOpenAI, startFakeOpenAI } from '@mem01/openai/testing';
import { describeRuntime } from '@mem01/runtime';
import { quiet, type TempDir, tempDir } from '@mem01/test-kit';
import { check } from 'mem01-demo';
import { openMemoryRuntime } from 'mem01session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dirs: TempDir[] = [];
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
  for (const d of dirs) d.remove();
});

const SCOPE = { userId: 'same-env-user' };
const QUERY = 'Which city do I live in?';
const TUNING = {
  MEM01_BLOCK_BYTES: '600',
  MEM01_RECALL_LIMIT: '4',
  MEM01_PENDING_BELOW: '0.75',
  MEM01_EPISODIC: 'off',
};
const SETTINGS = { blockBytes: 600, recallLimit: 4, pendingBelow: 0.75, episodic: false };

/** What an entry point opened, in the terms every one of them can report. */
interface Opened {
  readonly location: string;
  readonly extractor: string;
  readonly embedder: string | null;
  readonly dimensions: number | null;
  readonly settings: typeof SETTINGS;
  readonly block: string;
}

const settingsOf = (config: typeof SETTINGS): typeof SETTINGS => ({
  blockBytes: config.blockBytes,
  recallLimit: config.recallLimit,
  pendingBelow: config.pendingBelow,
  episodic: config.episodic,
});

/** The CLI as a user runs it (in-process, with captured streams). */
async function mem01(args: string[], env: Record<string, string>) {
  const capture = () => {
    const stream = new PassThrough();
    let text = '';
    stream.setEncoding('utf8').on('data', (c: string) => {
      text += c;
    });
    return { stream, text: () => text };
  };
  const stdout = capture();
  const stderr = capture();
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  const code = await run(args, { stdout: stdout.stream, stderr: stderr.stream, stdin, env });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const cases: Array<{
  name: string;
  env: () => Record<string, string>;
  extractor: RegExp;
  dimensions: number;
}> = [
  {
    name: 'offline: no key, the SQLite file in MEM01_HOME',
    env: () => ({}),
    extractor: /^local-rules$/,
    dimensions: 384,
  },
  {
    name: 'OPENAI_API_KEY + OPENAI_BASE_URL: the OpenAI models (fake server)',
    env: () => ({ OPENAI_API_KEY: 'sk-test-same-env-0123456789', OPENAI_BASE_URL: fake.url }),
    extractor: /^openai:\S+$/,
    dimensions: 1536,
  },
];

describe('one environment, every entry point', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const dir = tempDir('mem01-same-env-');
      dirs.push(dir);
      const home = dir.path;
      const env = { MEM01_HOME: home, ...TUNING, ...c.env() };

      // mem01session: the runtime memSession opens (it creates the file and fixes its dimensions).
      const session = await openMemoryRuntime({ env, logger: quiet });
      let viaSession: Opened;
      try {
        await session.engine.remember(SCOPE, {
          kind: 'fact',
          attribute: 'home_city',
          value: 'Lisbon',
          statement: 'The user lives in Lisbon.',
        });
        viaSession = {
          ...session.description,
          settings: settingsOf(session.engine.config),
          block: (await session.engine.context(SCOPE, QUERY)).text,
        };
      } finally {
        await session.close();
      }
      expect(viaSession.block).toContain('The user lives in Lisbon.');
      expect(viaSession).toMatchObject({
        location: `sqlite ${join(home, 'memory.db')}`,
        dimensions: c.dimensions,
        settings: SETTINGS,
      });
      expect(viaSession.extractor).toMatch(c.extractor);

      // The MCP server's runtime.
      const mcp = await openMcpRuntime({ env, logger: quiet });
      let viaMcp: Opened;
      try {
        viaMcp = {
          location: mcp.description.store,
          extractor: mcp.description.extractor,
          embedder: mcp.description.embedder,
          dimensions: mcp.description.runtime.dimensions,
          settings: settingsOf(mcp.engine.config),
          block: (await mcp.engine.context(SCOPE, QUERY)).text,
        };
      } finally {
        await mcp.close();
      }

      // The CLI (and the inspector, which runs on the CLI's context): its stderr line, doctor and recall.
      const doctor = await mem01(['--json', 'doctor'], env);
      expect(doctor.code, doctor.stderr).toBe(0);
      const report = JSON.parse(doctor.stdout) as {
        store: string;
        extractor: string;
        embedder: { name: string; dimensions: number } | null;
        settings: typeof SETTINGS;
      };
      const recall = await mem01(['--json', 'recall', '--user', SCOPE.userId, QUERY], env);
      expect(recall.code, recall.stderr).toBe(0);
      const viaCli: Opened = {
        location: report.store,
        extractor: report.extractor,
        embedder: report.embedder?.name ?? null,
        dimensions: report.embedder?.dimensions ?? null,
        settings: settingsOf(report.settings),
        block: (JSON.parse(recall.stdout) as { block: { text: string } }).block.text,
      };
      const line = `mem01: ${describeRuntime({ ...viaSession, store: 'sqlite', strict: false, blockBytes: 600, budgetBytes: 600 })}\n`;
      expect(doctor.stderr).toBe(line);
      expect(recall.stderr).toBe(line);

      const pick = ({ location, extractor, embedder, dimensions, settings, block }: Opened) => ({
        location,
        extractor,
        embedder,
        dimensions,
        settings,
        block,
      });
      // The demo's --check: what would run, resolved by the runtime without opening anything.
      const demoCheck = await check({ ...env }, home);
      expect(demoCheck.ok).toBe(true);
      expect(demoCheck.runtime).toMatchObject({
        location: viaSession.location,
        extractor: viaSession.extractor,
        embedder: viaSession.embedder,
        dimensions: viaSession.dimensions,
        blockBytes: SETTINGS.blockBytes,
      });

      // The eval: the same models from the same environment; the tuning and the store are left out, and named.
      const provider = await resolveProvider(env);
      const evalEnv = providerEnv(env, provider);
      const dimensions = await defaultEmbedderDimensions(evalEnv);
      expect(dimensions).toBe(c.dimensions);
      const handle = await openStore('memory', { dimensions });
      const system = await openSystem({ episodic: true, clock: 'wall' }, handle, evalEnv);
      try {
        expect(system.description).toMatchObject({
          extractor: viaSession.extractor,
          embedder: viaSession.embedder,
        });
      } finally {
        await system.close();
        await handle.close();
      }
      expect(ignoredVariables(env).sort()).toEqual(['MEM01_HOME', ...Object.keys(TUNING)].sort());

      expect(pick(viaMcp)).toEqual(pick(viaSession));
      expect(pick(viaCli)).toEqual(pick(viaSession));
      expect(JSON.stringify([viaSession, viaMcp, viaCli, doctor, recall, demoCheck])).not.toContain(
        'sk-test',
      );
    });
  }
});
