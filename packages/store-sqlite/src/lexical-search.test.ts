import { join } from 'node:path';
import type { Belief, Scope } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { belief, quiet, tempDir } from '../test/helpers.js';
import { openSqliteStore } from './index.js';

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
