import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { belief, quiet, t, tempDir } from '../test/helpers.js';
import { openSqliteStore } from './index.js';

describe('vector index without any embedding', () => {
  // The vec0 table is created with the first embedding's dimension; until then, forgetting (which removes a vector
  // from it) must not fail on a store that loaded sqlite-vec (an engine without an embedder).
  it('forget works on a sqlite-vec store that has never held an embedding', async () => {
    const store = openSqliteStore({ path: join(tempDir(), 'v.db'), logger: quiet });
    const scope = { userId: 'u' };
    const b = belief(scope);
    await store.importBeliefs([{ belief: b }]);
    const tombstone = await store.forget(scope, b.id, { at: t(2) });
    expect(tombstone.status).toBe('forgotten');
    expect(await store.searchLexical(scope, 'Lisbon', { limit: 5 })).toEqual([]);
    await store.close();
  });
});
