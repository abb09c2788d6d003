/**
 * Test helpers: the built `mem01-mcp` bin run as a child process (on the Node that runs the tests, ≥ 22.13),
 * reached with the MCP SDK's own `Client` over stdio or Streamable HTTP. Every test gets its own MEM01_HOME, so
 * nothing ever touches ~/.mem01.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary, tempDir } from '@mem01/test-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = join(here, '..', 'dist', 'bin.js');

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run pnpm --filter @mem01/mcp build first`);
}

export { tempDir };

/** A fresh folder made before the tests of the calling file and removed after them; read `path` inside a test. */
export function tempDirForFile(): { readonly path: string } {
  let dir: ReturnType<typeof tempDir> | undefined;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir?.remove());
  return {
    get path(): string {
      if (!dir) throw new Error('tempDirForFile: read path inside a test');
      return dir.path;
    },
  };
}

/** The environment of a child server: no inherited secrets, its own MEM01_HOME. */
export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    MEM01_HOME: home,
    ...extra,
  };
}

export interface Connected {
  readonly client: Client;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Spawns the bin over stdio and connects an SDK client to it. */
export async function connectStdio(args: readonly string[], env: Record<string, string>): Promise<Connected> {
  assertBuilt();
  const transport = new StdioClientTransport({
    command: nodeBinary(),
    args: [BIN, ...args],
    env,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const client = new Client({ name: 'mem01-mcp-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    // What the server said before it went away is the only account of why (a flake once closed one at start).
    throw new Error(`mem01-mcp ${args.join(' ')} did not connect: ${String(e)}\nits stderr:\n${err}`, {
      cause: e,
    });
  }
  return { client, stderr: () => err, close: () => client.close() };
}

export interface HttpChild {
  readonly url: string;
  readonly token: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the bin with `--http --port 0` and waits for the URL (and the generated token) on stdout. */
export async function startHttpChild(
  args: readonly string[],
  env: Record<string, string>,
): Promise<HttpChild> {
  assertBuilt();
  const child = spawn(nodeBinary(), [BIN, '--http', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    // With only per-user tokens (a token file) there is no server token to wait for: `token` is then ''.
    const given = args.includes('--token')
      ? args[args.indexOf('--token') + 1]
      : (env.MEM01_MCP_TOKEN ?? (args.includes('--token-file') ? '' : undefined));
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const url = out.match(/^url: (\S+)$/m)?.[1];
      const token = given ?? out.match(/^token: (\S+)$/m)?.[1];
      if (url && token !== undefined) resolve({ url, token });
    });
    void exited.then((code) => reject(new Error(`mem01-mcp --http exited (${code}) before ready: ${err}`)));
  });
  return {
    ...ready,
    child,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Connects an SDK client over Streamable HTTP with the bearer token. */
export async function connectHttp(url: string, token: string): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'mem01-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => '',
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** Calls a tool and returns the result (tool errors included; never throws for them). */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured content of a successful call; fails the test with the error text otherwise. */
export async function ok<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${textOf(r)}`);
  if (!r.structuredContent) throw new Error(`${name} returned no structured content`);
  return r.structuredContent as T;
}

/** The text content of a result. */
export function textOf(r: CallToolResult): string {
  return r.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

export interface RecallOut {
  readonly block: string;
  readonly items: readonly {
    id: string;
    kind: string;
    statement: string;
    version: number;
    score: number;
    tier: 'belief' | 'episode' | 'summary';
    inBlock: boolean;
  }[];
}

export interface BeliefOut {
  readonly id: string;
  readonly status: string;
  readonly statement: string;
  readonly version: number;
  readonly source: string;
  readonly attribute: string;
  readonly evidence: readonly { sessionId: string; position: number }[];
}

export interface RememberOut {
  readonly accepted: boolean;
  readonly duplicate: boolean;
  readonly sessionId: string;
  readonly position: number;
  readonly extracted?: readonly BeliefOut[];
  readonly extractionError: string | null;
}
