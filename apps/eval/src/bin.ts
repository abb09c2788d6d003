#!/usr/bin/env node
/** Entry point of `pnpm eval:locomo`. */
import { CommanderError } from 'commander';
import { parseArgs, runCli } from './cli.js';

try {
  await runCli(parseArgs(process.argv.slice(2)));
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.exitCode !== 0) {
      console.error(err.message);
      console.error('(run pnpm eval:locomo --help for usage)');
    }
    // A usage error exits 2, as the demo and the mem01 CLI do.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    process.exitCode = 1;
  }
}
