/** Shared test helpers: a seeded SQLite file from the demo fixture, and ways to run the CLI. */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type EngineStore, MemoryEngine, type OutboxInput } from '@mem01/engine';
import { createLocalEmbedder, createLocalExtractor } from '@mem01/local';
import { openSqliteStore } from '@mem01/store-sqlite';
import { tempDir as newTempDir, nodeBinary, quiet } from '@mem01/test-kit';
import type { CliIo } from '../src/io.js';
import { run } from '../src/program.js';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = join(here, '..', 'dist', 'bin.js');
export const FIXTURE = join(here, '..', '..', '..', 'fixtures', 'conversations.json');
export const USER = 'demo-user';
export const XSS = '<script>alert(1)</script>';

interface Fixture {
  readonly userId: string;
  readonly conversations: readonly { id: string; at: string; user: string; assistant: string }[];
}

/** A fresh folder, removed when the test process exits. */
export function tempDir(prefix = 'mem01-cli-'): string {
  return newTempDir(prefix).path;
}

/**
 * Ingests the demo fixture (40 conversations of one user) through the engine with the offline extractor and
 * embedder, then adds a hedged turn (a pending belief), a belief whose statement is a script tag, and a second
 * user so that scope isolation is visible.
 */
export async function seedFixture(path: string): Promise<void> {
  const store = openSqliteStore({ path, dimensions: 384, logger: quiet });
  try {
    await seedStore(store);
  } finally {
    await store.close();
  }
}

/** {@link seedFixture} into any store (left open). */
export async function seedStore(store: EngineStore): Promise<void> {
  const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture;
  const engine = new MemoryEngine({
    store,
    extractor: createLocalExtractor(),
    embedder: createLocalEmbedder(),
  });
  try {
    const scope = { userId: fixture.userId };
    const turns: OutboxInput[] = fixture.conversations.flatMap((c) => [
      { scope, sessionId: c.id, position: 0, role: 'user' as const, text: c.user, at: c.at },
      { scope, sessionId: c.id, position: 1, role: 'assistant' as const, text: c.assistant, at: c.at },
    ]);
    turns.push({
      scope,
      sessionId: 'conv-41',
      position: 0,
      role: 'user',
      text: 'I think I might move to Denver next year.',
      at: '2026-05-25T10:00:00.000Z',
    });
    await engine.accept(turns);
    await engine.flush(scope);
    await engine.remember(scope, {
      kind: 'fact',
      attribute: 'xss_probe',
      value: XSS,
      statement: XSS,
    });
    await engine.accept([
      {
        scope: { userId: 'other-user' },
        sessionId: 'o-1',
        position: 0,
        role: 'user',
        text: 'I live in Lisbon.',
        at: '2026-01-02T10:00:00.000Z',
      },
    ]);
    await engine.flush();
  } finally {
    await engine.close();
  }
}

/** A copy of a SQLite database file (with its WAL, if any) at a new path. */
export function copyDb(from: string, to: string): string {
  copyFileSync(from, to);
  for (const ext of ['-wal', '-shm']) if (existsSync(from + ext)) copyFileSync(from + ext, to + ext);
  return to;
}

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

class Capture extends PassThrough {
  text = '';
  constructor(readonly isTTY: boolean) {
    super();
    this.setEncoding('utf8');
    this.on('data', (c: string) => {
      this.text += c;
    });
  }
}

/** Runs the command layer in-process with captured output. */
export async function runInProcess(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdinText?: string; tty?: boolean } = {},
): Promise<RunResult> {
  const stdout = new Capture(false);
  const stderr = new Capture(options.tty === true);
  const stdin = Object.assign(new PassThrough(), { isTTY: options.tty === true });
  if (options.stdinText !== undefined) stdin.end(options.stdinText);
  const io: CliIo = { stdout, stderr, stdin, env: options.env ?? {} };
  const code = await run(args, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Runs the built `mem01` bin in a child process (on the tests' Node). */
export function runBin(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; stdinText?: string } = {},
): Promise<RunResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run pnpm --filter @mem01/cli build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBinary(), [BIN, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.stdinText ?? '');
  });
}
