/** `mem01 export` and `mem01 import`: versioned JSON Lines, lossless, idempotent, all-or-nothing. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type Belief, type FullStore, InvalidRecordError, type Scope } from '@mem01/engine';
import { type BeliefInsert, resolveConfig, validateImportRecords } from '@mem01/engine/binding-kit';
import cliProgress from 'cli-progress';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import {
  beliefLine,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportFormatError,
  type ExportHeader,
  headerLine,
  parseBeliefLine,
  parseHeader,
} from '../export-format.js';
import { type CliIo, type CliOutput, writeOut } from '../io.js';
import { listAll, print, printJson } from './read.js';

/** The stored embeddings of the beliefs (forgotten ones have none), read back from the store. */
async function embeddingsFor(
  store: FullStore,
  scope: Scope,
  beliefs: readonly Belief[],
): Promise<{ vectors: Map<string, Float32Array>; source: ExportHeader['embedding']['source'] }> {
  const ids = beliefs.filter((b) => b.status !== 'forgotten').map((b) => b.id);
  const vectors = new Map<string, Float32Array>();
  const batch = 500;
  for (let i = 0; i < ids.length; i += batch) {
    for (const [id, v] of await store.getEmbeddings(scope, ids.slice(i, i + batch))) vectors.set(id, v);
  }
  return { vectors, source: vectors.size > 0 ? 'store' : 'none' };
}

/** Writes the export of a user (every namespace, or `--namespace`'s) to `output`. Returns the belief count. */
export async function exportUser(ctx: CliContext, userId: string, output: CliOutput): Promise<number> {
  const scopes: Scope[] =
    ctx.namespace !== undefined
      ? [ctx.scope(userId)]
      : (await ctx.store.listScopes()).filter((s) => s.scope.userId === userId).map((s) => s.scope);
  const parts: { beliefs: Belief[]; vectors: Map<string, Float32Array> }[] = [];
  let source: ExportHeader['embedding']['source'] = 'none';
  let dimensions: number | null = null;
  for (const scope of scopes) {
    // Oldest first, so a reader sees a belief before the one that supersedes it.
    const beliefs = (
      await listAll(ctx, scope, ['active', 'pending', 'superseded', 'retracted', 'forgotten'])
    ).reverse();
    const emb = await embeddingsFor(ctx.store, scope, beliefs);
    if (emb.vectors.size > 0) source = emb.source;
    for (const v of emb.vectors.values()) dimensions = v.length;
    parts.push({ beliefs, vectors: emb.vectors });
  }
  const count = parts.reduce((n, p) => n + p.beliefs.length, 0);
  const header: ExportHeader = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    scope: { userId, namespace: ctx.namespace ?? null },
    store: ctx.store.name,
    embedding: {
      dimensions,
      source,
      model: source === 'store' ? (ctx.embedder?.model ?? null) : null,
    },
    beliefs: count,
  };
  await writeOut(output, headerLine(header));
  for (const part of parts) {
    for (const b of part.beliefs) await writeOut(output, beliefLine(b, part.vectors.get(b.id) ?? null));
  }
  return count;
}

export interface ParsedExport {
  readonly header: ExportHeader;
  readonly records: BeliefInsert[];
  /** The file line of each record. */
  readonly lines: readonly number[];
}

/**
 * Reads and checks every line of an export file before anything is written (even a store file created): the file
 * format here, each belief with the engine's own import checks (`validateImportRecords`), which the engine's
 * `importRecords` applies again. Throws `ExportFormatError` with the line number of the first bad line.
 */
export async function readExportFile(
  io: CliIo,
  path: string,
  onProgress?: (done: number, total: number) => void,
): Promise<ParsedExport> {
  const input = path === '-' ? io.stdin : createReadStream(path, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    if (path === '-') return resolve();
    (input as NodeJS.ReadableStream).once('open', () => resolve());
    (input as NodeJS.ReadableStream).once('error', reject);
  });
  try {
    await opened;
  } catch (err) {
    throw new CliError(
      'io',
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const rl = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let header: ExportHeader | null = null;
  const records: BeliefInsert[] = [];
  const lines: number[] = [];
  let lineNo = 0;
  let dims: number | null = null;
  for await (const raw of rl) {
    lineNo++;
    if (lineNo === 1) {
      header = parseHeader(raw.replace(/^\uFEFF/, ''), 1);
      onProgress?.(0, header.beliefs);
      continue;
    }
    if (raw.trim() === '') continue;
    if (!header) throw new ExportFormatError(lineNo, 'missing header');
    const rec = parseBeliefLine(raw, lineNo, header);
    if (rec.embedding) {
      if (dims !== null && rec.embedding.length !== dims) {
        throw new ExportFormatError(
          lineNo,
          `embedding has ${rec.embedding.length} dimensions, earlier lines have ${dims}`,
        );
      }
      dims = rec.embedding.length;
    }
    records.push(rec);
    lines.push(lineNo);
    onProgress?.(records.length, header.beliefs);
  }
  if (!header) throw new ExportFormatError(1, 'the file is empty (expected the mem01-export header)');
  if (records.length !== header.beliefs) {
    throw new ExportFormatError(
      lineNo + 1,
      `the header announces ${header.beliefs} beliefs but the file has ${records.length} (truncated or edited file)`,
    );
  }
  const parsed = { header, records, lines };
  try {
    validateImportRecords(records, header.scope, resolveConfig(undefined, null).maxTextBytes);
  } catch (err) {
    throw atLine(parsed, err);
  }
  return parsed;
}

/** A bad record's `InvalidRecordError` as an `ExportFormatError` at the record's line; any other error as it is. */
function atLine(parsed: ParsedExport, err: unknown): unknown {
  if (!(err instanceof InvalidRecordError)) return err;
  return new ExportFormatError(parsed.lines[err.index] ?? 0, `${err.recordField}: ${err.reason}`);
}

/** Imports checked records through the engine (ids already present are skipped). */
export async function importRecords(ctx: CliContext, parsed: ParsedExport, path: string): Promise<void> {
  const bar =
    ctx.io.stderr.isTTY && parsed.records.length > 0
      ? new cliProgress.SingleBar(
          {
            stream: ctx.io.stderr as NodeJS.WritableStream,
            format: 'writing  [{bar}] {value}/{total} beliefs',
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  bar?.start(parsed.records.length, 0);
  let result: { inserted: number; skipped: number };
  try {
    // One call: the engine checks every record, then the store applies them all-or-nothing.
    const { userId, namespace } = parsed.header.scope;
    result = await ctx.engine
      .importRecords({ userId, namespace: namespace ?? undefined }, parsed.records, {
        anyNamespace: namespace === null,
      })
      .catch((err: unknown) => {
        throw atLine(parsed, err);
      });
    bar?.update(parsed.records.length);
  } finally {
    bar?.stop();
  }
  const users = new Set(parsed.records.map((r) => r.belief.scope.userId));
  if (ctx.json) {
    await printJson(ctx, { action: 'import', file: path, ...result, users: [...users] });
    return;
  }
  await print(
    ctx,
    `imported ${path}: ${result.inserted} belief(s) added, ${result.skipped} already present (skipped) for user ${[...users].join(', ') || parsed.header.scope.userId}\n`,
  );
}

/** A progress bar for the validation pass, on a terminal only. */
export function validationProgress(io: CliIo): {
  update: (done: number, total: number) => void;
  stop: () => void;
} {
  if (!io.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      stream: io.stderr as NodeJS.WritableStream,
      format: 'checking [{bar}] {value}/{total} lines',
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, done);
        started = true;
      } else bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
