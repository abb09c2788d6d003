/**
 * The one report of every benchmark: reads `bench/results/*.json` (whatever ran), puts each figure beside its target,
 * draws the plots, and writes `bench/results/summary.md`. Figures, never pass/fail: a missing or odd file is
 * reported as "not run" and never fails the build.
 *
 * Benchmarks are written by different packages in different shapes, so figures are found by convention:
 * - a latency row is an object with a count of beliefs (`beliefs`, `n`, `size`, `count`) and a p95 in ms
 *   (`p95_ms`, `p95Ms`, `p95`, or a nested `{ p95 }` such as `recallMs.p95`), preferring keys that say `recall`;
 * - OpenAI call rates are rows whose `name` says `unbatched` / `batches of 4`, with `llmCallsPerUserTurn`;
 * - OpenAI tokens per LoCoMo turn are the `locomoTurns` rows of `openai.json` (one per reference extractor);
 * - model-input series are objects with a `strategy` and per-conversation `bytes`;
 * - LoCoMo reports are `locomo-*.json` files of kind `locomo`.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { EvalResult } from './locomo-eval.js';
import { categoryName } from './metrics.js';
import {
  TARGET_ABOVE_BASELINE_KS,
  TARGET_BLOCK_RECALL_EXCL_ADVERSARIAL,
  TARGET_DEV60_RECALL_P95_MS,
  TARGET_DEV60_WALL_MINUTES,
  TARGET_RECALL10_EXCL_ADVERSARIAL,
} from './reference.js';
import type { LocomoReport } from './report.js';
import { lineChart, type Series } from './svg-plot.js';

export interface BenchFile {
  /** File name without `.json`, e.g. `store-sqlite`, `locomo-memory`. */
  readonly name: string;
  readonly data: unknown;
  readonly modified: string;
}

export interface Figure {
  readonly figure: string;
  readonly target: string;
  /** The measured value, or null when the benchmark did not run or its file had no such figure. */
  readonly value: number | null;
  readonly unit: string;
  /** Which file (and key) the value came from, or why it is missing. */
  readonly source: string;
  /** Whether the value meets the target (a figure, not a gate); null without a value. */
  readonly meets: boolean | null;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads every `*.json` of `dir` except the summary's own; unreadable files are returned with `data: undefined`. */
export async function readBenchResults(dir: string): Promise<BenchFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  } catch {
    return [];
  }
  const out: BenchFile[] = [];
  for (const f of names) {
    const path = join(dir, f);
    let data: unknown;
    let modified = '';
    try {
      modified = (await stat(path)).mtime.toISOString();
      data = JSON.parse(await readFile(path, 'utf8'));
    } catch {
      data = undefined;
    }
    out.push({ name: basename(f, '.json'), data, modified });
  }
  return out;
}

const COUNT_KEYS = ['beliefs', 'n', 'size', 'count', 'N', 'items'];

function countOf(row: Json): number | null {
  for (const k of COUNT_KEYS) {
    // `{ p50, p95, n }` is a latency summary whose `n` counts samples, not beliefs.
    if (k === 'n' && ('p95' in row || 'p50' in row)) continue;
    const v = row[k];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  }
  return null;
}

/** Numeric leaves of an object, to depth 2, as `key` or `key.sub`. */
function leaves(row: Json): [string, number][] {
  const out: [string, number][] = [];
  for (const [k, v] of Object.entries(row)) {
    if (typeof v === 'number' && Number.isFinite(v)) out.push([k, v]);
    else if (isObj(v)) {
      for (const [k2, v2] of Object.entries(v)) {
        if (typeof v2 === 'number' && Number.isFinite(v2)) out.push([`${k}.${k2}`, v2]);
      }
    }
  }
  return out;
}

/** Every object in a document (depth-first), with the strings of its direct fields joined (for matching). */
function objects(
  doc: unknown,
  acc: { row: Json; text: string }[] = [],
  depth = 0,
): { row: Json; text: string }[] {
  if (depth > 8) return acc;
  if (Array.isArray(doc)) for (const v of doc) objects(v, acc, depth + 1);
  else if (isObj(doc)) {
    const text = Object.values(doc)
      .filter((v): v is string => typeof v === 'string')
      .join(' ');
    acc.push({ row: doc, text });
    for (const v of Object.values(doc)) objects(v, acc, depth + 1);
  }
  return acc;
}

const P95 = /(^|[._])p95(_?ms)?$|p95Ms$/i;
const EXCLUDE = /lexical_only|lexicalOnly|keys|commit|append|heap|insert|write/i;

/** The p95 latency of a row: a `recall` key first, then a plain `p95`, then search keys. */
function recallP95(row: Json, prefer: RegExp | null = null): { key: string; value: number } | null {
  const ls = leaves(row).filter(([k]) => P95.test(k) && !EXCLUDE.test(k));
  const pick =
    (prefer ? ls.find(([k]) => prefer.test(k)) : undefined) ??
    ls.find(([k]) => /recall/i.test(k)) ??
    ls.find(([k]) => /^p95/i.test(k)) ??
    ls.find(([k]) => /lexical/i.test(k)) ??
    ls[0];
  return pick ? { key: pick[0], value: pick[1] } : null;
}

/** The vector mode a row names (`vector`, `vectorMode`, `mode`, `index`, `store`), e.g. `sqlite-vec`, `exact`; '' when none. */
function modeOf(row: Json): string {
  for (const k of ['vector', 'vectorMode', 'mode', 'index', 'store']) {
    const v = row[k];
    if (typeof v === 'string') return v;
  }
  return '';
}

/** (beliefs, p95 ms) points of a file, from every row that has both, grouped by the row's vector mode. */
export function latencyGroups(
  file: BenchFile | undefined,
): { mode: string; key: string; points: [number, number][] }[] {
  if (!file) return [];
  const groups = new Map<string, { key: string; points: Map<number, number> }>();
  for (const { row } of objects(file.data)) {
    const n = countOf(row);
    if (n === null) continue;
    const p = recallP95(row);
    if (!p) continue;
    const mode = modeOf(row);
    let g = groups.get(mode);
    if (!g) {
      g = { key: p.key, points: new Map() };
      groups.set(mode, g);
    }
    if (p.key === g.key && !g.points.has(n)) g.points.set(n, p.value);
  }
  return [...groups.entries()].map(([mode, g]) => ({
    mode,
    key: g.key,
    points: [...g.points.entries()].sort((a, b) => a[0] - b[0]),
  }));
}

/** The points of the indexed mode (any mode but `exact`, when there is one), for the targets. */
export function latencyPoints(file: BenchFile | undefined): {
  points: [number, number][];
  key: string | null;
} {
  const groups = latencyGroups(file);
  const g = groups.find((x) => !/exact/i.test(x.mode)) ?? groups[0];
  return g ? { points: g.points, key: g.mode ? `${g.key}, ${g.mode}` : g.key } : { points: [], key: null };
}

function latencyFigure(
  files: readonly BenchFile[],
  names: readonly string[],
  figure: string,
  n: number,
  max: number,
): Figure {
  const target = `p95 ≤ ${max} ms`;
  for (const name of names) {
    const file = files.find((f) => f.name === name);
    if (!file) continue;
    const { points, key } = latencyPoints(file);
    const hit = points.find(([x]) => x === n);
    if (hit) {
      return {
        figure,
        target,
        value: hit[1],
        unit: 'ms',
        source: `${name}.json (${key})`,
        meets: hit[1] <= max,
      };
    }
  }
  const present = names.filter((n) => files.some((f) => f.name === n));
  const largest = present
    .map((name) => ({ name, ...latencyPoints(files.find((f) => f.name === name)) }))
    .map((x) => ({ ...x, last: x.points[x.points.length - 1] }))
    .find((x) => x.last !== undefined);
  const hint = largest?.last
    ? `; largest measured: ${largest.last[0].toLocaleString('en')} beliefs, p95 ${largest.last[1]} ms (${largest.key})`
    : '';
  return {
    figure,
    target,
    value: null,
    unit: 'ms',
    source:
      present.length > 0
        ? `no ${n.toLocaleString('en')}-belief row in ${present.map((p) => `${p}.json`).join(', ')}${hint}`
        : 'not run',
    meets: null,
  };
}

function appendFigure(files: readonly BenchFile[]): Figure {
  const figure = 'SQLite: append of 10 items, median';
  const target = 'median ≤ 1 ms';
  const file = files.find((f) => f.name === 'store-sqlite');
  if (!file) return { figure, target, value: null, unit: 'ms', source: 'not run', meets: null };
  for (const { row, text } of objects(file.data)) {
    for (const [k, v] of leaves(row)) {
      const where = `${text} ${k}`;
      if (/append/i.test(where) && /(median|p50)/i.test(k)) {
        return { figure, target, value: v, unit: 'ms', source: `store-sqlite.json (${k})`, meets: v <= 1 };
      }
    }
  }
  return {
    figure,
    target,
    value: null,
    unit: 'ms',
    source: 'no append median in store-sqlite.json',
    meets: null,
  };
}

/** The MCP server's protocol overhead: `recall` over stdio minus in-process `engine.recall`, p50 (bench of @mem01/mcp). */
function mcpOverheadFigure(files: readonly BenchFile[]): Figure {
  const figure = 'MCP recall over stdio, 10k beliefs: overhead over engine.recall, p50';
  const target = 'p50 ≤ 2 ms';
  const data = files.find((f) => f.name === 'mcp')?.data;
  if (data === undefined) return { figure, target, value: null, unit: 'ms', source: 'not run', meets: null };
  const overhead = isObj(data) && isObj(data.overheadMs) ? data.overheadMs.p50 : undefined;
  if (typeof overhead !== 'number') {
    return { figure, target, value: null, unit: 'ms', source: 'no overheadMs.p50 in mcp.json', meets: null };
  }
  const p50 = (k: string) => (isObj(data) && isObj(data[k]) ? data[k].p50 : undefined);
  return {
    figure,
    target,
    value: overhead,
    unit: 'ms',
    source: `mcp.json (overheadMs.p50: MCP p50 ${String(p50('mcpRecallMs'))} ms − engine.recall p50 ${String(p50('engineRecallMs'))} ms)`,
    meets: overhead <= 2,
  };
}

/**
 * Cold start per entry point (bench `cold-start` of @mem01/mcp, issue 25.1): mem01's own import cost on top of
 * importing `@openai/agents`, and the time to the first recall beyond the SDK's import time, medians of one run.
 */
function coldStartFigures(files: readonly BenchFile[]): Figure[] {
  const data = files.find((f) => f.name === 'cold-start')?.data;
  const sdk = isObj(data) && isObj(data.sdkImportMs) ? data.sdkImportMs.median : undefined;
  const entries = isObj(data) && isObj(data.entryPoints) ? data.entryPoints : {};
  return ['mem01session', '@mem01/mcp', '@mem01/cli'].flatMap((name): Figure[] => {
    const importFigure = `Cold start, ${name}: own import cost on top of importing @openai/agents, median`;
    const recallFigure = `Cold start, ${name}: first recall (SQLite, 1k beliefs, offline) beyond the SDK's import time, median`;
    const importTarget = '≤ 150 ms';
    const recallTarget = '≤ 300 ms';
    const e = entries[name];
    const missing = (figure: string, target: string, why: string): Figure => ({
      figure,
      target,
      value: null,
      unit: 'ms',
      source: why,
      meets: null,
    });
    if (data === undefined) {
      return [missing(importFigure, importTarget, 'not run'), missing(recallFigure, recallTarget, 'not run')];
    }
    const own = isObj(e) ? e.ownImportMs : undefined;
    const over = isObj(e) ? e.firstRecallOverSdkMs : undefined;
    const median = (k: string) => (isObj(e) && isObj(e[k]) ? e[k].median : undefined);
    const why = `no ${name} entry in cold-start.json`;
    return [
      typeof own === 'number'
        ? {
            figure: importFigure,
            target: importTarget,
            value: own,
            unit: 'ms',
            source: `cold-start.json (import ${String(median('importMs'))} ms − SDK import ${String(sdk)} ms)`,
            meets: own <= 150,
          }
        : missing(importFigure, importTarget, why),
      typeof over === 'number'
        ? {
            figure: recallFigure,
            target: recallTarget,
            value: over,
            unit: 'ms',
            source: `cold-start.json (first recall ${String(median('firstRecallMs'))} ms − SDK import ${String(sdk)} ms)`,
            meets: over <= 300,
          }
        : missing(recallFigure, recallTarget, why),
    ];
  });
}

function openaiFigure(files: readonly BenchFile[], pattern: RegExp, figure: string, max: number): Figure {
  const target = `≤ ${max} LLM calls per user turn`;
  const file = files.find((f) => f.name === 'openai');
  if (!file) return { figure, target, value: null, unit: 'calls/turn', source: 'not run', meets: null };
  for (const { row, text } of objects(file.data)) {
    const v = row.llmCallsPerUserTurn;
    if (pattern.test(text) && typeof v === 'number') {
      return {
        figure,
        target,
        value: v,
        unit: 'calls/turn',
        source: `openai.json (${text})`,
        meets: v <= max,
      };
    }
  }
  return {
    figure,
    target,
    value: null,
    unit: 'calls/turn',
    source: 'no matching row in openai.json',
    meets: null,
  };
}

/** The OpenAI extractor's tokens per turn on LoCoMo turns, issue 25.2 (`openai.json` `locomoTurns`, one row per reference). */
const LOCOMO_TOKEN_TARGETS = { dynamicInputTokensPerTurn: 600, outputTokensPerTurn: 100 } as const;

function openaiTokenFigures(files: readonly BenchFile[]): Figure[] {
  const data = files.find((f) => f.name === 'openai')?.data;
  const rows = isObj(data) && Array.isArray(data.locomoTurns) ? data.locomoTurns.filter(isObj) : [];
  const what = {
    dynamicInputTokensPerTurn: 'per-turn input (without the static instructions + schema prefix)',
    outputTokensPerTurn: 'output',
  } as const;
  const references = rows.length > 0 ? rows : [{ reference: 'local' }, { reference: 'dense' }];
  return references.flatMap((row) =>
    (Object.keys(what) as (keyof typeof what)[]).map((key): Figure => {
      const name =
        typeof row.name === 'string' ? row.name : `LoCoMo turns, reference ${String(row.reference)}`;
      const figure = `OpenAI extraction, ${name}: ${what[key]} tokens per turn`;
      const target = `≤ ${LOCOMO_TOKEN_TARGETS[key]} tokens/turn`;
      const v = row[key];
      if (typeof v !== 'number')
        return {
          figure,
          target,
          value: null,
          unit: 'tokens/turn',
          source: data ? 'no locomoTurns row in openai.json' : 'not run',
          meets: null,
        };
      const at = typeof row.turns === 'number' ? `${row.turns} turns, ` : '';
      return {
        figure,
        target,
        value: v,
        unit: 'tokens/turn',
        source: `openai.json (locomoTurns ${key}; ${at}reference ${String(row.reference)})`,
        meets: v <= LOCOMO_TOKEN_TARGETS[key],
      };
    }),
  );
}

function isLocomo(f: BenchFile): f is BenchFile & { data: LocomoReport } {
  return (
    f.name.startsWith('locomo-') && isObj(f.data) && f.data.kind === 'locomo' && Array.isArray(f.data.results)
  );
}

/** The LoCoMo reports `pnpm bench` writes, one per store; other `locomo-*.json` files are reported too. */
export const LOCOMO_STORES = ['memory', 'sqlite', 'postgres'] as const;

const pct1 = (v: number): number => Math.round(v * 1000) / 10;

/** The row marked `sessionDefault` (the headline), if the report has one. */
function headline(report: LocomoReport): EvalResult | undefined {
  return report.results.find((r) => r.sessionDefault === true);
}

/**
 * Per LoCoMo report: the memSession default's recall@10 excluding adversarial, its block recall excluding
 * adversarial, and how many (category, k) pairs it is ahead of the BM25 computed on the same file.
 */
export function locomoFigures(files: readonly BenchFile[]): Figure[] {
  const names = [
    ...LOCOMO_STORES.map((s) => `locomo-${s}`),
    ...files.filter((f) => f.name.startsWith('locomo-')).map((f) => f.name),
  ].filter((n, i, all) => all.indexOf(n) === i);
  const out: Figure[] = [];
  for (const name of names) {
    const file = files.find((f) => f.name === name);
    const store = name.slice('locomo-'.length);
    const recallFigure = `LoCoMo (${store}), memSession default: recall@10 excl. adversarial`;
    const blockFigure = `LoCoMo (${store}), memSession default: block recall excl. adversarial`;
    const bm25Figure = `LoCoMo (${store}), memSession default: (category, k) pairs above this file's BM25, k = ${TARGET_ABOVE_BASELINE_KS.join(', ')}`;
    const recallTarget = `≥ ${TARGET_RECALL10_EXCL_ADVERSARIAL}`;
    const blockTarget = `≥ ${TARGET_BLOCK_RECALL_EXCL_ADVERSARIAL} at 800 bytes`;
    const bm25Target = 'all';
    const missing = (source: string): Figure[] => [
      { figure: recallFigure, target: recallTarget, value: null, unit: '%', source, meets: null },
      { figure: blockFigure, target: blockTarget, value: null, unit: '%', source, meets: null },
      { figure: bm25Figure, target: bm25Target, value: null, unit: '', source, meets: null },
    ];
    if (!file) {
      out.push(...missing('not run'));
      continue;
    }
    if (!isLocomo(file)) {
      out.push(...missing(`${name}.json is not a LoCoMo report`));
      continue;
    }
    const head = headline(file.data);
    if (!head) {
      out.push(...missing(`no sessionDefault row in ${name}.json (an older report or an override run)`));
      continue;
    }
    const where = `${name}.json (${file.data.info?.store ?? store}; ${file.data.info?.extractor ?? ''})`;
    const at10 = head.scores?.allButAdversarial?.recall?.[10];
    const r10 = typeof at10 === 'number' ? pct1(at10) : null;
    out.push({
      figure: recallFigure,
      target: recallTarget,
      value: r10,
      unit: '%',
      source: r10 === null ? `no k=10 in ${name}.json` : where,
      meets: r10 === null ? null : r10 >= TARGET_RECALL10_EXCL_ADVERSARIAL,
    });
    const blockRaw = head.scores?.allButAdversarial?.blockRecall;
    const block = typeof blockRaw === 'number' ? pct1(blockRaw) : null;
    out.push({
      figure: blockFigure,
      target: blockTarget,
      value: block,
      unit: '%',
      source:
        block === null
          ? `no block recall in ${name}.json`
          : `${where}, budget ${head.block?.budgetBytes ?? '?'} bytes`,
      meets: block === null ? null : block >= TARGET_BLOCK_RECALL_EXCL_ADVERSARIAL,
    });
    const comparisons = (file.data.versusBaseline ?? []).filter(
      (c) => c.label === head.label && TARGET_ABOVE_BASELINE_KS.includes(c.k),
    );
    const ks = new Set(comparisons.map((c) => c.k));
    if (comparisons.length === 0 || TARGET_ABOVE_BASELINE_KS.some((k) => !ks.has(k))) {
      out.push({
        figure: bm25Figure,
        target: bm25Target,
        value: null,
        unit: '',
        source: `no comparison with the file's own BM25 at k = ${TARGET_ABOVE_BASELINE_KS.join(', ')} in ${name}.json`,
        meets: null,
      });
      continue;
    }
    const pairs = comparisons.flatMap((c) =>
      Object.entries(c.byCategory).map(([cat, d]) => ({ cat: Number(cat), k: c.k, d })),
    );
    const behind = pairs.filter((p) => !(p.d > 0));
    out.push({
      figure: bm25Figure,
      target: bm25Target,
      value: pairs.length - behind.length,
      unit: `of ${pairs.length}`,
      source:
        behind.length === 0
          ? `${name}.json`
          : `${name}.json; not ahead: ${behind.map((p) => `${categoryName(p.cat)} at k=${p.k} (${p.d >= 0 ? '+' : ''}${p.d.toFixed(1)})`).join(', ')}`,
      meets: behind.length === 0,
    });
  }
  return out;
}

function isDev60(f: BenchFile): f is BenchFile & { data: LocomoReport } {
  return (
    f.name.startsWith('longmemeval-dev60-') &&
    isObj(f.data) &&
    f.data.kind === 'locomo' &&
    Array.isArray(f.data.results)
  );
}

/** The LongMemEval dev60 reports `pnpm bench` writes, one per store. */
export const DEV60_STORES = ['memory', 'sqlite'] as const;

/**
 * Per dev60 report: the memSession default's recall@10 (the file has no adversarial category), its block recall,
 * the (category, k) pairs ahead of the file's own BM25, and, on the memory store, the recall p95 and the row's
 * wall time against the issue's targets.
 */
export function dev60Figures(files: readonly BenchFile[]): Figure[] {
  const out: Figure[] = [];
  for (const store of DEV60_STORES) {
    const name = `longmemeval-dev60-${store}`;
    const file = files.find((f) => f.name === name);
    const figure = (what: string) => `LongMemEval dev60 (${store}), memSession default: ${what}`;
    const rows: [string, string, string][] = [
      [figure('recall@10'), 'reported (no target)', '%'],
      [figure('block recall'), 'reported (no target)', '%'],
      [
        figure(`(category, k) pairs above this file's BM25, k = ${TARGET_ABOVE_BASELINE_KS.join(', ')}`),
        'reported (no target)',
        '',
      ],
      ...(store === 'memory'
        ? ([
            [figure('recall p95 (eval-reported)'), `p95 ≤ ${TARGET_DEV60_RECALL_P95_MS} ms`, 'ms'],
            [
              figure('wall time of the row (ingest + questions)'),
              `≤ ${TARGET_DEV60_WALL_MINUTES} min`,
              'min',
            ],
          ] as [string, string, string][])
        : []),
    ];
    const missing = (source: string) =>
      rows.map(
        ([f, target, unit]): Figure => ({ figure: f, target, value: null, unit, source, meets: null }),
      );
    if (!file) {
      out.push(...missing('not run'));
      continue;
    }
    if (!isDev60(file)) {
      out.push(...missing(`${name}.json is not an eval report`));
      continue;
    }
    const head = headline(file.data);
    if (!head) {
      out.push(...missing(`no sessionDefault row in ${name}.json`));
      continue;
    }
    const where = `${name}.json (${file.data.info?.store ?? store})`;
    const at10 = head.scores?.all?.recall?.[10];
    const block = head.scores?.all?.blockRecall;
    const comparisons = (file.data.versusBaseline ?? []).filter(
      (c) => c.label === head.label && TARGET_ABOVE_BASELINE_KS.includes(c.k),
    );
    const pairs = comparisons.flatMap((c) =>
      Object.entries(c.byCategory).map(([cat, d]) => ({ cat, k: c.k, d })),
    );
    const behind = pairs.filter((p) => !(p.d > 0));
    const names = file.data.baseline?.scores?.categoryNames;
    const values: [number | null, boolean | null, string][] = [
      [typeof at10 === 'number' ? pct1(at10) : null, null, where],
      [
        typeof block === 'number' ? pct1(block) : null,
        null,
        `${where}, budget ${head.block?.budgetBytes ?? '?'} bytes`,
      ],
      [
        pairs.length > 0 ? pairs.length - behind.length : null,
        null,
        behind.length === 0
          ? where
          : `${where}; not ahead: ${behind.map((p) => `${categoryName(Number(p.cat), names)} at k=${p.k} (${p.d >= 0 ? '+' : ''}${p.d.toFixed(1)})`).join(', ')}`,
      ],
    ];
    if (store === 'memory') {
      const p95 = head.recall?.p95Ms;
      const wall = head.wallMs;
      values.push(
        [
          typeof p95 === 'number' ? +p95.toFixed(2) : null,
          typeof p95 === 'number' ? p95 <= TARGET_DEV60_RECALL_P95_MS : null,
          where,
        ],
        [
          typeof wall === 'number' ? +(wall / 60_000).toFixed(2) : null,
          typeof wall === 'number' ? wall / 60_000 <= TARGET_DEV60_WALL_MINUTES : null,
          typeof wall === 'number'
            ? `${where}; run ${file.data.info?.startedAt ?? '?'}${head.loadAverage ? `, load ${head.loadAverage.join('/')}` : ''}`
            : `no wallMs in ${name}.json`,
        ],
      );
    }
    rows.forEach(([f, target, unit], i) => {
      const [value, meets, source] = values[i] ?? [null, null, 'missing'];
      out.push({
        figure: f,
        target,
        value,
        unit: unit === '' && pairs.length > 0 ? `of ${pairs.length}` : unit,
        source,
        meets,
      });
    });
  }
  return out;
}

/**
 * Per LoCoMo and dev60 report on the memory and SQLite stores: the memSession default's block recall (excluding
 * adversarial where the file has it) with each question asked once before, against its normal block recall.
 * Target: within 1 point.
 */
export function playedFigures(files: readonly BenchFile[]): Figure[] {
  const out: Figure[] = [];
  const names = [
    ...LOCOMO_STORES.filter((s) => s !== 'postgres').map((s) => [`locomo-${s}`, `LoCoMo (${s})`]),
    ...DEV60_STORES.map((s) => [`longmemeval-dev60-${s}`, `LongMemEval dev60 (${s})`]),
  ];
  for (const [name, title] of names) {
    const figure = `${title}, memSession default: block recall with each question asked once before (points against the normal mode)`;
    const target = 'within 1 point';
    const file = files.find((f) => f.name === name);
    const missing = (source: string): Figure => ({
      figure,
      target,
      value: null,
      unit: 'points',
      source,
      meets: null,
    });
    if (!file) {
      out.push(missing('not run'));
      continue;
    }
    if (!isLocomo(file) && !isDev60(file)) {
      out.push(missing(`${name}.json is not an eval report`));
      continue;
    }
    const head = headline(file.data as LocomoReport);
    const normal = head?.scores?.allButAdversarial?.blockRecall;
    const played = head?.played?.scores?.allButAdversarial?.blockRecall;
    if (typeof normal !== 'number' || typeof played !== 'number') {
      out.push(missing(`no question-played figures in ${name}.json (run without --no-play-questions)`));
      continue;
    }
    const d = +((played - normal) * 100).toFixed(1);
    out.push({
      figure,
      target,
      value: d,
      unit: 'points',
      source: `${name}.json: ${pct1(played)} played, ${pct1(normal)} normal`,
      meets: Math.abs(d) <= 1,
    });
  }
  return out;
}

/** Recall p95 at 10k extracted beliefs + 10k episodes of one user (`engine-episodes.json`), for one store. */
function episodesLatencyFigure(files: readonly BenchFile[], store: 'memory' | 'sqlite', max: number): Figure {
  const label = store === 'memory' ? 'in-memory store' : 'SQLite store';
  const figure = `Engine recall, 10k beliefs + 10k episodes of one user, ${label} (memSession's runtime)`;
  const target = `p95 ≤ ${max} ms`;
  const file = files.find((f) => f.name === 'engine-episodes');
  if (!file) return { figure, target, value: null, unit: 'ms', source: 'not run', meets: null };
  const rows = isObj(file.data) && Array.isArray(file.data.recall) ? file.data.recall.filter(isObj) : [];
  const row = rows.find((r) => r.store === store && r.beliefs === 10_000 && r.episodes === 10_000);
  const p95 = row && isObj(row.recallMs) ? row.recallMs.p95 : undefined;
  if (typeof p95 !== 'number') {
    return {
      figure,
      target,
      value: null,
      unit: 'ms',
      source: `no ${store} row in engine-episodes.json`,
      meets: null,
    };
  }
  const p50 = isObj(row?.recallMs) ? row.recallMs.p50 : undefined;
  const load =
    isObj(file.data) && Array.isArray(file.data.loadAverage)
      ? ` load ${file.data.loadAverage.join('/')}`
      : '';
  return {
    figure,
    target,
    value: p95,
    unit: 'ms',
    source: `engine-episodes.json (recallMs.p95; p50 ${String(p50)} ms;${load})`,
    meets: p95 <= max,
  };
}

/**
 * Recall with about a million beliefs spread over many users (rows with `perUser`), per vector mode. The issue
 * sets no target for it: the figure is reported, `meets` stays null.
 */
function acrossUsersFigures(files: readonly BenchFile[]): Figure[] {
  const modes = [
    ['pgvector-hnsw', 'HNSW on PGlite'],
    ['exact', 'exact-cosine fallback'],
  ] as const;
  const names = ['store-postgres-large', 'store-postgres', 'store-postgres-100k'];
  return modes.map(([mode, label]) => {
    const figure = `PostgreSQL recall, 1M beliefs across users, ${label}`;
    const target = 'reported (no target)';
    for (const name of names) {
      const file = files.find((f) => f.name === name);
      for (const { row } of objects(file?.data)) {
        const n = countOf(row);
        const p = recallP95(row);
        if (n === null || n < 1_000_000 || typeof row.perUser !== 'number' || !p) continue;
        if (!modeOf(row).includes(mode)) continue;
        const users = typeof row.users === 'number' ? `, ${row.users.toLocaleString('en')} users` : '';
        return {
          figure,
          target,
          value: p.value,
          unit: 'ms',
          source: `${name}.json (${p.key}, ${modeOf(row)}; ${n.toLocaleString('en')} beliefs${users})`,
          meets: null,
        };
      }
    }
    return { figure, target, value: null, unit: 'ms', source: 'not run', meets: null };
  });
}

/** Every figure beside its target. */
export function collectFigures(files: readonly BenchFile[]): Figure[] {
  return [
    latencyFigure(
      files,
      ['engine', 'store-memory'],
      'Engine recall, 10k beliefs, in-memory store',
      10_000,
      5,
    ),
    latencyFigure(files, ['store-sqlite'], 'SQLite recall, 10k beliefs', 10_000, 10),
    latencyFigure(files, ['store-sqlite'], 'SQLite recall, 100k beliefs', 100_000, 50),
    appendFigure(files),
    latencyFigure(
      files,
      ['store-postgres', 'store-postgres-100k', 'store-postgres-large'],
      'PostgreSQL recall, 100k beliefs, HNSW',
      100_000,
      20,
    ),
    ...acrossUsersFigures(files),
    episodesLatencyFigure(files, 'memory', 5),
    episodesLatencyFigure(files, 'sqlite', 10),
    mcpOverheadFigure(files),
    ...coldStartFigures(files),
    openaiFigure(files, /unbatched/i, 'OpenAI extraction, unbatched', 1),
    openaiFigure(files, /batch(es)? of 4/i, 'OpenAI extraction, batches of 4', 0.3),
    ...openaiTokenFigures(files),
    ...locomoFigures(files),
    ...dev60Figures(files),
    ...playedFigures(files),
  ];
}

const STORE_FILES = [
  'engine',
  'store-memory',
  'store-sqlite',
  'store-postgres',
  'store-postgres-100k',
  'store-postgres-large',
];

/** Recall latency (p95) against beliefs, one series per store benchmark. */
export function latencySeries(files: readonly BenchFile[]): Series[] {
  const out: Series[] = [];
  for (const name of STORE_FILES) {
    for (const g of latencyGroups(files.find((f) => f.name === name))) {
      if (g.points.length > 0)
        out.push({ label: `${name}${g.mode ? ` ${g.mode}` : ''} (${g.key})`, points: g.points });
    }
  }
  return out;
}

/** Model-input bytes against conversations, one series per strategy, from the demo/session benchmarks. */
export function inputBytesSeries(files: readonly BenchFile[]): Series[] {
  const out: Series[] = [];
  for (const f of files) {
    if (f.name.startsWith('locomo-')) continue;
    for (const { row } of objects(f.data)) {
      // Checkpoint rows: { conversations: n, <strategy>Bytes: … } (the session benchmark).
      if (Array.isArray(row.modelInputBytes)) {
        const rows = row.modelInputBytes.filter(isObj);
        const keys = new Set(rows.flatMap((r) => Object.keys(r).filter((k) => /Bytes$/.test(k))));
        for (const k of keys) {
          const points = rows
            .filter((r) => typeof r.conversations === 'number' && typeof r[k] === 'number')
            .map((r): [number, number] => [r.conversations as number, r[k] as number]);
          if (points.length > 0) out.push({ label: `${k.replace(/Bytes$/, '')} (${f.name})`, points });
        }
        continue;
      }
      const strategy = row.strategy ?? row.name;
      if (typeof strategy !== 'string') continue;
      const per = isObj(row.perConversation) ? row.perConversation.bytes : row.bytes;
      if (!Array.isArray(per) || per.length === 0 || !per.every((b) => typeof b === 'number')) continue;
      out.push({ label: `${strategy} (${f.name})`, points: (per as number[]).map((b, i) => [i + 1, b]) });
    }
  }
  return out;
}

const show = (f: Figure): string =>
  f.value === null ? 'not run' : `${+f.value.toFixed(f.unit === '%' ? 1 : 3)} ${f.unit}`;

/** The data sets every ranking change is measured on, in the summary's order. */
const DEV_SETS = [
  { title: 'LoCoMo10', prefix: 'locomo-', stores: LOCOMO_STORES as readonly string[] },
  { title: 'LongMemEval_S dev60', prefix: 'longmemeval-dev60-', stores: DEV60_STORES as readonly string[] },
] as const;

/**
 * Both development sets side by side: per set, its own categories, its BM25 (computed on that file) and the
 * memSession default of each store, each cell with its points against that BM25.
 */
export function devSetTables(files: readonly BenchFile[]): string[] {
  const lines: string[] = [];
  const cell = (v: number | undefined) => (typeof v === 'number' ? (v * 100).toFixed(1) : '–');
  const delta = (v: number | undefined, b: number | undefined) =>
    typeof v === 'number' && typeof b === 'number'
      ? ` (${v - b >= 0 ? '+' : ''}${((v - b) * 100).toFixed(1)})`
      : '';
  const sets = DEV_SETS.map((set) => ({
    ...set,
    reports: set.stores
      .map((store) => files.find((f) => f.name === `${set.prefix}${store}`))
      .filter(
        (f): f is BenchFile & { data: LocomoReport } =>
          f !== undefined && isObj(f.data) && f.data.kind === 'locomo',
      ),
  })).filter((set) => set.reports.length > 0);
  if (sets.length === 0) return lines;
  lines.push(
    '## Both development sets, per category (recall@k, %)',
    '',
    'Each set against the BM25 computed on its own file (points in brackets); the memSession default (`sessionDefault`) of each store. The sets number their categories differently: LoCoMo has adversarial questions, LongMemEval none.',
    '',
  );
  for (const set of sets) {
    const first = set.reports[0] as BenchFile & { data: LocomoReport };
    const base = first.data.baseline;
    const names = base?.scores?.categoryNames;
    const cats = Object.keys(base?.scores?.byCategory ?? {})
      .map(Number)
      .sort((a, b) => a - b);
    lines.push(
      `### ${set.title}`,
      '',
      `| run | store | k | ${cats.map((c) => categoryName(c, names)).join(' | ')} | all |`,
      `|---|---|---|${cats.map(() => '---|').join('')}---|`,
    );
    for (const k of base?.ks ?? []) {
      lines.push(
        `| ${base?.label ?? 'BM25'} | – | ${k} | ${cats.map((c) => cell(base?.scores?.byCategory?.[String(c)]?.recall?.[k])).join(' | ')} | ${cell(base?.scores?.all?.recall?.[k])} |`,
      );
      for (const f of set.reports) {
        const head = headline(f.data);
        if (!head?.ks?.includes(k)) continue;
        const at = (c: number) => head.scores?.byCategory?.[String(c)]?.recall?.[k];
        const b = (c: number) => base?.scores?.byCategory?.[String(c)]?.recall?.[k];
        lines.push(
          `| **${head.label}** | ${f.data.info?.store ?? f.name} | ${k} | ${cats.map((c) => `${cell(at(c))}${delta(at(c), b(c))}`).join(' | ')} | ${cell(head.scores?.all?.recall?.[k])}${delta(head.scores?.all?.recall?.[k], base?.scores?.all?.recall?.[k])} |`,
        );
      }
    }
    lines.push('');
  }
  return lines;
}

/** The summary Markdown (plots are referenced by file name, written beside it). */
export function renderSummary(
  files: readonly BenchFile[],
  figures: readonly Figure[],
  generatedAt: string,
): string {
  const lines = [
    '# mem01 benchmark summary',
    '',
    `Generated ${generatedAt} by \`pnpm bench\` from \`bench/results/*.json\`. Figures, not pass/fail: nothing here fails a build.`,
    '',
    '| figure | target | measured | meets target | source |',
    '|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.figure} | ${f.target} | ${show(f)} | ${f.meets === null ? '–' : f.meets ? 'yes' : 'no'} | ${f.source.replace(/\|/g, '/')} |`,
    ),
    '',
  ];
  // The stores `pnpm bench` runs, in that order, then any other LoCoMo report.
  const rank = (f: BenchFile) => {
    const i = (LOCOMO_STORES as readonly string[]).indexOf(f.name.slice('locomo-'.length));
    return i < 0 ? LOCOMO_STORES.length : i;
  };
  const locomo = files.filter(isLocomo).sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  if (locomo.length > 0) {
    lines.push(
      '## LoCoMo retrieval (recall@k and block recall, %)',
      '',
      'Per store: the BM25 the eval computes on the same file, the memSession default (`sessionDefault`, in bold) and the other rows. Block recall: the evidence turns covered by the block the model sees.',
      '',
      '| run | store | k | all but adversarial | all | block recall, all but adversarial | MRR | recall p95 (ms) | split / refused turns |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    const cell = (v: number | null | undefined) => (typeof v === 'number' ? (v * 100).toFixed(1) : '–');
    for (const f of locomo) {
      const store = f.data.info?.store ?? f.name;
      const base = f.data.baseline;
      const rows = [...f.data.results].sort(
        (a, b) => Number(b.sessionDefault === true) - Number(a.sessionDefault === true),
      );
      const ks = [...new Set(rows.flatMap((r) => r.ks ?? []))].sort((a, b) => a - b);
      for (const k of ks) {
        if (base?.scores && base.ks?.includes(k)) {
          lines.push(
            `| ${base.label} | ${store} | ${k} | ${cell(base.scores.allButAdversarial?.recall?.[k])} | ${cell(base.scores.all?.recall?.[k])} | – | ${base.scores.all?.mrr?.toFixed(3) ?? '–'} | – | – |`,
          );
        }
        for (const r of rows) {
          if (!r.ks?.includes(k)) continue;
          const label = r.sessionDefault === true ? `**${r.label}**` : r.label;
          lines.push(
            `| ${label} | ${store} | ${k} | ${cell(r.scores?.allButAdversarial?.recall?.[k])} | ${cell(r.scores?.all?.recall?.[k])} | ${cell(r.scores?.allButAdversarial?.blockRecall)} | ${r.scores?.all?.mrr?.toFixed(3) ?? '–'} | ${r.recall?.p95Ms?.toFixed(2) ?? '–'} | ${r.ingest?.splitTurns ?? '–'} / ${r.ingest?.refusedTurns ?? '–'} |`,
          );
        }
      }
    }
    lines.push(
      '',
      'Targets (memSession default, LoCoMo, offline): recall@10 excl. adversarial ≥ 72; block recall excl. adversarial ≥ 60 at 800 bytes; every category above the file’s own BM25 at k = 5 and 10. The published LoCoMo figures are a cross-check in each `locomo-*.md`.',
      '',
    );
  }
  lines.push(...devSetTables(files));
  lines.push(
    '## Plots',
    '',
    '![Recall latency p95 against beliefs, per store](recall-latency.svg)',
    '',
    '![Model-input bytes against conversations, per strategy](model-input-bytes.svg)',
    '',
    '## Result files',
    '',
    '| file | what | written |',
    '|---|---|---|',
  );
  if (files.length === 0) lines.push('| – | no benchmark has run | – |');
  for (const f of files) {
    const what = isObj(f.data)
      ? String(
          f.data.benchmark ??
            f.data.measured ??
            f.data.package ??
            (f.data.kind === 'locomo' ? 'LoCoMo retrieval' : ''),
        )
      : f.data === undefined
        ? 'unreadable JSON'
        : '';
    lines.push(`| ${f.name}.json | ${what.replace(/\|/g, '/')} | ${f.modified} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Reads `dir`, writes `summary.md` and the two SVG plots into it. Never throws for missing or odd inputs. */
export async function writeSummary(
  dir: string,
  now = new Date(),
): Promise<{ figures: Figure[]; markdown: string }> {
  const files = (await readBenchResults(dir)).filter((f) => f.name !== 'summary');
  const figures = collectFigures(files);
  const markdown = renderSummary(files, figures, now.toISOString());
  await writeFile(join(dir, 'summary.md'), markdown);
  await writeFile(
    join(dir, 'recall-latency.svg'),
    lineChart(latencySeries(files), {
      title: 'Recall latency p95 vs beliefs',
      xLabel: 'beliefs in the store (one user)',
      yLabel: 'p95 (ms)',
      xLog: true,
      yLog: true,
      hLines: [
        { y: 5, label: 'in-memory target 5 ms @10k' },
        { y: 50, label: 'SQLite target 50 ms @100k' },
      ],
    }),
  );
  await writeFile(
    join(dir, 'model-input-bytes.svg'),
    lineChart(inputBytesSeries(files), {
      title: 'Model-input bytes vs conversations',
      xLabel: 'conversations so far',
      yLabel: 'bytes of model input',
    }),
  );
  return { figures, markdown };
}
