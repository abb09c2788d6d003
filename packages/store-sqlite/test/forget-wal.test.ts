/**
 * Forgetting while another connection reads. A read transaction that began before the forget keeps the WAL frames
 * holding the old text alive: no checkpoint can remove them until it ends. The store says so (`scrubPending`),
 * keeps retrying in the background, and `flushForgotten()` waits for it; once the reader is done, no byte of the
 * forgotten text is left in the file or its WAL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StoreError } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/index.js';
import { belief, fileBytes, quiet, t, tempDir } from './helpers.js';

const scope = { userId: 'wal-user' };
const walBytes = (path: string) =>
  existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`) : Buffer.alloc(0);

async function seeded(secret: string) {
  const path = join(tempDir(), 'memory.db');
  const warnings: string[] = [];
  const store = openSqliteStore({ path, dimensions: 4, logger: { ...quiet, warn: (m) => warnings.push(m) } });
  const b = belief(scope, { value: secret, statement: `The user lives in ${secret}.` });
  await store.commit({ scope, inserts: [{ belief: b }], updates: [], audit: [] });
  return { path, store, id: b.id, warnings };
}

/** Another connection on the file, inside a read transaction that has read the belief. */
function reader(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec('BEGIN');
  db.prepare('SELECT count(*) AS n FROM beliefs').get();
  return db;
}

describe('forget while another connection reads', () => {
  it('the text stays in the WAL only until the reader ends; flushForgotten waits for it', async () => {
    const secret = 'Zanzibarville';
    const { path, store, id, warnings } = await seeded(secret);
    const other = reader(path);
    await store.forget(scope, id, { at: t(5) });
    // The reader's snapshot still needs the old frames: this is the window the README describes.
    expect(store.scrubPending).toBe(true);
    expect(fileBytes(path).includes(Buffer.from(secret))).toBe(true);
    expect(warnings.join('\n')).toMatch(/another connection is reading/);
    await expect(store.flushForgotten({ timeoutMs: 100 })).rejects.toBeInstanceOf(StoreError);

    other.exec('COMMIT');
    other.close();
    await store.flushForgotten();
    expect(store.scrubPending).toBe(false);
    expect(fileBytes(path).includes(Buffer.from(secret))).toBe(false);
    expect(walBytes(path).length).toBe(0);
    await store.close();
  });

  it('without anyone waiting, the background retry clears the WAL once the reader is done', async () => {
    const secret = 'Quixotebury';
    const { path, store, id } = await seeded(secret);
    const other = reader(path);
    await store.forget(scope, id, { at: t(5) });
    expect(store.scrubPending).toBe(true);
    other.exec('COMMIT');
    other.close();
    const deadline = Date.now() + 20_000;
    while (store.scrubPending && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(store.scrubPending).toBe(false);
    expect(fileBytes(path).includes(Buffer.from(secret))).toBe(false);
    await store.close();
  });

  it('with no reader, forget leaves nothing pending; a later reader only delays the scrub', async () => {
    const { store, id, path } = await seeded('Nowhereton');
    await store.forget(scope, id, { at: t(5) });
    expect(store.scrubPending).toBe(false);
    await expect(store.flushForgotten()).resolves.toBeUndefined();
    const b = belief(scope, {
      attribute: 'drink',
      value: 'Yerbamatevale',
      statement: 'The user drinks Yerbamatevale.',
    });
    await store.commit({ scope, inserts: [{ belief: b }], updates: [], audit: [] });
    const other = reader(path);
    await store.forget(scope, b.id, { at: t(6) });
    expect(store.scrubPending).toBe(true);
    other.exec('COMMIT');
    other.close();
    await store.flushForgotten();
    expect(fileBytes(path).includes(Buffer.from('Yerbamatevale'))).toBe(false);
    await store.close();
  });
});
