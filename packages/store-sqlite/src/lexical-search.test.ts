import { join } from 'node:path';
import type { Belief, Scope } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { belief, quiet, tempDir } from '../test/helpers.js';
import { openSqliteStore } from './index.js';
import { looseWords } from './lexical-search.js';

/** `n` beliefs of `scope`, `share` of them holding the word "apple", every one holding "river" or "maple". */
function corpus(scope: Scope, n: number, share: number, from: number): Belief[] {
  return Array.from({ length: n }, (_, i) =>
    belief(scope, {
      attribute: `item_${from + i}`,
      value: i % 2 ? 'river' : 'maple',
      statement: `${(i * 7919) % 100 < share * 100 ? 'apple ' : ''}${i % 2 ? 'river' : 'maple'} number ${from + i}`,
    }),
  );
}

const ranked = (hits: readonly { belief: Belief; score: number }[]) =>
  hits.map((h) => `${h.belief.id} ${h.score}`);

describe('lexical search plans from cached counts', () => {
  // A search plans from cached word counts and reads the index size beside the FTS5 query; when the size moved by
  // more than 2% the counts are read again before planning, so a word that became common is left out at once, and
  // a long-lived store answers like one that has cached nothing.
  for (const searchWorkers of [0, 2]) {
    it(`re-plans when the index size moved (searchWorkers ${searchWorkers})`, async () => {
      const path = join(tempDir(), 'p.db');
      const scope = { userId: 'u' };
      const warm = openSqliteStore({ path, logger: quiet, searchWorkers });
      await warm.importBeliefs(corpus(scope, 1000, 0.3, 0).map((b) => ({ belief: b })));
      const query = 'apple river';
      const cold = async () => {
        const store = openSqliteStore({ path, logger: quiet, searchWorkers });
        try {
          return ranked(await store.searchLexical(scope, query, { limit: 50 }));
        } finally {
          await store.close();
        }
      };
      // "apple" is in 30%: searched for.
      const before = await warm.searchLexical(scope, query, { limit: 50 });
      expect(before[0]?.belief.statement).toMatch(/^apple river/);
      expect(ranked(await warm.searchLexical(scope, query, { limit: 50 }))).toEqual(ranked(before));
      expect(ranked(before)).toEqual(await cold());

      // Now in more than half of the index: left out, so only "river" ranks.
      const added = corpus(scope, 700, 1, 5000);
      await warm.importBeliefs(added.map((b) => ({ belief: b })));
      const after = await warm.searchLexical(scope, query, { limit: 50 });
      expect(after.length).toBe(50);
      expect(new Set(after.map((h) => h.score)).size).toBe(1);
      expect(ranked(after)).toEqual(await cold());

      // Forgotten again below half: searched for again.
      for (const b of added.slice(0, 400)) await warm.forget(scope, b.id, { at: b.storedAt });
      const again = await warm.searchLexical(scope, query, { limit: 50 });
      expect(again[0]?.belief.statement).toMatch(/^apple river/);
      expect(ranked(again)).toEqual(await cold());
      await warm.close();
    });
  }
});

describe('lexical search skips the rows of common words only when none of them can rank', () => {
  // "common" is in 39% of the beliefs, "apple" in 25%: a query for both lets FTS5 score only the rows holding
  // "apple" when the best of those outscore anything a row holding only "common" could. Short "apple" rows do
  // (pruned); long ones do not, so the check after the query must rank every match instead. Either way the list is
  // the head of the exhaustive ranking (a limit of 1000 ranks every match).
  for (const apple of ['short', 'long'] as const) {
    it(`gives the exhaustive head with ${apple} rows for the rarer word`, async () => {
      const store = openSqliteStore({ path: join(tempDir(), `c-${apple}.db`), logger: quiet });
      const scope = { userId: 'u' };
      const filler = apple === 'long' ? ` ${'and then some more words about nothing '.repeat(20)}` : '';
      // 300 "apple" rows, 470 "common" ones (its bound, 2.2 idf, just under the idf of "apple"), 430 others.
      const beliefs = Array.from({ length: 1200 }, (_, i) =>
        belief(scope, {
          attribute: `item_${i}`,
          value: `v${i % 7}`,
          statement:
            i % 4 === 0
              ? `apple${filler} number ${i % 9}`
              : i - Math.floor(i / 4) - 1 < 470
                ? `common thing ${i % 3}`
                : `plain thing ${i % 11}`,
        }),
      );
      await store.importBeliefs(beliefs.map((b) => ({ belief: b })));
      for (const searchWorkers of [0, 2]) {
        const s = openSqliteStore({ path: store.path, logger: quiet, searchWorkers });
        const all = await s.searchLexical(scope, 'common apple', { limit: 1000 });
        for (const limit of [5, 20, 60]) {
          const head = await s.searchLexical(scope, 'common apple', { limit });
          expect(ranked(head), `${apple} ${limit}`).toEqual(ranked(all.slice(0, limit)));
        }
        await s.close();
      }
      await store.close();
    });
  }

  it('leaves out a common word only while the other words hold enough rows, never a word with a digit', () => {
    const df = (t: string) => ({ common: 480, apple: 300, rare: 10, s12: 480 })[t] ?? 0;
    expect(looseWords(['common', 'apple'], df, 1200, 40)).toEqual(['common']);
    // Too few rows left to rank (2k = 800).
    expect(looseWords(['common', 'apple'], df, 1200, 400)).toEqual([]);
    expect(looseWords(['common', 'rare'], df, 1200, 40)).toEqual([]);
    expect(looseWords(['s12', 'apple'], df, 1200, 40)).toEqual([]);
  });
});
