/**
 * Published retrieval-only reference figures for LoCoMo (recall@k in percent), from the data README: BM25 and
 * DRAGON at turn level. Keys are LoCoMo category numbers plus `allButAdversarial` and `all`.
 *
 * They hold for one file only, `locomo10.json` at the commit the data README names, whole: the report shows them as
 * a labelled cross-check when the file's sha256 is {@link LOCOMO10_SHA256} and no slice was taken. Every verdict
 * compares against the BM25 baseline the eval computes on the file it was given (`bm25.ts`).
 */
export interface ReferenceRow {
  readonly system: string;
  readonly k: number;
  /** Percent per category number; null where the source gives no figure. */
  readonly byCategory: Readonly<Record<number, number | null>>;
  readonly allButAdversarial: number | null;
  readonly all: number | null;
}

export const REFERENCE_ROWS: readonly ReferenceRow[] = [
  {
    system: 'BM25, turn + date',
    k: 5,
    byCategory: { 4: 62.9, 1: 19.3, 2: 63.0, 3: 26.2, 5: 62.1 },
    allButAdversarial: 52.7,
    all: 54.8,
  },
  {
    system: 'BM25, turn + date',
    k: 10,
    byCategory: { 4: 68.8, 1: 27.5, 2: 68.9, 3: 28.4, 5: 67.3 },
    allButAdversarial: 58.8,
    all: 60.7,
  },
  {
    system: 'DRAGON, turn + date',
    k: 5,
    byCategory: { 4: 68.0, 1: 35.4, 2: 70.4, 3: 33.1, 5: 43.9 },
    allButAdversarial: null,
    all: 56.7,
  },
  {
    system: 'DRAGON, turn + date',
    k: 10,
    byCategory: { 4: 77.7, 1: 46.6, 2: 77.3, 3: 40.8, 5: 54.7 },
    allButAdversarial: null,
    all: 66.2,
  },
];

/** The published BM25 turn-level row at `k` (cross-check only). */
export function bm25Reference(k: number): ReferenceRow | undefined {
  return REFERENCE_ROWS.find((r) => r.system.startsWith('BM25') && r.k === k);
}

/** sha256 of snap-research/LoCoMo `data/locomo10.json` at 3eb6f2c, the file the published figures are for. */
export const LOCOMO10_SHA256 = '79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4';

/** sha256 of `longmemeval-s-dev60.json.gz` as the data README gives it (the compressed file's bytes). */
export const DEV60_SHA256 = '0b1589c1aced013137050363725041ab97fade344694703eb89b3a1e3e4b4837';

/** Target (issue 23): the memory store's recall p95 on the dev60 haystacks, as the eval reports it, in ms. */
export const TARGET_DEV60_RECALL_P95_MS = 15;

/** Target (issue 23): the whole dev60 eval, memSession default, one store, on a 2-core machine, in minutes. */
export const TARGET_DEV60_WALL_MINUTES = 5;

/** Target (issue 16): recall@10 excluding adversarial of the memSession default, percent. */
export const TARGET_RECALL10_EXCL_ADVERSARIAL = 72;

/** Target (issue 16): block recall excluding adversarial at the default 800-byte budget, percent. */
export const TARGET_BLOCK_RECALL_EXCL_ADVERSARIAL = 60;

/** Target (issue 16): every category above the file's own turn-level BM25 at these cut-offs. */
export const TARGET_ABOVE_BASELINE_KS: readonly number[] = [5, 10];
