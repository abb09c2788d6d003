/** `mem01 migrate`: brings the store's schema to this version of mem01 and says what changed. */
import { existsSync } from 'node:fs';
import { loadPostgresStore, openStoreTarget, type StoreTarget } from '@mem01/runtime';
import { type GlobalOptions, quietLogger } from '../context.js';
import { type CliIo, writeOut } from '../io.js';
import { describeTarget, resolveStoreTarget } from '../store-target.js';

/** The schema version this mem01 writes for the target's kind. */
export async function supportedSchemaVersion(target: StoreTarget): Promise<number | null> {
  const v =
    target.kind === 'sqlite'
      ? (await import('@mem01/store-sqlite')).SQLITE_SCHEMA_VERSION
      : (await loadPostgresStore()).POSTGRES_SCHEMA_VERSION;
  return typeof v === 'number' ? v : null;
}

/** The schema version of an existing SQLite file, read without migrating it; null for a new file. */
async function sqliteVersionBefore(path: string): Promise<number | null> {
  if (!existsSync(path)) return null;
  // Through the store's loader: on a Node.js without node:sqlite it throws the clear UnsupportedRuntimeError.
  const { DatabaseSync } = (await import('@mem01/store-sqlite')).loadNodeSqlite();
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() as
      | { value?: unknown }
      | undefined;
    return row?.value === undefined ? 0 : Number(row.value);
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

/** The SQLite migration steps between two versions (Postgres migrations are run by kysely's Migrator). */
async function migrationSteps(
  target: StoreTarget,
  before: number | null,
  after: number,
): Promise<{ version: number; description: string }[]> {
  if (target.kind !== 'sqlite') return [];
  const { MIGRATIONS } = await import('@mem01/store-sqlite');
  return MIGRATIONS.filter((m) => m.version > (before ?? 0) && m.version <= after).map((m) => ({
    version: m.version,
    description: m.description,
  }));
}

export async function migrateCommand(io: CliIo, opts: GlobalOptions): Promise<void> {
  const target = resolveStoreTarget(opts, io.env);
  const path = target.kind === 'sqlite' ? target.path : null;
  const where = describeTarget(target);
  const before = path !== null ? await sqliteVersionBefore(path) : null;
  const supported = await supportedSchemaVersion(target);
  // Opening a store runs its pending migrations, each step in its own transaction.
  const store = await openStoreTarget(target, { migrate: true, openRetryMs: 2000, logger: quietLogger(io) });
  let after: number;
  try {
    after = (await store.info()).schemaVersion;
  } finally {
    await store.close();
  }
  const steps = await migrationSteps(target, before, after);
  const report = {
    store: where,
    before,
    after,
    supported,
    applied: before === null ? after : Math.max(0, after - before),
  };
  if (opts.json) {
    await writeOut(io.stdout, `${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const line =
    before === null
      ? target.kind === 'sqlite'
        ? `created ${where} at schema version ${after}`
        : `${where}: schema version ${after} (migrations applied as needed)`
      : before === after
        ? `${where}: schema version ${after}, already up to date`
        : `${where}: migrated schema version ${before} → ${after}`;
  let text = `${line}${supported !== null ? ` (this mem01 supports ${supported})` : ''}\n`;
  for (const s of steps) text += `  applied ${s.version}: ${s.description}\n`;
  await writeOut(io.stdout, text);
}
