import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The default database file: `$MEM01_HOME/memory.db`, or `~/.mem01/memory.db` when `MEM01_HOME` is unset or empty.
 */
export function defaultSqlitePath(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.MEM01_HOME?.trim();
  return join(home ? home : join(homedir(), '.mem01'), 'memory.db');
}
