/**
 * The root README quotes the LoCoMo figures a memSession user gets by default. They must be the committed report's
 * (`bench/results/locomo-memory.json`, written by `pnpm bench`), rounded as the README prints them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Row {
  readonly sessionDefault?: boolean;
  readonly episodic: boolean;
  readonly scores: {
    readonly allButAdversarial: { readonly recall: Record<string, number>; readonly blockRecall: number };
  };
}

describe('the root README’s LoCoMo figures', () => {
  it('are those of the committed memory-store report, in whole percent', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    const report = JSON.parse(readFileSync(join(ROOT, 'bench/results/locomo-memory.json'), 'utf8')) as {
      results: Row[];
      baseline: { scores: { allButAdversarial: { recall: Record<string, number> } } };
    };
    const pct = (x: number) => Math.round(x * 100);
    const headline = report.results.find((r) => r.sessionDefault === true)!;
    const beliefsOnly = report.results.find((r) => r.episodic === false)!;
    const m =
      /recalls by default covers (\d+) % of the turns that questions need in its top 10 \(a turn-level BM25 baseline: (\d+) %\), and the 800-byte block the model sees carries (\d+) % of them .*?beliefs alone would cover (\d+) %/.exec(
        readme,
      );
    expect(m, 'the README states the LoCoMo figures').not.toBeNull();
    expect(m!.slice(1, 5).map(Number)).toEqual([
      pct(headline.scores.allButAdversarial.recall['10']!),
      pct(report.baseline.scores.allButAdversarial.recall['10']!),
      pct(headline.scores.allButAdversarial.blockRecall),
      pct(beliefsOnly.scores.allButAdversarial.recall['10']!),
    ]);
  });
});

describe('the eval README’s LongMemEval dev60 figures', () => {
  it('are those of the committed dev60 memory-store report, both rows at k = 5 and 10', () => {
    const readme = readFileSync(join(ROOT, 'apps/eval/README.md'), 'utf8');
    const report = JSON.parse(
      readFileSync(join(ROOT, 'bench/results/longmemeval-dev60-memory.json'), 'utf8'),
    ) as {
      results: {
        sessionDefault: boolean;
        assistantTurns: string;
        scores: {
          byCategory: Record<string, { recall: Record<string, number> }>;
          all: { recall: Record<string, number> };
        };
      }[];
    };
    const cell = (x: number) => (x * 100).toFixed(1);
    const row = (r: (typeof report.results)[number], k: number) =>
      [
        ...['1', '2', '3', '4'].map((c) => cell(r.scores.byCategory[c]!.recall[k]!)),
        cell(r.scores.all.recall[k]!),
      ].join(' | ');
    const head = report.results.find((r) => r.sessionDefault)!;
    const kept = report.results.find((r) => r.assistantTurns === 'episodes')!;
    for (const k of [5, 10]) {
      expect(readme).toContain(`| **memSession default (beliefs + episodes)** | ${k} | ${row(head, k)} |`);
      expect(readme).toContain(`| assistant turns kept as labelled episodes | ${k} | ${row(kept, k)} |`);
    }
  });
});

describe('the eval README’s question-played figures', () => {
  it('are those of the committed memory-store reports: normal and played block recall, both files', () => {
    const readme = readFileSync(join(ROOT, 'apps/eval/README.md'), 'utf8');
    type Scores = { allButAdversarial: { blockRecall: number } };
    const head = (file: string) => {
      const report = JSON.parse(readFileSync(join(ROOT, 'bench/results', file), 'utf8')) as {
        results: { sessionDefault: boolean; scores: Scores; played: { scores: Scores } | null }[];
      };
      const r = report.results.find((x) => x.sessionDefault)!;
      const normal = r.scores.allButAdversarial.blockRecall * 100;
      const played = r.played!.scores.allButAdversarial.blockRecall * 100;
      return { normal: normal.toFixed(1), played: played.toFixed(1), delta: (played - normal).toFixed(1) };
    };
    for (const [label, file] of [
      ['LoCoMo10', 'locomo-memory.json'],
      ['LongMemEval_S dev60', 'longmemeval-dev60-memory.json'],
    ] as const) {
      const f = head(file);
      const line = readme.split('\n').find((l) => l.startsWith(`| ${label} | `));
      expect(line, `the README's question-played row for ${label}`).toBeDefined();
      const cells = line!.split('|').map((c) => c.trim());
      expect(cells[2]).toBe(f.normal);
      const [value, delta] = [cells[4]!.split(' ')[0], /\((.*)\)/.exec(cells[4]!)?.[1]];
      expect(value).toBe(f.played);
      expect(Number(delta!.replace('−', '-').replace('±', ''))).toBeCloseTo(Number(f.delta), 1);
    }
  });
});
