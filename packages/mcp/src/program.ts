/**
 * The `mem01-mcp` command line: commander wiring, then one server over stdio (default) or Streamable HTTP.
 * In stdio mode stdout belongs to the protocol: everything else goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { ConfigError, Mem01Error, UnsupportedRuntimeError } from '@mem01/engine';
import { describeError, sanitize } from '@mem01/engine/binding-kit';
import { describeRuntime, serverSettings } from '@mem01/runtime';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { DEFAULT_MAX_BODY_BYTES } from './http-limits.js';
import { parseTokenSpecs, type TokenGrant } from './http-tokens.js';
import { openMcpRuntime } from './runtime.js';
import { createMemoryServer, MCP_SERVER_VERSION } from './server.js';
import { parseAllowUsers, UserAccess } from './user-access.js';

/** Default port of `--http`. */
export const DEFAULT_HTTP_PORT = 7337;

/** Parsed command-line options. */
export interface ProgramOptions {
  readonly user?: string | undefined;
  readonly namespace?: string | undefined;
  readonly multiUser?: boolean | undefined;
  readonly allowUsers?: string[] | undefined;
  readonly db?: string | undefined;
  readonly pgSchema?: string | undefined;
  readonly http?: boolean | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly token?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly allowedHosts?: string[] | undefined;
  readonly allowOrigin?: string[] | undefined;
  readonly maxBodyBytes?: number | undefined;
}

/** What the program talks to: its streams, environment and a way to wait for a stop signal. */
export interface ProgramIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be 0..65535');
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a whole number of bytes >= 1');
  return n;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Builds the commander program. `action` receives the parsed options. */
export function createProgram(io: ProgramIo, action: (options: ProgramOptions) => Promise<void>): Command {
  return new Command('mem01-mcp')
    .description(
      'mem01 long-term memory as an MCP server: tools add_memory, search_memory, list_memories, memory_history, update_memory, delete_memory (remember, recall, correct_memory and forget_memory remain as deprecated names).',
    )
    .version(MCP_SERVER_VERSION, '-V, --version')
    .option(
      '-u, --user <id>',
      'the user whose memory this server serves (default: MEM01_USER_ID, else your OS user name)',
    )
    .option('-n, --namespace <ns>', 'namespace (project or agent) of the user; default the default namespace')
    .option(
      '--multi-user',
      'take the user per call (userId argument), only ids matching --allow-users (and, over HTTP, the caller’s token)',
    )
    .option(
      '--allow-users <globs>',
      'with --multi-user: comma-separated glob patterns of user ids served ("team-*", "*" for all; default with --token-file: the users its tokens name)',
      collect,
    )
    .option(
      '--db <path-or-url>',
      'SQLite file or postgres:// URL (default: DATABASE_URL, else ~/.mem01/memory.db)',
    )
    .option('--pg-schema <name>', 'Postgres schema of the mem01 tables (default mem01)')
    .option('--http', 'serve Streamable HTTP at /mcp instead of stdio')
    .option('--host <host>', 'with --http: interface to bind', '127.0.0.1')
    .option('--port <port>', `with --http: port (0 for a free one)`, port, DEFAULT_HTTP_PORT)
    .option(
      '--token <token>',
      'with --http: the server token, serving every allowed user (default: MEM01_MCP_TOKEN, else generated and printed once unless --token-file is given)',
    )
    .option(
      '--token-file <path>',
      'with --http: per-user tokens, one "TOKEN:user1,user2" a line; each serves only the users it names (default: MEM01_MCP_TOKEN_FILE)',
    )
    .option('--allowed-hosts <names>', 'with --http: extra Host header names, comma-separated', collect)
    .option(
      '--allow-origin <origins>',
      'with --http: extra browser origins allowed (comma-separated, e.g. https://app.example); loopback origins always are',
      collect,
    )
    .option(
      '--max-body-bytes <n>',
      `with --http: largest request body (default ${DEFAULT_MAX_BODY_BYTES})`,
      positive,
    )
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride()
    .action(async (options: ProgramOptions) => action(options));
}

/**
 * The access policy the options and environment select. With per-user tokens and no `--allow-users`, a
 * multi-user server allows exactly the users its tokens name.
 */
export function accessFrom(
  options: ProgramOptions,
  env: ProgramIo['env'],
  grants: readonly TokenGrant[] = [],
): UserAccess {
  const user = options.user ?? serverSettings(env).userId;
  if (options.multiUser) {
    const allowUsers = parseAllowUsers(options.allowUsers ?? []);
    return new UserAccess({
      mode: 'multi',
      allowUsers: allowUsers.length > 0 ? allowUsers : [...new Set(grants.flatMap((g) => g.users ?? []))],
      defaultUserId: user,
      namespace: options.namespace,
    });
  }
  if (options.allowUsers?.length) throw new ConfigError('--allow-users needs --multi-user');
  return new UserAccess({
    mode: 'single',
    userId: user ?? userInfo().username,
    namespace: options.namespace,
  });
}

/**
 * Runs `mem01-mcp` until the client disconnects (stdio) or a signal stops it; returns the exit code.
 * `stop` resolves when the process is asked to stop (SIGINT/SIGTERM, or stdin closing for stdio).
 */
export async function run(argv: readonly string[], io: ProgramIo): Promise<number> {
  let code = 0;
  const program = createProgram(io, async (options) => {
    const server = serverSettings(io.env);
    const tokenFile = options.tokenFile ?? server.tokenFile;
    if (tokenFile !== undefined && !options.http) throw new ConfigError('--token-file needs --http');
    const grants = tokenFile === undefined ? [] : readTokenFile(tokenFile);
    const access = accessFrom(options, io.env, grants);
    // Refused before the store opens: a token that could serve no one is a mistake in the file.
    for (const g of grants) if (g.users) access.narrow(g.users);
    const runtime = await openMcpRuntime({
      db: options.db,
      pgSchema: options.pgSchema,
      env: io.env,
      logger: {
        info: (m) => io.stderr.write(`${m}\n`),
        warn: (m) => io.stderr.write(`${sanitize(m)}\n`),
      },
    });
    const who =
      access.mode === 'single'
        ? `user ${JSON.stringify(access.defaultUserId)}`
        : `users matching ${access.allowUsers.join(', ')}`;
    const what = `${who}${access.namespace ? ` (namespace ${JSON.stringify(access.namespace)})` : ''} from ${describeRuntime(runtime.description.runtime)}`;
    try {
      if (options.http) {
        const token = options.token ?? server.token;
        // Loaded for --http only: express and its middleware would slow every stdio start down.
        const { startHttpServer } = await import('./http-server.js');
        const http = await startHttpServer({
          engine: runtime.engine,
          access,
          host: options.host,
          port: options.port,
          token,
          tokens: grants,
          allowedHosts: splitList(options.allowedHosts),
          allowedOrigins: splitList(options.allowOrigin),
          maxBodyBytes: options.maxBodyBytes,
        });
        const credentials = [
          ...(http.token === undefined ? [] : ['a server token for every allowed user']),
          ...(grants.length > 0 ? [`${grants.length} per-user token(s)`] : []),
        ].join(' and ');
        io.stderr.write(`mem01-mcp: serving ${what} over Streamable HTTP (${credentials})\n`);
        io.stdout.write(`url: ${http.url}\n`);
        // The one place a secret is printed: a generated token, once, so the user can configure the client.
        if (http.tokenGenerated) io.stdout.write(`token: ${http.token}\n`);
        await stopSignal(false, io.stderr);
        await http.close();
      } else {
        const server = createMemoryServer({ engine: runtime.engine, access });
        const transport = new StdioServerTransport();
        const closed = new Promise<void>((resolve) => {
          transport.onclose = () => resolve();
        });
        await server.connect(transport);
        io.stderr.write(`mem01-mcp: serving ${what} over stdio\n`);
        await Promise.race([stopSignal(true, io.stderr), closed]);
        await server.close().catch(() => undefined);
      }
    } finally {
      // Drains extraction of what was accepted, then closes the store.
      await runtime.close();
    }
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    io.stderr.write(`mem01-mcp: ${oneLine(describeForCli(err))}\n`);
    // A setting or an installation to fix (a missing optional package) is the user's to change: exit code 2.
    code =
      err instanceof Mem01Error && ['config', 'invalid_input', 'missing_dependency'].includes(err.code)
        ? 2
        : 1;
  }
  return code;
}

/**
 * Resolves on SIGINT or SIGTERM, and (stdio) when stdin ends: the client has gone. While the process then drains,
 * one more signal is absorbed: a host that sends SIGTERM shortly after closing stdin (as the MCP SDK's client does,
 * after two seconds) lets the extraction of what was just accepted finish instead of leaving it claimed. A further
 * signal ends the process at once.
 */
function stopSignal(stdin: boolean, stderr: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const stop = () => {
      if (seen++ === 0) {
        if (stdin) process.stdin.off('end', stop);
        resolve();
      } else if (seen === 2) {
        stderr.write('mem01-mcp: finishing accepted writes; signal again to quit now\n');
      } else {
        process.exit(130);
      }
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (stdin) process.stdin.on('end', stop);
  });
}

/** Reads per-user tokens; the error names the file and line, never a token. */
function readTokenFile(path: string): TokenGrant[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `cannot read the token file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  return parseTokenSpecs(text, `token file ${path}`);
}

function splitList(values: readonly string[] | undefined): string[] | undefined {
  return values
    ?.flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

function describeForCli(err: unknown): string {
  // The store's own message advises library users (pass `{ store }` to memSession); a server's user needs a Node.
  if (err instanceof UnsupportedRuntimeError) {
    return `error [${err.code}]: mem01-mcp needs ${err.required}; this process runs ${err.found}. Run it with Node.js 22.13 or newer.`;
  }
  if (err instanceof Mem01Error) return `error [${err.code}]: ${err.message}`;
  return `error: ${describeError(err)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
