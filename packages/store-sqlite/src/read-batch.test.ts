import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { runSteps, tableRows, unitCosine } from './read-batch.js';

describe('runSteps arrays', () => {
  const db = new DatabaseSync(':memory:');
  db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, NULL)");
  const sql = 'SELECT a, b, a * 2 AS c FROM t ORDER BY a';
  const objects = db.prepare(sql).all();

  it('returns the column names then each row as an array, read back as the rows `all` gives', () => {
    const cache = new Map<string, ReturnType<DatabaseSync['prepare']>>();
    const prepare = (s: string) => {
      let stmt = cache.get(s);
      if (!stmt) {
        stmt = db.prepare(s);
        cache.set(s, stmt);
      }
      return stmt;
    };
    const [arrays, again] = runSteps(db, prepare, unitCosine, [
      { sql, params: [], mode: 'arrays' },
      // The same cached statement in the default mode gives objects again.
      { sql, params: [] },
    ]);
    expect(arrays?.[0]).toEqual(['a', 'b', 'c']);
    expect(arrays?.[1]).toEqual([1, 'x', 2]);
    expect(tableRows(arrays).map(({ a, b, c }) => ({ a, b, c }))).toEqual(objects.map((o) => ({ ...o })));
    expect(again).toEqual(objects);
    const [dup] = runSteps(db, prepare, unitCosine, [
      { sql: 'SELECT 1 AS x, 2 AS x', params: [], mode: 'arrays' },
    ]);
    expect(tableRows(dup)[0]?.x).toBe(2);
    const none = runSteps(db, prepare, unitCosine, [{ sql: `${sql} LIMIT 0`, params: [], mode: 'arrays' }]);
    expect(tableRows(none[0])).toEqual([]);
  });

  it('gives the same shape on a driver without row arrays (Node.js before 22.16)', () => {
    const prepare = (s: string) => {
      const stmt = db.prepare(s);
      return {
        all: (...p: []) => stmt.all(...p),
        run: (...p: []) => stmt.run(...p),
        iterate: (...p: []) => stmt.iterate(...p),
      };
    };
    const [arrays] = runSteps(db, prepare, unitCosine, [{ sql, params: [], mode: 'arrays' }]);
    expect(tableRows(arrays).map(({ a, b, c }) => ({ a, b, c }))).toEqual(objects.map((o) => ({ ...o })));
  });
});
