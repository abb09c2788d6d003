/** `pnpm eval:locomo`: argument parsing and the run, callable in-process for tests. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type EngineConfigInput, InvalidInputError } from '@mem01/engine';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import { type LocomoData, parseLocomo, sliceData } from './locomo-data.js';
import { type ClockMode, type EvalResult, runLocomo, TURN_FORMATS, type TurnFormat } from './locomo-eval.js';
import { DEFAULT_DATA, RESULTS_DIR } from './paths.js';
import { buildReport, type LocomoReport, recallTable, renderMarkdown, verdicts } from './report.js';
import { type Models, openModels, openStore, STORE_KINDS, type StoreKind } from './systems.js';

export { DEFAULT_DATA, RESULTS_DIR } from './paths.js';

export interface CliOptions {
  readonly data: string;
  readonly store: StoreKind;
  readonly k: number[];
  readonly json?: string | undefined;
  readonly limitConversations?: number | undefined;
  readonly limitSessions?: number | undefined;
  readonly episodic: 'on' | 'off' | 'both';
  readonly turnFormat: TurnFormat;
  readonly clock: ClockMode;
  readonly engineConfig?: EngineConfigInput | undefined;
  readonly provider?: 'local' | 'openai' | undefined;
  readonly progress: boolean;
  readonly collapseCovered: boolean;
}

export interface CliIo {
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  readonly out?: ((line: string) => void) | undefined;
  /** Progress bar stream; default `process.stderr` (a bar is drawn only when it is a TTY). */
  readonly progressStream?: NodeJS.WriteStream | undefined;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
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
    .option('--data <path>', 'LoCoMo-shaped JSON file', DEFAULT_DATA)
    .addOption(new Option('--store <kind>', 'store under test').choices(STORE_KINDS).default('memory'))
    .option('--k <list>', 'cut-offs, comma-separated', kList, [5, 10])
    .option('--json <file>', 'JSON report path (the Markdown report is written beside it, .md)')
    .option('--limit-conversations <n>', 'first N conversations only', positiveInt)
    .option(
      '--limit-sessions <n>',
      'first N sessions of each conversation (and their questions) only',
      positiveInt,
    )
    .addOption(
      new Option('--episodic <mode>', 'beliefs only (off), default recall with episodes (on), or both')
        .choices(['on', 'off', 'both'])
        .default('both'),
    )
    .addOption(
      new Option('--turn-format <format>', 'how a turn is written for the engine')
        .choices(TURN_FORMATS)
        .default('date-speaker'),
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
    .option('--no-progress', 'no progress bar');
  program.parse([...argv], { from: 'user' });
  const o = program.opts();
  return {
    data: resolve(String(o.data)),
    store: o.store as StoreKind,
    k: o.k as number[],
    json: o.json === undefined ? undefined : resolve(String(o.json)),
    limitConversations: o.limitConversations as number | undefined,
    limitSessions: o.limitSessions as number | undefined,
    episodic: o.episodic as CliOptions['episodic'],
    turnFormat: o.turnFormat as TurnFormat,
    clock: o.clock as ClockMode,
    engineConfig: o.engineConfig as EngineConfigInput | undefined,
    provider: o.provider as CliOptions['provider'],
    progress: o.progress as boolean,
    collapseCovered: o.collapseCovered === true,
  };
}

/** Reads and checks a data file; `InvalidInputError` for a file that is not LoCoMo-shaped. */
export async function loadData(path: string): Promise<LocomoData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InvalidInputError('--data', `cannot read ${path}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError('--data', `${path} is not JSON`, { cause: err });
  }
  return parseLocomo(doc);
}

/** Runs the evaluation as the options say and writes the reports. Returns the report and where it went. */
export async function runCli(
  options: CliOptions,
  io: CliIo = {},
): Promise<{ report: LocomoReport; jsonPath: string; markdownPath: string }> {
  const out = io.out ?? ((line: string) => console.log(line));
  const full = await loadData(options.data);
  const data =
    options.limitConversations !== undefined || options.limitSessions !== undefined
      ? sliceData(full, { conversations: options.limitConversations, sessions: options.limitSessions })
      : full;
  const models: Models = await openModels({ env: io.env, provider: options.provider });
  const modes = options.episodic === 'both' ? [false, true] : [options.episodic === 'on'];
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
  bar?.start(perRun * modes.length, 0, { run: '', phase: '', conv: '' });
  const results: EvalResult[] = [];
  let storeDescription = options.store as string;
  const startedAt = new Date().toISOString();
  try {
    for (const episodic of modes) {
      const handle = await openStore(options.store, { dimensions: models.dimensions });
      storeDescription = handle.description;
      try {
        const runName = episodic ? 'default' : 'beliefs';
        results.push(
          await runLocomo({
            data,
            system: {
              store: handle.store,
              extractor: models.extractor,
              embedder: models.embedder,
              settle: handle.settle,
            },
            ks: options.k,
            episodic,
            turnFormat: options.turnFormat,
            clock: options.clock,
            engineConfig: options.engineConfig,
            collapseCovered: options.collapseCovered,
            onProgress: (e) =>
              bar?.increment(e.phase === 'ingest' ? e.turns : e.questions, {
                run: runName,
                phase: e.phase,
                conv: e.conversation,
              }),
          }),
        );
      } finally {
        await handle.close();
      }
    }
  } finally {
    bar?.stop();
  }
  const report = buildReport(
    {
      dataPath: options.data,
      store: storeDescription,
      extractor: models.extractorName,
      embedder: models.embedderName,
      startedAt,
      ...(options.engineConfig ? { engineConfig: options.engineConfig } : {}),
    },
    results,
  );
  const jsonPath = options.json ?? resolve(RESULTS_DIR, `locomo-${options.store}.json`);
  const markdownPath = jsonPath.replace(/\.json$/i, '') + '.md';
  await mkdir(dirname(jsonPath), { recursive: true });
  await writeFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(markdownPath, renderMarkdown(report));
  out(recallTable(results));
  out('');
  for (const line of verdicts(report)) out(`- ${line}`);
  for (const r of results) {
    out(
      `- ${r.label}: ingest ${(r.ingest.totalMs / 1000).toFixed(1)} s (${r.ingest.msPerTurn.toFixed(2)} ms/turn, ${r.ingest.failures} failures), recall p50 ${r.recall.p50Ms.toFixed(2)} ms, p95 ${r.recall.p95Ms.toFixed(2)} ms`,
    );
  }
  out(`wrote ${jsonPath} and ${markdownPath}`);
  return { report, jsonPath, markdownPath };
}
