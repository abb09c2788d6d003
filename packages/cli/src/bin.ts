#!/usr/bin/env node
import { run } from './program.js';

// Closed pipes (e.g. `mem01 export … | head`) are not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

process.exitCode = await run(process.argv.slice(2));
