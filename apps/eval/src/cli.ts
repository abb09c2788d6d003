/** `pnpm eval:locomo`: argument parsing and the run, callable in-process for tests. */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { type EngineConfigInput, InvalidInputError } from '@mem01/engine';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import { bm25Baseline } from './bm25.js';
import { type LocomoData, parseLocomo, sliceData } from './locomo-data.js';
import {
  ASSISTANT_TURNS,
  type AssistantTurns,
  type ClockMode,
  type EvalResult,
  runLocomo,
  TURN_FORMATS,
  type TurnFormat,
} from './locomo-eval.js';
import { DEFAULT_DATA, LOCAL_RESULTS_DIR, RESULTS_DIR } from './paths.js';
import { DEV60_SHA256, LOCOMO10_SHA256 } from './reference.js';
import { buildReport, type LocomoReport, recallTable, renderMarkdown, verdicts } from './report.js';
import {
  defaultEmbedderDimensions,
  ignoredVariables,
  isSessionDefault,
  openStore,
  openSystem,
  providerEnv,
  resolveProvider,
  STORE_KINDS,
  type StoreKind,
  type Variant,
  variantLabel,
} from './systems.js';

export { DEFAULT_DATA, LOCAL_RESULTS_DIR, RESULTS_DIR } from './paths.js';

export interface CliOptions {
  readonly data: string;
  readonly store: StoreKind;
  readonly k: number[];
  /** JSON report path, or `-` for stdout. */
  readonly json?: string | undefined;
  /** Markdown report path (default: beside the JSON; none with `--json -` unless given). */
  readonly markdown?: string | undefined;
  readonly limitConversations?: number | undefined;
  readonly limitSessions?: number | undefined;
  /** First N turns of each conversation (questions whose evidence lies beyond are left out). */
  readonly limitTurns?: number | undefined;
  /** First N questions of each conversation. */
  readonly limitQuestions?: number | undefined;
  /** Only the conversations with these sample ids. */
  readonly conversations?: readonly string[] | undefined;
  readonly episodic: 'on' | 'off' | 'both';
  readonly turnFormat: TurnFormat;
  readonly clock: ClockMode;
  /** Assistant turns of a file with real roles: memSession's treatment, kept as labelled episodes, or both. */
  readonly assistantTurns: AssistantTurns | 'both';
  readonly engineConfig?: EngineConfigInput | undefined;
  readonly provider?: 'local' | 'openai' | undefined;
  readonly progress: boolean;
  readonly collapseCovered: boolean;
  /** Also run the question-played mode (default true). */
  readonly playQuestions: boolean;
  /** Without `--json`: write the committed reports in `bench/results` (default: the untracked `bench/results/local`). */
  readonly updateResults?: boolean | undefined;
}

export interface CliIo {
  /** The caller's environment; only the variables that select the models are passed on. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Human-readable result lines; default stdout (stderr with `--json -`). */
  readonly out?: ((line: string) => void) | undefined;
  /** Notes and, with `--json -`, the result lines; default stderr. */
  readonly err?: ((line: string) => void) | undefined;
  /** Where `--json -` writes the JSON; default `process.stdout`. */
  readonly writeStdout?: ((text: string) => void) | undefined;
  /** Progress bar stream; default `process.stderr` (a bar is drawn only when it is a TTY). */
  readonly progressStream?: NodeJS.WriteStream | undefined;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function idList(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0) throw new InvalidArgumentError('must be a comma-separated list of sample ids');
  return ids;
}

function kList(value: string): number[] {
  const ks = value.split(',').map((s) => Number(s.trim()));
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 1000)) {
    throw new InvalidArgumentError('must be a comma-separated list of integers between 1 and 1000');
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}

function jsonObject(value: string): EngineConfigInput {
  try {
    const v = JSON.parse(value) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    return v as EngineConfigInput;
  } catch {
    throw new InvalidArgumentError('must be a JSON object of engine config overrides');
  }
}

/** Parses arguments (without `node` and the script). Throws commander's error on bad input. */
export function parseArgs(argv: readonly string[]): CliOptions {
  const program = new Command()
    .name('eval:locomo')
    .description('Retrieval-only evaluation of mem01 on LoCoMo-shaped data (no LLM needed).')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined })
    .option('--data <path>', 'LoCoMo-shaped JSON file, or gzip-compressed JSON (.json.gz)', DEFAULT_DATA)
    .addOption(new Option('--store <kind>', 'store under test').choices(STORE_KINDS).default('memory'))
    .option('--k <list>', 'cut-offs, comma-separated', kList, [5, 10])
    .option('--json <file>', 'JSON report path (the Markdown report is written beside it, .md); - for stdout')
    .option('--markdown <file>', 'Markdown report path (default: beside the JSON; none with --json -)')
    .option('--limit-conversations <n>', 'first N conversations only', positiveInt)
    .option('--conversations <ids>', 'only the conversations with these sample ids, comma-separated', idList)
    .option(
      '--limit-sessions <n>',
      'first N sessions of each conversation (and their questions) only',
      positiveInt,
    )
    .option(
      '--limit-turns <n>',
      'first N turns of each conversation (and the questions answered in them) only',
      positiveInt,
    )
    .option('--limit-questions <n>', 'first N questions of each conversation only', positiveInt)
    .addOption(
      new Option(
        '--episodic <mode>',
        'the memSession default with episodes (on), beliefs only (off), or both',
      )
        .choices(['on', 'off', 'both'])
        .default('both'),
    )
    .addOption(
      new Option('--turn-format <format>', 'how a turn is written for the engine')
        .choices(TURN_FORMATS)
        .default('date-speaker'),
    )
    .addOption(
      new Option(
        '--assistant-turns <mode>',
        'assistant turns of a file with user/assistant speakers: context (as memSession), episodes (kept, labelled), or both',
      )
        .choices([...ASSISTANT_TURNS, 'both'])
        .default('context'),
    )
    .addOption(
      new Option('--clock <mode>', 'engine clock while ingesting: wall, or each session date')
        .choices(['wall', 'session'])
        .default('wall'),
    )
    .option(
      '--engine-config <json>',
      'engine config overrides, e.g. {"ranking":{"halfLifeDays":3650}}',
      jsonObject,
    )
    .addOption(
      new Option(
        '--provider <name>',
        'models: local, or openai (default: openai when OPENAI_API_KEY is set)',
      ).choices(['local', 'openai']),
    )
    .option(
      '--collapse-covered',
      'simulate a proposed engine change: drop results whose turns are already covered',
    )
    .option(
      '--update-results',
      'without --json: write the committed reports in bench/results (default: bench/results/local, untracked)',
    )
    .option(
      '--no-play-questions',
      'skip the question-played mode (each question also asked once before, as a user turn of its own)',
    )
    .option('--no-progress', 'no progress bar');
  program.parse([...argv], { from: 'user' });
  const o = program.opts();
  return {
    data: resolve(String(o.data)),
    store: o.store as StoreKind,
    k: o.k as number[],
    json: o.json === undefined ? undefined : o.json === STDOUT ? STDOUT : resolve(String(o.json)),
    markdown: o.markdown === undefined ? undefined : resolve(String(o.markdown)),
    limitConversations: o.limitConversations as number | undefined,
    limitSessions: o.limitSessions as number | undefined,
    limitTurns: o.limitTurns as number | undefined,
    limitQuestions: o.limitQuestions as number | undefined,
    conversations: o.conversations as string[] | undefined,
    episodic: o.episodic as CliOptions['episodic'],
    turnFormat: o.turnFormat as TurnFormat,
    clock: o.clock as ClockMode,
    assistantTurns: o.assistantTurns as CliOptions['assistantTurns'],
    engineConfig: o.engineConfig as EngineConfigInput | undefined,
    provider: o.provider as CliOptions['provider'],
    progress: o.progress as boolean,
    collapseCovered: o.collapseCovered === true,
    playQuestions: o.playQuestions !== false,
    updateResults: o.updateResults === true,
  };
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Reads and checks a data file, JSON or gzip-compressed JSON (told by its first bytes, whatever its name);
 * `InvalidInputError` for a file that cannot be read, unpacked or parsed, or is not LoCoMo-shaped. The sha256 is of
 * the file's bytes as stored (the data README gives the compressed file's).
 */
export async function loadData(path: string): Promise<{ data: LocomoData; sha256: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new InvalidInputError('--data', `cannot read ${path}`, { cause: err });
  }
  const gzipped = bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1];
  if (!gzipped && /\.gz$/i.test(path))
    throw new InvalidInputError('--data', `${path} is not gzip-compressed`);
  let text: string;
  try {
    text = (gzipped ? await promisify(gunzip)(bytes) : bytes).toString('utf8');
  } catch (err) {
    throw new InvalidInputError('--data', `${path} is not valid gzip`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError('--data', `${path} is not JSON${gzipped ? ' once unpacked' : ''}`, {
      cause: err,
    });
  }
  return { data: parseLocomo(doc), sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The report's default name: `locomo-<store>`, `longmemeval-dev60-<store>` for the dev set, else `longmemeval-<store>`. */
export function reportName(data: LocomoData, sha256: string, store: StoreKind): string {
  if (data.categories.dataset === 'locomo') return `locomo-${store}`;
  return sha256 === DEV60_SHA256 ? `longmemeval-dev60-${store}` : `longmemeval-${store}`;
}

/** Where a report goes without `--json`: the untracked `bench/results/local`, or `bench/results` with `--update-results`. */
export function defaultJsonPath(name: string, updateResults = false): string {
  return resolve(updateResults ? RESULTS_DIR : LOCAL_RESULTS_DIR, `${name}.json`);
}

/** `--json -`: the JSON report goes to stdout and nothing else does. */
export const STDOUT = '-';

/**
 * Runs the evaluation as the options say and writes the reports. Returns the report and where it went (`-` for
 * stdout; `markdownPath` null when no Markdown was written).
 */
export async function runCli(
  options: CliOptions,
  io: CliIo = {},
): Promise<{ report: LocomoReport; jsonPath: string; markdownPath: string | null }> {
  const toStdout = options.json === STDOUT;
  const err = io.err ?? ((line: string) => console.error(line));
  // With the JSON on stdout, every human line goes to stderr.
  const out = toStdout ? err : (io.out ?? ((line: string) => console.log(line)));
  const writeStdout = io.writeStdout ?? ((text: string) => process.stdout.write(text));
  const { data: full, sha256 } = await loadData(options.data);
  const sliced =
    options.limitConversations !== undefined ||
    options.limitSessions !== undefined ||
    options.limitTurns !== undefined ||
    options.limitQuestions !== undefined ||
    options.conversations !== undefined;
  const data = sliced
    ? sliceData(full, {
        conversations: options.limitConversations,
        sessions: options.limitSessions,
        turns: options.limitTurns,
        questions: options.limitQuestions,
        ids: options.conversations,
      })
    : full;
  const callerEnv = io.env ?? process.env;
  const provider = await resolveProvider(callerEnv, options.provider);
  const env = providerEnv(callerEnv, provider);
  const ignoredEnv = ignoredVariables(callerEnv);
  if (ignoredEnv.length > 0) {
    err(
      `note: ${ignoredEnv.join(', ')} ${ignoredEnv.length === 1 ? 'is' : 'are'} set but not passed to the runtime (the headline is memSession's default, on the eval's own store); use --engine-config to measure a tuning`,
    );
  }
  const dimensions = await defaultEmbedderDimensions(env);
  const episodicModes = options.episodic === 'both' ? [true, false] : [options.episodic === 'on'];
  const realRoles = data.conversations.some((c) => c.realRoles);
  if (options.assistantTurns !== 'context' && !realRoles) {
    throw new InvalidInputError(
      '--assistant-turns',
      'this file has no assistant turns (its speakers are not "user" and "assistant")',
    );
  }
  const assistantModes: AssistantTurns[] =
    options.assistantTurns === 'both' ? ['context', 'episodes'] : [options.assistantTurns];
  const variants: Variant[] = episodicModes.flatMap((episodic) =>
    assistantModes.map((assistantTurns) => ({
      episodic,
      engineConfig: options.engineConfig,
      clock: options.clock,
      collapseCovered: options.collapseCovered,
      ...(assistantTurns === 'episodes' ? { assistantTurns } : {}),
    })),
  );
  const stream = io.progressStream ?? process.stderr;
  const bar =
    options.progress && stream.isTTY
      ? new SingleBar({
          stream,
          format: 'locomo {run} |{bar}| {value}/{total} {phase} {conv}',
          hideCursor: true,
          clearOnComplete: true,
        })
      : null;
  const perRun = data.report.turns + data.report.questions;
  bar?.start(perRun * variants.length, 0, { run: '', phase: '', conv: '' });
  const results: EvalResult[] = [];
  let storeDescription = options.store as string;
  let extractor = '';
  let embedder = '';
  const startedAt = new Date().toISOString();
  const wallStart = performance.now();
  try {
    for (const variant of variants) {
      const handle = await openStore(options.store, { dimensions });
      storeDescription = handle.description;
      try {
        const system = await openSystem(variant, handle, env);
        extractor ||= system.description.extractor;
        embedder ||= system.description.embedder ?? 'none';
        try {
          const runName = variant.episodic ? 'episodes' : 'beliefs';
          results.push(
            await runLocomo({
              data,
              system,
              ks: options.k,
              label: variantLabel(variant),
              sessionDefault: isSessionDefault(variant),
              turnFormat: options.turnFormat,
              clock: options.clock,
              assistantTurns: variant.assistantTurns ?? 'context',
              collapseCovered: options.collapseCovered,
              playQuestions: options.playQuestions,
              onProgress: (e) =>
                bar?.increment(e.phase === 'ingest' ? e.turns : e.questions, {
                  run: runName,
                  phase: e.phase,
                  conv: e.conversation,
                }),
            }),
          );
        } finally {
          await system.close();
        }
      } finally {
        await handle.close();
      }
    }
  } finally {
    bar?.stop();
  }
  const baseline = bm25Baseline(data, options.k);
  const report = buildReport(
    {
      dataPath: options.data,
      dataSha256: sha256,
      sliced,
      store: storeDescription,
      extractor,
      embedder,
      startedAt,
      wallSeconds: Math.round((performance.now() - wallStart) / 100) / 10,
      ...(options.engineConfig ? { engineConfig: options.engineConfig } : {}),
      ...(ignoredEnv.length > 0 ? { ignoredEnv } : {}),
    },
    results,
    baseline,
    { isLocomo10: sha256 === LOCOMO10_SHA256 },
  );
  const json = `${JSON.stringify(report, null, 2)}\n`;
  let jsonPath: string;
  let markdownPath: string | null;
  if (toStdout) {
    jsonPath = STDOUT;
    markdownPath = options.markdown ?? null;
  } else {
    jsonPath =
      options.json ?? defaultJsonPath(reportName(data, sha256, options.store), options.updateResults);
    markdownPath = options.markdown ?? `${jsonPath.replace(/\.json$/i, '')}.md`;
    await mkdir(dirname(jsonPath), { recursive: true });
    await writeFile(jsonPath, json);
  }
  if (markdownPath !== null) {
    await mkdir(dirname(markdownPath), { recursive: true });
    await writeFile(markdownPath, renderMarkdown(report));
  }
  out(recallTable(report.results, baseline));
  out('');
  for (const line of verdicts(report)) out(`- ${line}`);
  for (const r of report.results) {
    out(
      `- ${r.label}: ingest ${(r.ingest.totalMs / 1000).toFixed(1)} s (${r.ingest.msPerTurn.toFixed(2)} ms/turn, ${r.ingest.failures} failures, ${r.ingest.splitTurns} split, ${r.ingest.refusedTurns} refused), recall p50 ${r.recall.p50Ms.toFixed(2)} ms, p95 ${r.recall.p95Ms.toFixed(2)} ms; row wall ${(r.wallMs / 1000).toFixed(1)} s, CPU ${(r.cpuMs / 1000).toFixed(1)} s, load ${r.loadAverage.join('/')}`,
    );
  }
  out(`- wall time ${report.info.wallSeconds} s (every row, the BM25 baseline included)`);
  out(`wrote ${toStdout ? 'the JSON to stdout' : jsonPath}${markdownPath ? ` and ${markdownPath}` : ''}`);
  if (toStdout) writeStdout(json);
  return { report, jsonPath, markdownPath };
}
