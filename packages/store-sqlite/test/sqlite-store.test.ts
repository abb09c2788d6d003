import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  CapabilityError,
  ConfigError,
  CorruptStoreError,
  InvalidInputError,
  SchemaTooNewError,
  StoreError,
} from '@mem01/engine';
import { FORGOTTEN_MARKER, normalizeVector, vectorToBytes } from '@mem01/engine/store-kit';
import { completing, expectCurrentFeatures, expectOldGrantWorks } from '@mem01/store-conformance';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, openSqliteStore, SQLITE_SCHEMA_VERSION } from '../src/index.js';
import { migrate } from '../src/migrations.js';
import { belief, fileBytes, mulberry32, quiet, t, tempDir } from './helpers.js';

describe('paths and file modes', () => {
  it('needs a path: the store reads no environment (the default file is @mem01/runtime’s rule)', () => {
    expect(() => openSqliteStore({ logger: quiet })).toThrow(ConfigError);
    expect(() => openSqliteStore({ path: ' ', logger: quiet })).toThrow(/needs a path.*@mem01\/runtime/);
  });

  it('creates the folder 0700 and the file 0600', async () => {
    const home = join(tempDir(), 'nested', 'home');
    const store = openSqliteStore({ path: join(home, 'memory.db'), logger: quiet });
    expect(store.path).toBe(join(home, 'memory.db'));
    await store.close();
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, 'memory.db')).mode & 0o777).toBe(0o600);
  });

  it('logs the active vector mode once, on one line', async () => {
    const lines: string[] = [];
    const logger = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    const dir = tempDir();
    const a = openSqliteStore({ path: join(dir, 'a.db'), logger });
    const b = openSqliteStore({ path: join(dir, 'b.db'), vector: 'exact', logger });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/sqlite-vec v\d/);
    expect(lines[1]).toMatch(/exact cosine/);
    expect(lines.every((l) => !l.includes('\n'))).toBe(true);
    expect(a.capabilities).toMatchObject({ vectorSearch: 'index', vectorIndex: 'sqlite-vec' });
    expect(b.capabilities).toMatchObject({ vectorSearch: 'exact', vectorIndex: 'exact-cosine' });
    await a.close();
    await b.close();
  });

  it('a caller-owned handle stays open after close()', async () => {
    const db = new DatabaseSync(join(tempDir(), 'own.db'), { allowExtension: true });
    const store = openSqliteStore({ database: db, logger: quiet });
    await store.enqueue([
      { scope: { userId: 'u' }, sessionId: 's', position: 0, role: 'user', text: 'hello', at: t(0) },
    ]);
    await store.close();
    expect(db.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 1 });
    db.close();
  });
});

describe('refusing bad files without touching them', () => {
  it('a file that is not a SQLite database: CorruptStoreError naming the path, bytes unchanged', () => {
    const path = join(tempDir(), 'notes.db');
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(20));
    const before = readFileSync(path);
    expect(() => openSqliteStore({ path, logger: quiet })).toThrow(CorruptStoreError);
    expect(() => openSqliteStore({ path, logger: quiet })).toThrow(path);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('a SQLite file with a corrupt schema page: CorruptStoreError naming the path, bytes unchanged', async () => {
    const path = join(tempDir(), 'corrupt.db');
    const store = openSqliteStore({ path, logger: quiet });
    await store.close();
    const bytes = readFileSync(path);
    // Keep the 100-byte header; scramble the rest of page 1 (the schema b-tree).
    for (let i = 100; i < 4096 && i < bytes.length; i++) bytes[i] = (i * 131) & 0xff;
    writeFileSync(path, bytes);
    const error = (() => {
      try {
        openSqliteStore({ path, logger: quiet });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CorruptStoreError);
    expect((error as Error).message).toContain(path);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('a file written by a newer schema: SchemaTooNewError naming both versions, bytes unchanged', async () => {
    const path = join(tempDir(), 'newer.db');
    await openSqliteStore({ path, logger: quiet }).close();
    const raw = new DatabaseSync(path);
    raw.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run();
    raw.close();
    const before = readFileSync(path);
    let error: unknown;
    try {
      openSqliteStore({ path, logger: quiet });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toContain('99');
    expect((error as Error).message).toContain(String(SQLITE_SCHEMA_VERSION));
    expect((error as Error).message).toContain(path);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('a SQLite database of another application is refused, unchanged', () => {
    const path = join(tempDir(), 'other.db');
    const raw = new DatabaseSync(path);
    raw.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)');
    raw.close();
    const before = readFileSync(path);
    expect(() => openSqliteStore({ path, logger: quiet })).toThrow(/another application/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('an unwritable folder gives a clear StoreError', () => {
    // Root ignores permission bits, so as root use sysfs, where nobody may create files.
    let dir: string;
    if (process.getuid?.() === 0) {
      dir = '/sys';
    } else {
      dir = join(tempDir(), 'locked');
      mkdirSync(dir, { mode: 0o500 });
    }
    const path = join(dir, 'mem01-test.db');
    expect(() => openSqliteStore({ path, logger: quiet })).toThrow(StoreError);
    expect(() => openSqliteStore({ path, logger: quiet })).toThrow(/not writable|cannot create/);
    expect(existsSync(path)).toBe(false);
  });

  it('vector: sqlite-vec on a handle that cannot load extensions fails loudly', () => {
    const db = new DatabaseSync(join(tempDir(), 'noext.db'));
    expect(() => openSqliteStore({ database: db, vector: 'sqlite-vec', logger: quiet })).toThrow(
      CapabilityError,
    );
    const auto = openSqliteStore({ database: db, logger: quiet });
    expect(auto.capabilities.vectorSearch).toBe('exact');
    db.close();
  });

  it('a configured dimension that differs from the file is refused', async () => {
    const path = join(tempDir(), 'dims.db');
    await openSqliteStore({ path, dimensions: 4, logger: quiet }).close();
    expect(() => openSqliteStore({ path, dimensions: 8, logger: quiet })).toThrow(/4-dimension/);
  });
});

describe('migrations', () => {
  it('an empty file migrates to the current version, and reopening is a no-op', async () => {
    const path = join(tempDir(), 'm.db');
    const store = openSqliteStore({ path, logger: quiet });
    expect((await store.info()).schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await store.close();
    const again = openSqliteStore({ path, logger: quiet });
    expect((await again.info()).schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    await again.close();
  });

  it('steps are numbered 1..n without gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(SQLITE_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  for (const from of MIGRATIONS.map((m) => m.version).filter((v) => v < SQLITE_SCHEMA_VERSION)) {
    it(`a file at version ${from} opens with its data and gains the later steps`, async () => {
      const path = join(tempDir(), `v${from}.db`);
      const raw = new DatabaseSync(path);
      raw.exec('PRAGMA journal_mode = WAL');
      migrate(raw, path, from);
      // Data written by the old version: a belief (with its FTS row via trigger) and a queued turn.
      raw.exec("INSERT INTO scopes (id, user_id, namespace) VALUES (1, 'old-user', '')");
      const b = belief({ userId: 'old-user' }, { statement: 'The user grows tomatoes.', value: 'tomatoes' });
      raw
        .prepare(
          `INSERT INTO beliefs (id, scope_id, user_id, namespace, kind, subject, attribute, value, statement, confidence,
           status, version, stored_at, updated_at, evidence, source)
           VALUES (?, 1, 'old-user', '', 'fact', 'user', 'garden', ?, ?, 0.9, 'active', 1, ?, ?, '[]', 'extracted')`,
        )
        .run(b.id, b.value, b.statement, b.storedAt, b.updatedAt);
      raw
        .prepare(
          `INSERT INTO outbox (id, user_id, namespace, session_id, position, role, text, at, idempotency_key, accepted_at)
           VALUES ('e1', 'old-user', '', 's1', 0, 'user', 'I grow tomatoes', ?, 's1:0:x', ?)`,
        )
        .run(t(0), t(0));
      // A capture grant, from the version that has them (5): no key, no host ids.
      const oldGrant = {
        id: 'old-grant',
        scope: { userId: 'old-grantee', namespace: '' },
        intentDigest: 'ab'.repeat(32),
        grantedAt: t(0),
        expiresAt: null,
        revokedAt: null,
      };
      if (from >= 5) {
        raw
          .prepare(
            `INSERT INTO capture_grants (id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at)
             VALUES (?, 'old-grantee', '', ?, ?, NULL, NULL)`,
          )
          .run(oldGrant.id, oldGrant.intentDigest, oldGrant.grantedAt);
      }
      expect(
        (raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value,
      ).toBe(String(from));
      raw.close();

      const store = openSqliteStore({ path, logger: quiet });
      expect((await store.info()).schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
      const scope = { userId: 'old-user' };
      expect((await store.get(scope, b.id))?.statement).toBe('The user grows tomatoes.');
      expect((await store.searchLexical(scope, 'tomato', { limit: 5 })).map((h) => h.belief.id)).toEqual([
        b.id,
      ]);
      const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: t(1) });
      expect(claim?.entries.map((e) => e.text)).toEqual(['I grow tomatoes']);
      // A turn accepted before captures were bound to grants is bound to none.
      expect(claim?.entries[0]).not.toHaveProperty('grantId');
      // Later steps work: operation ids (v2) and the audit log (v2).
      const op = { operationId: 'op-1', operationFingerprint: 'f' };
      const item = [{ role: 'user', content: 'x' }];
      expect((await store.appendItems(scope, 's1', item, op)).duplicate).toBe(false);
      expect((await store.appendItems(scope, 's1', item, op)).duplicate).toBe(true);
      // v5: an old belief has no metadata, origin or accesses, and gains accesses; keys, grants and budgets work.
      const old = await store.get(scope, b.id);
      expect(old).not.toHaveProperty('metadata');
      expect(old).not.toHaveProperty('accessCount');
      await expectCurrentFeatures(store, scope, b.id);
      // v7: a grant recorded before keeps working, and binds what it captures from now on.
      if (from >= 5) await expectOldGrantWorks(store, oldGrant);
      await store.close();
    });
  }

  it('a file at version 3 keeps its transcripts: a session is its first owner’s, one with none stays open', async () => {
    const path = join(tempDir(), 'v3-transcripts.db');
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA journal_mode = WAL');
    migrate(raw, path, 3);
    const insert = raw.prepare(
      'INSERT INTO transcript_items (session_id, position, item, owner_user_id, owner_namespace) VALUES (?, ?, ?, ?, ?)',
    );
    // Version 3 recorded an owner per item, when the caller gave one, and never compared them.
    insert.run('owned', 0, JSON.stringify({ n: 0 }), null, null);
    insert.run('owned', 1, JSON.stringify({ n: 1 }), 'alice', 'work');
    insert.run('owned', 2, JSON.stringify({ n: 2 }), 'bob', '');
    insert.run('open', 0, JSON.stringify({ n: 0 }), null, null);
    raw.close();

    const store = openSqliteStore({ path, logger: quiet });
    const alice = { userId: 'alice', namespace: 'work' };
    const bob = { userId: 'bob' };
    expect(await store.getItems(alice, 'owned')).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(await store.getItems(bob, 'owned')).toEqual([]);
    expect(await store.getItems({ userId: 'alice' }, 'owned')).toEqual([]);
    await expect(store.appendItems(bob, 'owned', [{ n: 3 }])).rejects.toThrow(InvalidInputError);
    // No owned item: open to every scope until the first owned append.
    expect(await store.getItems(alice, 'open')).toEqual([{ n: 0 }]);
    expect(await store.appendItems(bob, 'open', [{ n: 1 }])).toEqual({ positions: [1], duplicate: false });
    expect(await store.getItems(alice, 'open')).toEqual([]);
    expect(await store.getItems(bob, 'open')).toEqual([{ n: 0 }, { n: 1 }]);
    expect((await store.eraseUser('alice')).transcriptItems).toBe(3);
    expect((await store.eraseUser('bob')).transcriptItems).toBe(2);
    await store.close();
  });

  it('migrating twice (a raced second process) changes nothing', async () => {
    const path = join(tempDir(), 'twice.db');
    await openSqliteStore({ path, logger: quiet }).close();
    const raw = new DatabaseSync(path);
    const schema = () => raw.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    const before = schema();
    migrate(raw, path);
    expect(schema()).toEqual(before);
    raw.close();
  });
});

describe('bad and hostile input', () => {
  it('text over maxTextBytes is refused with InvalidInputError and writes nothing', async () => {
    const store = openSqliteStore({ path: join(tempDir(), 'x.db'), maxTextBytes: 64, logger: quiet });
    const scope = { userId: 'u' };
    const long = 'é'.repeat(40); // 80 bytes
    await expect(
      store.enqueue([{ scope, sessionId: 's', position: 0, role: 'user', text: long, at: t(0) }]),
    ).rejects.toThrow(InvalidInputError);
    await expect(
      store.commit({
        scope,
        inserts: [{ belief: belief(scope, { value: long.slice(0, 10), statement: long }) }],
        updates: [],
        audit: [],
      }),
    ).rejects.toThrow(/over the limit of 64/);
    await expect(
      store.appendItems(scope, 's', [{ role: 'user', content: long }], {
        enqueue: [{ index: 0, role: 'user', text: long, at: t(0) }],
      }),
    ).rejects.toThrow(InvalidInputError);
    expect(await store.getItems(scope, 's')).toEqual([]);
    expect((await store.info()).outbox.queued).toBe(0);
    expect((await store.list(scope)).items).toEqual([]);
    await store.close();
  });

  const hostile = [
    `Robert'); DROP TABLE beliefs; -- likes "quotes" and NEAR(a b) AND OR NOT * ^start col:value`,
    'nul\u0000inside the text and more',
    'emoji 🎉🧪 and combining e\u0301 and 日本語のテキスト',
    '"unbalanced quote ( paren { brace',
  ];

  for (const vector of ['sqlite-vec', 'exact'] as const) {
    it(`SQL, FTS syntax, NUL and emoji are stored and searched literally (${vector})`, async () => {
      const store = openSqliteStore({ path: join(tempDir(), 'h.db'), vector, logger: quiet });
      const scope = { userId: 'u' };
      const beliefs = hostile.map((text, i) =>
        belief(scope, { attribute: `a${i}`, value: `v${i}`, statement: text }),
      );
      await store.commit({ scope, inserts: beliefs.map((b) => ({ belief: b })), updates: [], audit: [] });
      for (const b of beliefs) {
        expect(await store.get(scope, b.id)).toEqual(b);
        const hits = await store.searchLexical(scope, b.statement, { limit: 10 });
        expect(hits[0]?.belief.id).toBe(b.id);
      }
      for (const q of [
        '"',
        '*',
        'NEAR(',
        ')',
        '\u0000',
        '🎉',
        'AND',
        "'; DROP TABLE outbox; --",
        '^',
        '{',
        ':',
      ]) {
        await expect(store.searchLexical(scope, q, { limit: 5 })).resolves.toBeInstanceOf(Array);
      }
      expect((await store.searchLexical(scope, 'DROP', { limit: 5 })).map((h) => h.belief.id)).toEqual([
        beliefs[0]!.id,
      ]);
      // Items and turns keep NUL and emoji exactly.
      await store.appendItems(scope, 's', [{ content: hostile[1] }, { content: hostile[2] }], {
        enqueue: [{ index: 0, role: 'user', text: hostile[1]!, at: t(0) }],
      });
      expect(await store.getItems(scope, 's')).toEqual([{ content: hostile[1] }, { content: hostile[2] }]);
      const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: t(1) });
      expect(claim?.entries[0]?.text).toBe(hostile[1]);
      await store.close();
    });
  }
});

describe('lexical search at scale', () => {
  it('words in more than half of all beliefs are dropped from the query without changing the ranking', async () => {
    const path = join(tempDir(), 'common.db');
    const store = openSqliteStore({ path, logger: quiet });
    const scope = { userId: 'u' };
    const inserts = Array.from({ length: 1200 }, (_, i) => ({
      belief: belief(scope, {
        attribute: `item_${i}`,
        value: `item ${i}`,
        statement: `The user likes item number ${i}.`,
      }),
    }));
    const tomato = belief(scope, {
      attribute: 'garden',
      value: 'tomatoes',
      statement: 'The user grows tomatoes.',
    });
    const tomatoLike = belief(scope, {
      attribute: 'food',
      value: 'tomato soup',
      statement: 'The user likes tomato soup.',
    });
    await store.importBeliefs([...inserts, { belief: tomato }, { belief: tomatoLike }]);
    const hits = await store.searchLexical(scope, 'Does the user like tomatoes?', { limit: 10 });
    expect(hits.map((h) => h.belief.id).sort()).toEqual([tomato.id, tomatoLike.id].sort());
    // The same scores as FTS5 gives the full query (the dropped words weigh about nothing).
    const raw = new DatabaseSync(path);
    const full = raw
      .prepare(
        `SELECT b.id AS id, -bm25(belief_fts, 1.0, 1.0, 0.5, 0.5) AS score FROM belief_fts
           JOIN beliefs b ON b.seq = belief_fts.rowid WHERE belief_fts MATCH '"user" OR "like" OR "tomatoes"'
          ORDER BY score DESC LIMIT 2`,
      )
      .all() as { id: string; score: number }[];
    raw.close();
    expect(hits.map((h) => h.belief.id)).toEqual(full.map((f) => f.id));
    for (const [i, h] of hits.entries()) expect(h.score).toBeCloseTo(full[i]!.score, 3);
    // A query made only of such words finds nothing, like an all-stop-word query.
    expect(await store.searchLexical(scope, 'the user likes', { limit: 10 })).toEqual([]);
    // Rare words still match.
    expect((await store.searchLexical(scope, 'number 77', { limit: 1 }))[0]?.belief.attribute).toBe(
      'item_77',
    );
    await store.close();
  });
});

describe('transactions', () => {
  it('drop erases the text of the turns it sets dead and records the reason', async () => {
    const path = join(tempDir(), 'drop.db');
    const store = openSqliteStore({ path, logger: quiet });
    const scope = { userId: 'u' };
    await store.enqueue([
      { scope, sessionId: 's', position: 0, role: 'user', text: 'my secret plan', at: t(0), grantId: 'g1' },
    ]);
    const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: t(1), userId: 'u' });
    await store.drop(claim!, { reason: 'capture grant g1 was revoked' });
    await store.close();
    const raw = new DatabaseSync(path);
    expect(raw.prepare('SELECT status, text, last_error, attempts, grant_id FROM outbox').all()).toEqual([
      { status: 'dead', text: '', last_error: 'capture grant g1 was revoked', attempts: 0, grant_id: 'g1' },
    ]);
    raw.close();
  });

  it('appendItems and its enqueue roll back together when the outbox write fails', async () => {
    const path = join(tempDir(), 'tx.db');
    const store = openSqliteStore({ path, logger: quiet });
    const raw = new DatabaseSync(path);
    raw.exec(`CREATE TRIGGER boom BEFORE INSERT ON outbox WHEN new.text = 'boom'
              BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    const scope = { userId: 'u' };
    await expect(
      store.appendItems(scope, 's', [{ content: 'ok' }, { content: 'boom' }], {
        operationId: 'op',
        enqueue: [
          { index: 0, role: 'user', text: 'ok', at: t(0) },
          { index: 1, role: 'user', text: 'boom', at: t(0) },
        ],
      }),
    ).rejects.toThrow(StoreError);
    expect(await store.getItems(scope, 's')).toEqual([]);
    expect((await store.info()).outbox.queued).toBe(0);
    raw.exec('DROP TRIGGER boom');
    raw.close();
    // The same operation id is not burnt by the failed attempt.
    const ok = await store.appendItems(scope, 's', [{ content: 'ok' }], {
      operationId: 'op',
      enqueue: [{ index: 0, role: 'user', text: 'ok', at: t(0) }],
    });
    expect(ok).toEqual({ positions: [0], duplicate: false });
    await store.close();
  });
});

describe('forgetting is real: the text leaves the file bytes', () => {
  for (const vector of ['sqlite-vec', 'exact'] as const) {
    it(`after forget + checkpoint, no byte of the forgotten text remains (${vector})`, async () => {
      const path = join(tempDir(), 'forget.db');
      const store = openSqliteStore({ path, vector, dimensions: 8, logger: quiet, vectorIndexMinBeliefs: 1 });
      const scope = { userId: 'u-forget' };
      // Lower case and stem-invariant, so the FTS index holds exactly these bytes as a term.
      const secret = 'zanzibarquox';
      const statement = `The user secretly lives in ${secret}.`;
      const session = 'sess-forget';
      await store.appendItems(scope, session, [{ role: 'user', content: 'hello' }], {
        enqueue: [{ index: 0, role: 'user', text: 'hello', at: t(0) }],
      });
      // The transcript holds the turn the belief comes from and an assistant reply that repeats the secret.
      await store.appendItems(scope, session, [
        { role: 'user', content: `I moved to ${secret} in May` },
        { role: 'assistant', content: [{ type: 'output_text', text: `${secret} is lovely` }] },
      ]);
      await store.enqueue([
        {
          scope,
          sessionId: session,
          position: 1,
          role: 'user',
          text: `I moved to ${secret} in May`,
          at: t(1),
        },
        { scope, sessionId: session, position: 2, role: 'user', text: `${secret} is lovely`, at: t(2) },
      ]);
      const claim = await store.claim({ worker: 'w', leaseMs: 60_000, now: t(3), maxEntries: 1 });
      const embedding = new Float32Array([0.11, 0.22, 0.33, 0.44, 0.55, 0.66, 0.77, 0.88]);
      const z = belief(scope, {
        attribute: 'home_city',
        value: secret,
        statement,
        evidence: [{ sessionId: session, position: 1, role: 'user', quote: `moved to ${secret}`, at: t(1) }],
      });
      const keep = belief(scope, { attribute: 'drink', value: 'tea', statement: 'The user drinks tea.' });
      await store.commit({
        scope,
        inserts: [{ belief: z, embedding }, { belief: keep }],
        updates: [],
        audit: [{ at: t(3), scope, beliefId: z.id, action: 'add', actor: 'test' }],
        complete: completing(claim!),
      });
      store.checkpoint();
      const needle = Buffer.from(secret, 'utf8');
      const vecNeedle = Buffer.from(vectorToBytes(embedding));
      // sqlite-vec indexes a unit-length copy of the vector.
      const unitNeedle = Buffer.from(vectorToBytes(normalizeVector(embedding)));
      // The test can fail: before forgetting, the text and the vector are in the file.
      expect(fileBytes(path).includes(needle)).toBe(true);
      expect(fileBytes(path).includes(vecNeedle)).toBe(true);
      expect(fileBytes(path).includes(unitNeedle)).toBe(vector === 'sqlite-vec');

      // forget checkpoints by itself: no separate checkpoint call is needed for the bytes to be gone.
      await store.forget(scope, z.id, { at: t(10) });
      const after = fileBytes(path);
      expect(after.includes(needle)).toBe(false);
      expect(after.includes(Buffer.from(statement, 'utf8'))).toBe(false);
      expect(after.includes(vecNeedle)).toBe(false);
      expect(after.includes(unitNeedle)).toBe(false);
      expect(await store.getItems(scope, session)).toEqual([
        { role: 'user', content: 'hello' },
        { role: 'user', content: FORGOTTEN_MARKER },
        { role: 'assistant', content: [{ type: 'output_text', text: `${FORGOTTEN_MARKER} is lovely` }] },
      ]);
      // Also not in the WAL before a checkpoint-free reader looks (the WAL was truncated).
      expect(existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`).length : 0).toBe(0);
      // The rest still works.
      expect((await store.searchLexical(scope, 'tea', { limit: 5 })).map((h) => h.belief.id)).toEqual([
        keep.id,
      ]);
      expect(
        await store.searchLexical(scope, secret, { limit: 5, statuses: ['forgotten', 'active'] }),
      ).toEqual([]);
      await store.close();
    });
  }
});

describe('vector index bookkeeping', () => {
  it('embeddings written without sqlite-vec are indexed when a sqlite-vec connection opens', async () => {
    const path = join(tempDir(), 'mix.db');
    const scope = { userId: 'u' };
    // One belief through a connection that opens with `options`, then closed.
    const writeOne = async (
      options: { dimensions?: number; vector?: 'exact' },
      attribute: string,
      v: number[],
    ) => {
      const store = openSqliteStore({ path, logger: quiet, ...options });
      const b = belief(scope, { attribute });
      await store.commit({
        scope,
        inserts: [{ belief: b, embedding: new Float32Array(v) }],
        updates: [],
        audit: [],
      });
      await store.close();
      return b;
    };
    await writeOne({ dimensions: 4 }, 'a', [1, 0, 0, 0]);
    const b = await writeOne({ vector: 'exact' }, 'b', [0, 1, 0, 0]);
    const again = openSqliteStore({ path, logger: quiet });
    expect(again.capabilities.vectorSearch).toBe('index');
    const hits = await again.searchVector(scope, new Float32Array([0, 1, 0, 0]), { limit: 1 });
    expect(hits.map((h) => h.belief.id)).toEqual([b.id]);
    await again.close();
  });

  it('sqlite-vec search matches exact search, and fills the limit when many neighbours have another status', async () => {
    const path = join(tempDir(), 'knn.db');
    const scope = { userId: 'u' };
    const other = { userId: 'v' };
    const vecStore = openSqliteStore({ path, dimensions: 8, logger: quiet });
    const rand = mulberry32(7);
    const inserts = Array.from({ length: 300 }, (_, i) => ({
      belief: belief(scope, { attribute: `k${i}`, status: i % 10 === 0 ? 'active' : 'pending' }),
      embedding: new Float32Array(Array.from({ length: 8 }, () => rand() - 0.5)),
    }));
    await vecStore.commit({ scope, inserts, updates: [], audit: [] });
    await vecStore.commit({
      scope: other,
      inserts: [{ belief: belief(other), embedding: inserts[0]!.embedding }],
      updates: [],
      audit: [],
    });
    const exactStore = openSqliteStore({ path, vector: 'exact', logger: quiet });
    for (let q = 0; q < 5; q++) {
      const query = new Float32Array(Array.from({ length: 8 }, () => rand() - 0.5));
      const a = await vecStore.searchVector(scope, query, { limit: 10 });
      const b = await exactStore.searchVector(scope, query, { limit: 10 });
      expect(a).toHaveLength(10);
      expect(a.map((h) => h.belief.id)).toEqual(b.map((h) => h.belief.id));
      for (const [i, h] of a.entries()) expect(h.score).toBeCloseTo(b[i]!.score, 5);
      expect(a.every((h) => h.belief.status === 'active' && h.belief.scope.userId === 'u')).toBe(true);
    }
    await vecStore.close();
    await exactStore.close();
  });
});
