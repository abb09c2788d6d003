/** The `mem01` command line: commander wiring, exit codes and one-line errors. */

import { sanitize } from '@mem01/engine/binding-kit';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { migrateCommand, supportedSchemaVersion } from './commands/migrate.js';
import {
  beliefsCommand,
  doctorCommand,
  historyCommand,
  parseKinds,
  parseSession,
  parseStatuses,
  recallCommand,
  usageCommand,
  usersCommand,
} from './commands/read.js';
import { exportUser, importRecords, readExportFile, validationProgress } from './commands/transfer.js';
import {
  correctCommand,
  eraseCommand,
  forgetCommand,
  reviewCommand,
  summarizeCommand,
} from './commands/write.js';
import { type GlobalOptions, parseEmbedderChoice, withContext } from './context.js';
import { describeForCli, EXIT, UsageError } from './errors.js';
import { ExportFormatError } from './export-format.js';
import { inspectCommand } from './inspect/command.js';
import { type CliIo, processIo } from './io.js';
import { resolveStoreTarget } from './store-target.js';

export const CLI_VERSION = '0.1.0';

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Builds the commander program writing to `io`. */
export function createProgram(io: CliIo): Command {
  const program = new Command('mem01');
  program
    .description('See, correct, export and erase what an agent believes about its users.')
    .version(CLI_VERSION, '-V, --version')
    .option(
      '--db <path-or-url>',
      'SQLite file path, or a postgres:// URL (default: DATABASE_URL, else ~/.mem01/memory.db)',
    )
    .addOption(new Option('--store <kind>', 'store kind').choices(['sqlite', 'postgres']))
    .option('--pg-schema <name>', 'Postgres schema holding the mem01 tables (default mem01)')
    .option(
      '-n, --namespace <namespace>',
      'namespace (project or agent) of the user; default the default namespace',
    )
    .option('--json', 'machine-readable JSON output')
    .addOption(
      new Option(
        '--embedder <kind>',
        "embedder the data was written with (default: the agent's, OpenAI with OPENAI_API_KEY, else local)",
      ).choices(['openai', 'local', 'none']),
    )
    .showHelpAfterError('(run mem01 --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      // commander echoes a bad option value back, and a value can be a pasted key.
      writeErr: (s) => io.stderr.write(sanitize(s)),
      // Every error line reads `error [code]: message`, commander's usage errors too.
      outputError: (s, write) => write(s.replace(/^error: /, 'error [usage]: ')),
    })
    .exitOverride();

  const g = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;

  program
    .command('users')
    .description('the users, with counts of their beliefs by status')
    .action(async (_o, cmd: Command) => withContext(io, g(cmd), usersCommand, { needsEmbedder: false }));

  program
    .command('beliefs')
    .description("a table of a user's beliefs")
    .requiredOption('-u, --user <id>', 'user id')
    .option(
      '-s, --status <statuses>',
      'active, pending, superseded, retracted, forgotten, or all (comma-separated, repeatable)',
      collect,
    )
    .option(
      '-k, --kind <kinds...>',
      'only these kinds, e.g. summary, episode, reply, fact (space- or comma-separated, repeatable; default every kind)',
    )
    .option(
      '--session <id>',
      'only what one conversation (session) holds or was drawn from, e.g. its summary',
    )
    .action(
      async (o: { user: string; status?: string[]; kind?: string[]; session?: string }, cmd: Command) => {
        // Usage errors before the store is opened.
        const filter = { kinds: parseKinds(o.kind), session: parseSession(o.session) };
        const statuses = parseStatuses(o.status);
        return withContext(io, g(cmd), (ctx) => beliefsCommand(ctx, o.user, statuses, filter), {
          needsEmbedder: false,
        });
      },
    );

  program
    .command('recall')
    .description('the ranked beliefs for a query and the exact block that would be injected')
    .requiredOption('-u, --user <id>', 'user id')
    .argument('<query>', 'the query, e.g. the user message')
    .option('--explain', 'show the score of each signal')
    .option('--limit <n>', 'at most this many beliefs', positiveInt('--limit'))
    .option('--block-bytes <bytes>', 'size of the context block in UTF-8 bytes', positiveInt('--block-bytes'))
    // The earlier name of --block-bytes, deprecated: kept working, left out of the help.
    .addOption(new Option('--budget <bytes>').argParser(positiveInt('--budget')).hideHelp())
    .action(
      async (
        query: string,
        o: { user: string; explain?: boolean; limit?: number; blockBytes?: number; budget?: number },
        cmd: Command,
      ) => withContext(io, g(cmd), (ctx) => recallCommand(ctx, o.user, query, o)),
    );

  program
    .command('history')
    .description('the lifecycle of one belief, or of all beliefs of a user')
    .requiredOption('-u, --user <id>', 'user id')
    .option('--id <id>', 'one belief (its whole supersession chain)')
    .action(async (o: { user: string; id?: string }, cmd: Command) =>
      withContext(io, g(cmd), (ctx) => historyCommand(ctx, o.user, o.id), { needsEmbedder: false }),
    );

  program
    .command('usage')
    .description(
      "a user's budgets in the current window: extractor and embedder calls and tokens, active beliefs, against the MEM01_* limits",
    )
    .requiredOption('-u, --user <id>', 'user id')
    .action(async (o: { user: string }, cmd: Command) =>
      withContext(io, g(cmd), (ctx) => usageCommand(ctx, o.user), { needsEmbedder: false }),
    );

  program
    .command('correct')
    .description("replace a belief with the user's correction (the old one stays in history)")
    .requiredOption('-u, --user <id>', 'user id')
    .requiredOption('--id <id>', 'belief id')
    .argument('<text>', 'the corrected statement')
    .action(async (text: string, o: { user: string; id: string }, cmd: Command) =>
      withContext(io, g(cmd), (ctx) => correctCommand(ctx, o.user, o.id, text)),
    );

  program
    .command('forget')
    .description("remove a belief's content from every read path (a content-free tombstone stays)")
    .requiredOption('-u, --user <id>', 'user id')
    .requiredOption('--id <id>', 'belief id')
    .action(async (o: { user: string; id: string }, cmd: Command) =>
      withContext(io, g(cmd), (ctx) => forgetCommand(ctx, o.user, o.id), { needsEmbedder: false }),
    );

  program
    .command('summarize')
    .description(
      "write (or confirm, or supersede) the dated summary of one conversation from its turns still remembered, with the engine's summarizer",
    )
    .requiredOption('-u, --user <id>', 'user id')
    .argument('<session>', 'the conversation (session) id')
    .action(async (session: string, o: { user: string }, cmd: Command) => {
      if (session.trim() === '') throw new UsageError('summarize needs a conversation (session) id');
      return withContext(io, g(cmd), (ctx) => summarizeCommand(ctx, o.user, session));
    });

  for (const action of ['approve', 'reject'] as const) {
    program
      .command(action)
      .description(
        action === 'approve' ? 'make a pending belief active' : 'reject a pending belief (it is retracted)',
      )
      .requiredOption('-u, --user <id>', 'user id')
      .requiredOption('--id <id>', 'belief id')
      .action(async (o: { user: string; id: string }, cmd: Command) =>
        withContext(io, g(cmd), (ctx) => reviewCommand(ctx, action, o.user, o.id), { needsEmbedder: false }),
      );
  }

  program
    .command('erase')
    .description(
      'hard delete of everything of a user in every namespace, or of every user with --all (asks for confirmation)',
    )
    .option('-u, --user <id>', 'user id')
    .option('--all', 'every user in the store')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (o: { user?: string; all?: boolean; yes?: boolean }, cmd: Command) => {
      if ((o.user === undefined) === (o.all !== true)) {
        throw new UsageError('erase needs exactly one of --user <id> or --all');
      }
      const who = o.all === true ? ({ all: true } as const) : { userId: o.user as string };
      return withContext(io, g(cmd), (ctx) => eraseCommand(ctx, who, o.yes === true), {
        needsEmbedder: false,
      });
    });

  program
    .command('export')
    .description('versioned JSON Lines of a user: beliefs with lifecycle, provenance and embeddings')
    .requiredOption('-u, --user <id>', 'user id')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .action(async (o: { user: string; output?: string }, cmd: Command) =>
      withContext(io, g(cmd), async (ctx) => {
        if (!o.output) {
          await exportUser(ctx, o.user, io.stdout);
          return;
        }
        const { createWriteStream } = await import('node:fs');
        const file = createWriteStream(o.output, { flags: 'wx' });
        await new Promise<void>((resolve, reject) => {
          file.once('open', () => resolve());
          file.once('error', reject);
        });
        const n = await exportUser(ctx, o.user, file);
        await new Promise<void>((resolve, reject) =>
          file.end((err?: Error | null) => (err ? reject(err) : resolve())),
        );
        io.stderr.write(`exported ${n} belief(s) of ${o.user} to ${o.output}\n`);
      }),
    );

  program
    .command('import')
    .description('import an export file (every line is checked before anything is written; repeatable)')
    .argument('<file>', 'a mem01 export (.jsonl), or - for stdin')
    .action(async (file: string, _o, cmd: Command) => {
      const opts = g(cmd);
      resolveStoreTarget(opts, io.env); // usage errors before reading a large file
      const progress = validationProgress(io);
      let parsed: Awaited<ReturnType<typeof readExportFile>>;
      try {
        parsed = await readExportFile(io, file, progress.update);
      } finally {
        progress.stop();
      }
      await withContext(io, opts, (ctx) => importRecords(ctx, parsed, file), {
        needsEmbedder: false,
        create: true,
        dimensions: parsed.header.embedding.dimensions ?? undefined,
      });
    });

  program
    .command('migrate')
    .description('run the schema migrations and print them')
    .action(async (_o, cmd: Command) => migrateCommand(io, g(cmd)));

  program
    .command('doctor')
    .description('schema version, capabilities, outbox backlog and stale leases')
    .action(async (_o, cmd: Command) => {
      const opts = g(cmd);
      parseEmbedderChoice(opts.embedder);
      await withContext(
        io,
        opts,
        async (ctx) => doctorCommand(ctx, await supportedSchemaVersion(ctx.target)),
        {
          dimensionCheck: 'report',
        },
      );
    });

  program
    .command('inspect')
    .description('a local web page to browse, search, correct and forget beliefs (127.0.0.1 only)')
    .option('--port <port>', 'port to listen on (default: a random free port)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new InvalidArgumentError('--port must be 0..65535');
      return n;
    })
    .action(async (o: { port?: number }, cmd: Command) =>
      withContext(io, g(cmd), (ctx) => inspectCommand(ctx, o.port ?? 0), { announce: false }),
    );

  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = createProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      ) {
        return EXIT.ok;
      }
      // commander has printed its message already.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof ExportFormatError) {
      io.stderr.write(`error [invalid_export]: ${err.message}; nothing was imported\n`);
      return EXIT.runtime;
    }
    const { line, exitCode } = describeForCli(err);
    io.stderr.write(`${line}\n`);
    return exitCode;
  }
}

export { UsageError };
