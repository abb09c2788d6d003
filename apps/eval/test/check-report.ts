import { expect } from 'vitest';
import type { Aggregate } from '../src/metrics.js';
import type { LocomoReport } from '../src/report.js';

/** Every figure of a report is well-formed, in range and consistent with the others. */
export function checkReport(report: LocomoReport, expected: { ks: number[]; conversations: number }): void {
  // No NaN, no Infinity; negative figures only as differences against BM25.
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'number') {
      expect(Number.isFinite(v), path).toBe(true);
      if (!/^(versusBaseline|crossCheck\.bm25MinusPublished)/.test(path))
        expect(v, path).toBeGreaterThanOrEqual(0);
    } else if (Array.isArray(v))
      v.forEach((x, i) => {
        walk(x, `${path}[${i}]`);
      });
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
  };
  walk(report, '');
  expect(report.results.length).toBeGreaterThan(0);
  // At most one row is memSession's default, and it comes first.
  const marked = report.results.filter((r) => r.sessionDefault);
  expect(marked.length).toBeLessThanOrEqual(1);
  if (marked.length === 1) expect(report.results[0]?.sessionDefault).toBe(true);
  expect(report.info.dataSha256).toMatch(/^[0-9a-f]{64}$/);
  // The baseline is scored on the same questions, and every row is compared with it at every k.
  expect(report.baseline.ks).toEqual(expected.ks);
  expect(report.baseline.scores.all.questions).toBe(report.results[0]?.data.questions);
  expect(report.versusBaseline).toHaveLength(report.results.length * expected.ks.length);
  for (const r of report.results) {
    expect(r.ks).toEqual(expected.ks);
    expect(r.data.conversations).toBe(expected.conversations);
    expect(r.conversations).toHaveLength(expected.conversations);
    const unit = (v: number | undefined) => {
      expect(v).toBeTypeOf('number');
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    };
    const check = (a: Aggregate) => {
      let prev = 0;
      for (const k of r.ks) {
        unit(a.recall[k]);
        unit(a.allHit[k]);
        expect(a.allHit[k]).toBeLessThanOrEqual(a.recall[k] as number);
        expect(a.recall[k]).toBeGreaterThanOrEqual(prev);
        prev = a.recall[k] as number;
      }
      unit(a.mrr);
      if (a.questions > 0) unit(a.blockRecall ?? undefined);
    };
    const cats = Object.entries(r.scores.byCategory);
    for (const [, a] of cats) check(a);
    check(r.scores.all);
    check(r.scores.allButAdversarial);
    expect(cats.reduce((n, [, a]) => n + a.questions, 0)).toBe(r.scores.all.questions);
    expect(r.scores.allButAdversarial.questions).toBe(
      r.scores.all.questions - (r.scores.byCategory['5']?.questions ?? 0),
    );
    expect(r.scores.all.questions).toBe(r.data.questions);
    expect(r.recall.queries).toBe(r.data.questions);
    expect(r.ingest.turns).toBe(r.data.turns);
    expect(r.conversations.reduce((n, c) => n + c.turns, 0)).toBe(r.data.turns);
    expect(r.conversations.reduce((n, c) => n + c.questions, 0)).toBe(r.data.questions);
    expect(r.recall.p50Ms).toBeGreaterThan(0);
    expect(r.recall.p50Ms).toBeLessThanOrEqual(r.recall.p95Ms);
    unit(r.recall.episodeShare);
    unit(r.block.episodeShare);
    expect(r.block.meanBytes).toBeGreaterThan(0);
    expect(r.block.meanBytes).toBeLessThanOrEqual(r.block.budgetBytes);
    expect(r.ingest.refusedTurns).toBe(0);
    expect(r.recall.meanReturned).toBeLessThanOrEqual(Math.max(...r.ks));
    expect(r.ingest.totalMs).toBeGreaterThan(0);
    expect(r.ingest.failures).toBe(0);
    expect(r.ingest.activeMemories).toBe(
      Object.values(r.ingest.activeByKind).reduce((n, v) => n + (v ?? 0), 0),
    );
    if (r.episodic) expect(r.ingest.activeByKind.episode).toBe(r.data.turns);
    else expect(r.ingest.activeByKind.episode ?? 0).toBe(0);
  }
}
