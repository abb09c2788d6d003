/**
 * The batch executor the store's read-only searches (FTS5 lexical, sqlite-vec KNN, exact cosine) are written
 * against: the same SQL runs on the store's own connection or on a search worker's connection (see
 * `search-pool.ts`). Nothing a batch runs writes to the database file; the only writes are to per-connection temp
 * tables.
 */
import type { BeliefStatus } from '@mem01/engine';
import type { Row } from '@mem01/engine/store-kit';

export type SqlValue = string | number | bigint | null | Uint8Array;

/**
 * One statement of a batch. `all` (default) returns its rows; `run` returns none; `arrays` returns the column names
 * and then each row as an array of values (read them with {@link tableRows}): arrays are cheaper than objects to
 * build and, from a search worker, to send; `topCosine` reads rows with `seq`, `id` and an `embedding` blob and
 * returns the `limit` best as `{ seq, id, score }` (cosine to the unit `query`, ties by id descending) without
 * sending every embedding back.
 */
export interface ReadStep {
  readonly sql: string;
  readonly params: readonly SqlValue[];
  readonly mode?: 'all' | 'run' | 'arrays' | 'topCosine';
  readonly query?: Uint8Array;
  readonly limit?: number;
}

/** Runs the steps in order on one connection, inside one read transaction, and returns the rows of each step. */
export type ReadBatch = (steps: readonly ReadStep[]) => Promise<Row[][]>;

/** The statement interface `runSteps` needs (node:sqlite's `StatementSync`; the last two are Node >= 22.16). */
interface Statement {
  all(...params: SqlValue[]): unknown[];
  run(...params: SqlValue[]): unknown;
  iterate(...params: SqlValue[]): Iterable<unknown>;
  setReturnArrays?(enabled: boolean): void;
  columns?(): readonly { readonly name: string }[];
}

/**
 * Executes a batch on one connection. Self-contained (its source is also sent to the search workers): it may use
 * only its arguments.
 */
export function runSteps(
  db: { exec(sql: string): void; readonly isTransaction: boolean },
  prepare: (sql: string) => Statement,
  cosine: (query: Uint8Array, stored: Uint8Array) => number,
  steps: readonly ReadStep[],
): unknown[][] {
  const outer = db.isTransaction;
  if (!outer) db.exec('BEGIN');
  try {
    const out = steps.map((step) => {
      const stmt = prepare(step.sql);
      const params = step.params as SqlValue[];
      const arrays = step.mode === 'arrays';
      // Statements are cached by SQL, so the row shape is set on every use.
      if (typeof stmt.setReturnArrays === 'function') stmt.setReturnArrays(arrays);
      if (arrays) {
        const rows = stmt.all(...params);
        if (typeof stmt.setReturnArrays === 'function' && typeof stmt.columns === 'function') {
          return [stmt.columns().map((c) => c.name), ...rows];
        }
        // Without row arrays in the driver: the same shape from objects.
        const names = Object.keys((rows[0] as object | undefined) ?? {});
        return [names, ...rows.map((r) => names.map((k) => (r as Record<string, unknown>)[k]))];
      }
      if (step.mode === 'run') {
        stmt.run(...params);
        return [];
      }
      if (step.mode === 'topCosine') {
        const limit = step.limit ?? 1;
        const query = step.query as Uint8Array;
        const best: { seq: unknown; id: string; score: number }[] = [];
        const worse = (a: { id: string; score: number }, b: { id: string; score: number }) =>
          a.score < b.score || (a.score === b.score && a.id < b.id);
        for (const raw of stmt.iterate(...params)) {
          const row = raw as { seq: unknown; id: string; embedding: Uint8Array };
          const hit = { seq: row.seq, id: row.id, score: cosine(query, row.embedding) };
          if (best.length >= limit && !worse(best[best.length - 1] as typeof hit, hit)) continue;
          let i = best.length;
          while (i > 0 && worse(best[i - 1] as typeof hit, hit)) i--;
          best.splice(i, 0, hit);
          if (best.length > limit) best.pop();
        }
        return best;
      }
      return stmt.all(...params);
    });
    if (!outer) db.exec('COMMIT');
    return out;
  } catch (err) {
    if (!outer && db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** Per column list, a prototype whose getters read a row array by column name. */
const rowPrototypes = new Map<string, object>();
const VALUES = Symbol('values');

function rowPrototype(columns: readonly string[]): object {
  const key = columns.join('\u0000');
  let proto = rowPrototypes.get(key);
  if (!proto) {
    proto = {};
    columns.forEach((name, i) => {
      Object.defineProperty(proto, name, {
        get(this: { readonly [VALUES]: readonly unknown[] }) {
          return this[VALUES][i];
        },
        enumerable: true,
        configurable: true,
      });
    });
    if (rowPrototypes.size >= 64) rowPrototypes.clear();
    rowPrototypes.set(key, proto);
  }
  return proto;
}

/**
 * The rows of an `arrays` step, read by column name (a later column wins over an earlier namesake). Each row is a
 * view over its array: one small object per row, its columns getters shared by every row of that shape.
 */
export function tableRows(result: readonly unknown[] | undefined): Row[] {
  if (result === undefined || result.length === 0) return [];
  const proto = rowPrototype(result[0] as readonly string[]);
  const rows: Row[] = [];
  for (let i = 1; i < result.length; i++) {
    const row = Object.create(proto) as { [VALUES]: unknown };
    row[VALUES] = result[i];
    rows.push(row as Row);
  }
  return rows;
}

/** What every search needs: the scope (its id and, for the join that enforces it, its keys), a limit, statuses. */
export interface SearchTarget {
  readonly scopeId: number;
  readonly userId: string;
  readonly namespace: string;
  readonly limit: number;
  readonly statuses: readonly BeliefStatus[];
  /** Grant ids whose beliefs are left out (empty: none). */
  readonly excludeGrants: readonly string[];
}

/**
 * Cosine similarity of a unit-length query and a stored embedding, both Float32 little-endian blobs; 0 for a zero
 * vector. Self-contained (its source is also sent to the search workers): it must not reference anything outside
 * its body.
 */
export function unitCosine(query: Uint8Array, stored: Uint8Array): number {
  const view = (b: Uint8Array): Float32Array =>
    b.byteOffset % 4 === 0
      ? new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2)
      : new Float32Array(b.slice().buffer, 0, b.byteLength >> 2);
  const q = view(query);
  const v = view(stored);
  let dot = 0;
  let norm = 0;
  const n = Math.min(q.length, v.length);
  for (let i = 0; i < n; i++) {
    const x = v[i] as number;
    dot += (q[i] as number) * x;
    norm += x * x;
  }
  return norm === 0 ? 0 : dot / Math.sqrt(norm);
}

export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/** The scope filter of a join (scope, statuses, grants left out), with its parameters. */
export function scopeFilter(
  t: Pick<SearchTarget, 'userId' | 'namespace' | 'statuses' | 'excludeGrants'>,
  alias: string,
): { sql: string; params: SqlValue[] } {
  const scoped = `${alias}.user_id = ? AND ${alias}.namespace = ? AND ${alias}.status IN (${placeholders(t.statuses.length)})`;
  if (t.excludeGrants.length === 0) return { sql: scoped, params: [t.userId, t.namespace, ...t.statuses] };
  return {
    sql: `${scoped} AND (${alias}.grant_id IS NULL OR ${alias}.grant_id NOT IN (SELECT value FROM json_each(?)))`,
    params: [t.userId, t.namespace, ...t.statuses, JSON.stringify(t.excludeGrants)],
  };
}
