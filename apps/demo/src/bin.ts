#!/usr/bin/env node
/**
 * mem01-demo: memory working, offline by default (no key, no network, no database server), live on request.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Mem01Error } from '@mem01/engine';
import { describeError } from '@mem01/engine/binding-kit';
import { SingleBar } from 'cli-progress';
import { Command, CommanderError } from 'commander';
import { artifactText } from './artifact.js';
import { check } from './check.js';
import { DEFAULT_FIXTURE, loadFixture, REPO_ROOT } from './fixture.js';
import { runLive } from './live.js';
import { paint, scalingTable, storyTimeline } from './output.js';
import { runScaling, scalingArtifact } from './scaling.js';
import { runStory } from './story.js';

export const ARTIFACT_PATH = join(REPO_ROOT, 'apps/demo/artifacts/prepared-input-scaling.json');

interface Options {
  json?: boolean;
  writeArtifact?: boolean;
  writeBench?: boolean;
  check?: boolean;
  live?: boolean;
  model?: string;
  fixture: string;
}

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('mem01-demo')
    .description(
      'Shows mem01 memory working: prepared-input scaling and a belief lifecycle story. Offline by default.',
    )
    .option('--json', 'print the results as machine-readable JSON')
    .option('--write-artifact', 'regenerate artifacts/prepared-input-scaling.json from the fixture')
    .option('--write-bench', 'also write bench/results/demo.json (used by pnpm bench)')
    .option('--check', 'print which configuration would run (reads .env; no network; no secrets shown)')
    .option(
      '--live',
      'run the story through the real OpenAI model (needs OPENAI_API_KEY; Postgres if DATABASE_URL)',
    )
    .option(
      '--model <id>',
      "with --live: the agent's model (default: the extraction model, MEM01_LLM_MODEL, else @mem01/openai's default)",
    )
    .option('--fixture <path>', 'the conversations fixture', DEFAULT_FIXTURE)
    .showHelpAfterError('(run pnpm demo --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  const opts = program.opts<Options>();
  if ([opts.check, opts.live, opts.writeArtifact].filter(Boolean).length > 1) {
    process.stderr.write('error: choose one of --check, --live and --write-artifact\n');
    return 2;
  }
  const out = process.stdout;
  const env = process.env as Record<string, string | undefined>;

  if (opts.check) {
    const result = await check(env);
    if (opts.json) out.write(`${JSON.stringify(result, null, 2)}\n`);
    else {
      out.write(`${paint(out, 'bold', 'mem01 configuration check')} (no network call was made)\n`);
      out.write(`  .env files read: ${result.envFiles.length ? result.envFiles.join(', ') : 'none'}\n`);
      out.write(
        `  OPENAI_API_KEY:  ${result.openai.set ? (result.openai.valid ? `set (${result.openai.shown})` : `INVALID: ${result.openai.problem}`) : 'not set'}\n`,
      );
      out.write(
        `  DATABASE_URL:    ${result.database.set ? (result.database.valid ? `set (${result.database.shown})` : `INVALID: ${result.database.problem}`) : 'not set'}\n`,
      );
      out.write(
        `  would run:       extractor ${result.wouldRun.extractor}; summarizer ${result.wouldRun.summarizer}; embedder ${result.wouldRun.embedder}; store ${result.wouldRun.store}\n`,
      );
    }
    return result.ok ? 0 : 1;
  }

  if (opts.live) {
    const { loadDotEnv } = await import('./check.js');
    loadDotEnv(env);
    const result = await runLive(env, { model: opts.model });
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }

  const fixture = loadFixture(opts.fixture);
  const total = fixture.conversations.length * 3;
  const bar =
    process.stderr.isTTY && !opts.json
      ? new SingleBar({
          format: ' {bar} {value}/{total} Runner runs',
          hideCursor: true,
          clearOnComplete: true,
        })
      : null;
  bar?.start(total, 0);
  const scaling = await runScaling(fixture, () => bar?.increment());
  bar?.stop();
  const fixturePath = relative(REPO_ROOT, opts.fixture).split('\\').join('/');
  const artifact = scalingArtifact(scaling, fixturePath);

  if (opts.writeArtifact) {
    mkdirSync(dirname(ARTIFACT_PATH), { recursive: true });
    writeFileSync(ARTIFACT_PATH, artifactText(artifact));
    out.write(`wrote ${relative(process.cwd(), ARTIFACT_PATH)}\n`);
    return 0;
  }
  if (opts.writeBench) {
    const path = join(REPO_ROOT, 'bench/results/demo.json');
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, artifactText(artifact));
  }
  const story = await runStory();
  if (opts.json) {
    out.write(`${JSON.stringify({ scaling: artifact, story }, null, 2)}\n`);
    return 0;
  }
  out.write(
    [
      paint(
        out,
        'bold',
        'mem01 demo: long-term memory for the OpenAI Agents SDK, offline (no API key, no network, no database server)',
      ),
      'Part 1 shows that the prompt stays bounded: a reused session grows with every conversation, memSession sends',
      'one small memory block instead. Part 2 shows beliefs being extracted, superseded and recalled across conversations.',
      '',
      scalingTable(scaling, out),
      '',
      storyTimeline(story, out),
      '',
      paint(
        out,
        'dim',
        'Try: mem01-demo --json | --write-artifact | --check | --live (needs OPENAI_API_KEY)',
      ),
      '',
    ].join('\n'),
  );
  return 0;
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const code = err instanceof Mem01Error ? ` [${err.code}]` : '';
    process.stderr.write(
      `mem01-demo: error${code}: ${describeError(err).replace(/^[A-Za-z]+Error \[[a-z_]+\]: /, '')}\n`,
    );
    process.exitCode = 1;
  },
);
