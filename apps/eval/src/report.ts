/** Markdown and JSON reports of LoCoMo runs, beside the reference rows. */
import type { EvalResult } from './locomo-eval.js';
import { ADVERSARIAL, type Aggregate, categoryName } from './metrics.js';
import { bm25Reference, REFERENCE_ROWS, TARGET_RECALL10_EXCL_ADVERSARIAL } from './reference.js';

/** What was run, for the report header. */
export interface RunInfo {
  readonly dataPath: string;
  readonly store: string;
  readonly extractor: string;
  readonly embedder: string;
  readonly startedAt: string;
  readonly engineConfig?: unknown;
}

export interface LocomoReport {
  readonly kind: 'locomo';
  readonly info: RunInfo;
  readonly results: readonly EvalResult[];
  readonly reference: typeof REFERENCE_ROWS;
  readonly target: { readonly recallAt10ExclAdversarial: number };
  /** Per result and k: recall@k minus BM25's, in points, per category (positive = better). */
  readonly versusBm25: readonly {
    readonly label: string;
    readonly k: number;
    readonly byCategory: Readonly<Record<string, number>>;
    readonly beatsEveryCategory: boolean;
  }[];
}

/** Preferred column order (the README's): single-hop, multi-hop, temporal, open-domain, adversarial. */
const ORDER = [4, 1, 2, 3, 5];

function categoriesOf(results: readonly EvalResult[]): number[] {
  const seen = new Set<number>(ORDER);
  for (const r of results) for (const c of Object.keys(r.scores.byCategory)) seen.add(Number(c));
  return [...seen].sort((a, b) => {
    const ia = ORDER.indexOf(a);
    const ib = ORDER.indexOf(b);
    return (ia < 0 ? 100 + a : ia) - (ib < 0 ? 100 + b : ib);
  });
}

const pct = (v: number | null | undefined): string =>
  v === null || v === undefined ? '–' : (v * 100).toFixed(1);
const ref = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : v.toFixed(1));

export function buildReport(info: RunInfo, results: readonly EvalResult[]): LocomoReport {
  const versusBm25: LocomoReport['versusBm25'][number][] = [];
  for (const r of results) {
    for (const k of r.ks) {
      const bm = bm25Reference(k);
      if (!bm) continue;
      const byCategory: Record<string, number> = {};
      let beats = true;
      for (const [cat, v] of Object.entries(bm.byCategory)) {
        const mine = r.scores.byCategory[cat];
        if (v === null || !mine) continue;
        const d = mine.recall[k] === undefined ? Number.NaN : (mine.recall[k] as number) * 100 - v;
        byCategory[cat] = Math.round(d * 10) / 10;
        if (!(d > 0)) beats = false;
      }
      versusBm25.push({ label: r.label, k, byCategory, beatsEveryCategory: beats });
    }
  }
  return {
    kind: 'locomo',
    info,
    results,
    reference: REFERENCE_ROWS,
    target: { recallAt10ExclAdversarial: TARGET_RECALL10_EXCL_ADVERSARIAL },
    versusBm25,
  };
}

/** The recall@k table: reference rows, then every result at every k. Figures in percent. */
export function recallTable(results: readonly EvalResult[]): string {
  const cats = categoriesOf(results);
  const head = `| system | k | ${cats.map(categoryName).join(' | ')} | all but adversarial | all |`;
  const sep = `|---|---|${cats.map(() => '---|').join('')}---|---|`;
  const rows: string[] = [];
  const ks = [...new Set(results.flatMap((r) => r.ks))].sort((a, b) => a - b);
  for (const k of ks) {
    for (const row of REFERENCE_ROWS.filter((x) => x.k === k)) {
      rows.push(
        `| ${row.system} (reference) | ${k} | ${cats.map((c) => ref(row.byCategory[c])).join(' | ')} | ${ref(row.allButAdversarial)} | ${ref(row.all)} |`,
      );
    }
    for (const r of results) {
      if (!r.ks.includes(k)) continue;
      const cell = (a: Aggregate | undefined): string => (a && a.questions > 0 ? pct(a.recall[k]) : '–');
      rows.push(
        `| **${r.label}** | ${k} | ${cats.map((c) => cell(r.scores.byCategory[String(c)])).join(' | ')} | ${cell(r.scores.allButAdversarial)} | ${cell(r.scores.all)} |`,
      );
    }
  }
  return [head, sep, ...rows].join('\n');
}

/** All-evidence hit@k and MRR per category, and the turns the top k cover. */
export function detailTable(result: EvalResult): string {
  const cats = Object.keys(result.scores.byCategory).map(Number);
  const groups: [string, Aggregate][] = [
    ...cats.map((c): [string, Aggregate] => [
      categoryName(c),
      result.scores.byCategory[String(c)] as Aggregate,
    ]),
    ['all but adversarial', result.scores.allButAdversarial],
    ['all', result.scores.all],
  ];
  const ks = result.ks;
  const head = `| ${result.label} | questions | ${ks.map((k) => `recall@${k}`).join(' | ')} | ${ks.map((k) => `all-hit@${k}`).join(' | ')} | MRR@${Math.max(...ks)} | ${ks.map((k) => `turns in top ${k}`).join(' | ')} |`;
  const sep = `|---|---|${ks.map(() => '---|').join('')}${ks.map(() => '---|').join('')}---|${ks.map(() => '---|').join('')}`;
  const rows = groups.map(
    ([name, a]) =>
      `| ${name} | ${a.questions} | ${ks.map((k) => pct(a.recall[k])).join(' | ')} | ${ks.map((k) => pct(a.allHit[k])).join(' | ')} | ${a.mrr.toFixed(3)} | ${ks.map((k) => (a.turnsCovered[k] ?? 0).toFixed(1)).join(' | ')} |`,
  );
  return [head, sep, ...rows].join('\n');
}

/** Ingest and latency figures, one row per result. */
export function costTable(results: readonly EvalResult[]): string {
  const head =
    '| run | turns | ingest total (s) | ingest ms/turn | extraction failures | active memories | episodes | recall p50 (ms) | recall p95 (ms) | episode share of results |';
  const sep = '|---|---|---|---|---|---|---|---|---|---|';
  const rows = results.map(
    (r) =>
      `| ${r.label} | ${r.ingest.turns} | ${(r.ingest.totalMs / 1000).toFixed(1)} | ${r.ingest.msPerTurn.toFixed(2)} | ${r.ingest.failures} | ${r.ingest.activeMemories} | ${r.ingest.activeByKind.episode ?? 0} | ${r.recall.p50Ms.toFixed(2)} | ${r.recall.p95Ms.toFixed(2)} | ${pct(r.recall.episodeShare)}% |`,
  );
  return [head, sep, ...rows].join('\n');
}

/** Plain-language verdicts against the targets (figures, never pass/fail of a build). */
export function verdicts(report: LocomoReport): string[] {
  const lines: string[] = [];
  for (const r of report.results) {
    const at10 = r.ks.includes(10) ? r.scores.allButAdversarial.recall[10] : undefined;
    if (at10 !== undefined) {
      const v = at10 * 100;
      const t = report.target.recallAt10ExclAdversarial;
      lines.push(
        `${r.label}: recall@10 excluding adversarial ${v.toFixed(1)} (target ≥ ${t}: ${v >= t ? 'met' : `missed by ${(t - v).toFixed(1)} points`}).`,
      );
    }
    for (const vs of report.versusBm25.filter((x) => x.label === r.label)) {
      const worse = Object.entries(vs.byCategory)
        .filter(([, d]) => !(d > 0))
        .map(([c]) => categoryName(Number(c)));
      const deltas = Object.entries(vs.byCategory)
        .map(([c, d]) => `${categoryName(Number(c))} ${d >= 0 ? '+' : ''}${d.toFixed(1)}`)
        .join(', ');
      lines.push(
        `${r.label} vs BM25 at k=${vs.k}: ${vs.beatsEveryCategory ? 'ahead in every category' : `not ahead in ${worse.join(', ')}`} (points: ${deltas}).`,
      );
    }
  }
  return lines;
}

/** The whole Markdown report. */
export function renderMarkdown(report: LocomoReport): string {
  const { info, results } = report;
  const first = results[0];
  const data = first?.data;
  const out: string[] = [
    '# LoCoMo retrieval (mem01)',
    '',
    `Run ${info.startedAt} · data \`${info.dataPath}\` · store ${info.store} · extractor ${info.extractor} · embedder ${info.embedder}` +
      (first ? ` · turn text \`${first.turnFormat}\` · clock \`${first.clock}\`` : ''),
    '',
  ];
  if (data) {
    out.push(
      `${data.conversations} conversations, ${data.sessions} sessions, ${data.turns} turns, ${data.questions} questions with usable evidence ` +
        `(${data.skippedNoEvidence} skipped without evidence, ${data.repairedIds} evidence ids repaired, ${data.droppedIds} unreadable, ${data.unknownIds} naming no turn).`,
      '',
    );
  }
  if (info.engineConfig !== undefined)
    out.push(`Engine config overrides: \`${JSON.stringify(info.engineConfig)}\``, '');
  out.push('## recall@k (%), beside the reference rows', '', recallTable(results), '');
  out.push(
    `Reference rows are turn-level retrievers (one turn per result). A mem01 memory can cover several turns (a belief with evidence from many turns); the "turns in top k" column below shows how many. Adversarial is category ${ADVERSARIAL}.`,
    '',
  );
  const v = verdicts(report);
  if (v.length > 0) out.push('## Against the targets', '', ...v.map((l) => `- ${l}`), '');
  for (const r of results) out.push(`## ${r.label}`, '', detailTable(r), '');
  out.push('## Cost', '', costTable(results), '');
  return `${out.join('\n')}\n`;
}
