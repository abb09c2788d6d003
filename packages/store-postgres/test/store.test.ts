import {
  type Belief,
  CapabilityError,
  ClosedError,
  ConfigError,
  createBelief,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  InvalidInputError,
  LeaseLostError,
  NotFoundError,
  SchemaTooNewError,
  type Scope,
  VersionConflictError,
} from '@mem01/engine';
import { completeOnly, expectCurrentFeatures, expectOldGrantWorks } from '@mem01/store-conformance';
import { quiet } from '@mem01/test-kit';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openPostgresStore, POSTGRES_SCHEMA_VERSION, type PostgresStore } from '../src/index.js';
import { migrationProvider } from '../src/migrations.js';
import {
  connectClient,
  realHasPgvector,
  retryConnect,
  StoreFactory,
  TARGETS,
  uniqueSchema,
} from './helpers.js';

const DIMS = 4;
const T0 = '2025-01-01T00:00:00.000Z';

function at(i: number): string {
  return new Date(Date.parse(T0) + i * 1000).toISOString();
}

function belief(
  scope: Scope,
  subject: string,
  attribute: string,
  value: string,
  statement: string,
  i = 0,
): Belief {
  return createBelief({
    scope,
    kind: 'fact',
    subject,
    attribute,
    value,
    statement,
    confidence: 0.9,
    source: 'manual',
    at: at(i),
  });
}

function vec(...xs: number[]): Float32Array {
  return new Float32Array(xs);
}

const HOSTILE = [
  "x'); drop table beliefs; --",
  'a & b | !c :* (d) <-> e',
  "'\\\\' || pg_sleep(1)",
  '%_%',
  'robert"; select 1; --',
];

describe.each(TARGETS)('postgres store on %s', (target) => {
  const factory = new StoreFactory(target);
  afterEach(async () => {
    await factory.cleanup();
  });
  const open = (o: Parameters<StoreFactory['open']>[0] = {}) => factory.open({ dimensions: DIMS, ...o });

  it('reports the vector mode it runs in, and auto picks what the server offers (one warning in the fallback)', async () => {
    const store = await open();
    const info = await store.info();
    expect(info.dimensions).toBe(DIMS);
    expect(info.schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    expect(store.capabilities).toMatchObject(
      target === 'real'
        ? { vectorSearch: 'exact', vectorIndex: 'exact-cosine' }
        : { vectorSearch: 'index', vectorIndex: 'pgvector-hnsw' },
    );
    expect(store.capabilities).toMatchObject({
      lexicalIndex: 'tsvector-gin',
      durableOutbox: true,
      multiProcess: true,
    });
    const warnings: string[] = [];
    const auto = await factory.open({
      dimensions: DIMS,
      vector: 'auto',
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    const offered = target === 'pglite' || realHasPgvector;
    if (offered) {
      expect(auto.capabilities).toMatchObject({ vectorSearch: 'index', vectorIndex: 'pgvector-hnsw' });
      expect(warnings).toHaveLength(0);
    } else {
      expect(auto.capabilities).toMatchObject({ vectorSearch: 'exact', vectorIndex: 'exact-cosine' });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/pgvector/);
    }
  });

  it('refuses a store opened with other dimensions than stored, and a newer schema version', async () => {
    const store = await open();
    const schema = factory.lastSchema!;
    await expect(open({ schema, dimensions: 8 })).rejects.toBeInstanceOf(DimensionMismatchError);
    await store.db.executeQuery({
      sql: `update "${schema}".meta set value = '99' where key = 'schema_version'`,
      parameters: [],
      query: { kind: 'RawNode' } as never,
      queryId: { queryId: 'x' },
    });
    const err = await open({ schema }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toMatch(/99/);
    expect((err as Error).message).toContain(`supports up to ${POSTGRES_SCHEMA_VERSION}`);
  });

  it('two stores migrating one fresh schema at once both succeed and migrate it once', async () => {
    const schema = uniqueSchema('mig');
    const [a, b, c] = await Promise.all([open({ schema }), open({ schema }), open({ schema })]);
    const s = { userId: 'u1' };
    await a!.commit({
      scope: s,
      inserts: [{ belief: belief(s, 'user', 'city', 'Oslo', 'The user lives in Oslo.') }],
      updates: [],
      audit: [],
    });
    expect((await b!.list(s)).items).toHaveLength(1);
    expect((await c!.info()).schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
    const client = await connectClient(factory.url);
    const r = await client.query(`select name from "${schema}".kysely_migration order by name`);
    await client.end();
    expect(r.rows.map((x) => x.name)).toEqual([
      '0001_initial',
      '0002_governance',
      '0003_lease_owner',
      '0004_grant_binding',
    ]);
  });

  for (const from of [1, 3]) {
    it(`a schema at version ${from} opens with its data and gains the later versions`, async () => {
      const schema = uniqueSchema(`v${from}`);
      const pool = new pg.Pool({ connectionString: factory.url, max: 2 });
      // A first connection while the shared server has a free slot; the pool keeps it for the queries below.
      (await retryConnect(() => pool.connect())).release();
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
      const old = belief({ userId: 'old-user' }, 'user', 'garden', 'tomatoes', 'The user grows tomatoes.');
      // A capture grant, from the version that has them (2): no key, no host ids.
      const oldGrant = {
        id: 'old-grant',
        scope: { userId: 'old-grantee', namespace: '' },
        intentDigest: 'ab'.repeat(32),
        grantedAt: T0,
        expiresAt: null,
        revokedAt: null,
      };
      try {
        await sql`create schema ${sql.id(schema)}`.execute(db);
        const ctx = { schema, dimensions: DIMS, mode: 'exact' as const, extensionSchema: null };
        const result = await new Migrator({
          db,
          provider: migrationProvider(ctx, from),
          migrationTableSchema: schema,
        }).migrateToLatest();
        expect(result.error).toBeUndefined();
        await sql`insert into ${sql.id(schema, 'beliefs')} (id, user_id, namespace, kind, subject, attribute, value,
            statement, confidence, status, version, stored_at, updated_at, evidence, source)
          values (${old.id}, 'old-user', '', 'fact', 'user', 'garden', 'tomatoes', 'The user grows tomatoes.', 0.9,
            'active', 1, ${old.storedAt}, ${old.updatedAt}, '[]', 'manual')`.execute(db);
        await sql`insert into ${sql.id(schema, 'audit')} (at, user_id, namespace, belief_id, action, actor)
          values (${old.storedAt}, 'old-user', '', ${old.id}, 'add', 'old')`.execute(db);
        if (from >= 2) {
          await sql`insert into ${sql.id(schema, 'capture_grants')}
              (id, user_id, namespace, intent_digest, granted_at, expires_at, revoked_at)
            values (${oldGrant.id}, 'old-grantee', '', ${oldGrant.intentDigest}, ${oldGrant.grantedAt}, null, null)`.execute(
            db,
          );
        }
      } finally {
        await db.destroy();
      }
      const store = await open({ schema, vector: 'exact' });
      expect((await store.info()).schemaVersion).toBe(POSTGRES_SCHEMA_VERSION);
      const scope = { userId: 'old-user' };
      expect(await store.get(scope, old.id)).toEqual(old);
      expect((await store.searchLexical(scope, 'tomato', { limit: 5 })).map((h) => h.belief.id)).toEqual([
        old.id,
      ]);
      expect(await store.auditLog(scope)).toEqual([
        {
          at: old.storedAt,
          scope: { userId: 'old-user', namespace: '' },
          beliefId: old.id,
          action: 'add',
          actor: 'old',
        },
      ]);
      // Version 2 works on the old rows: access counts, metadata, operation keys, grants, budgets.
      await expectCurrentFeatures(store, scope, old.id);
      // Version 4: a grant recorded before keeps working, and binds what it captures from now on.
      if (from >= 2) await expectOldGrantWorks(store, oldGrant);
    });
  }

  it('commits atomically and enforces versions and one active belief per key, also across handles', async () => {
    const store = await open();
    const second = await open({ schema: factory.lastSchema! });
    const s = { userId: 'alice', namespace: 'proj' };
    const b1 = belief(s, 'user', 'home_city', 'Paris', 'The user lives in Paris.');
    await store.commit({
      scope: s,
      inserts: [{ belief: b1, embedding: vec(1, 0, 0, 0) }],
      updates: [],
      audit: [{ at: T0, scope: s, beliefId: b1.id, action: 'add', actor: 'test' }],
    });
    expect(await store.get(s, b1.id)).toEqual(b1);
    expect(await store.get({ userId: 'alice' }, b1.id)).toBeNull();
    expect(await store.get({ userId: 'bob', namespace: 'proj' }, b1.id)).toBeNull();

    const dup = belief(s, 'user', 'home_city', 'Rome', 'The user lives in Rome.');
    await expect(
      second.commit({ scope: s, inserts: [{ belief: dup }], updates: [], audit: [] }),
    ).rejects.toBeInstanceOf(DuplicateActiveBeliefError);

    // Racing supersessions from two handles: exactly one wins, the other gets a typed error; nothing half-done.
    const race = (st: PostgresStore, value: string) => {
      const nb = {
        ...belief(s, 'user', 'home_city', value, `The user lives in ${value}.`, 1),
        supersedes: b1.id,
      };
      return st.commit({
        scope: s,
        inserts: [{ belief: nb }],
        updates: [
          {
            id: b1.id,
            expectedVersion: 1,
            set: { status: 'superseded', supersededBy: nb.id, invalidatedAt: at(1), updatedAt: at(1) },
          },
        ],
        audit: [],
      });
    };
    const results = await Promise.allSettled([race(store, 'Berlin'), race(second, 'Madrid')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(VersionConflictError);
    const active = await store.getActiveByKeys(s, [{ subject: 'user', attribute: 'home_city' }]);
    expect(active).toHaveLength(1);
    expect(['Berlin', 'Madrid']).toContain(active[0]!.value);
    const chain = await store.history(s, { id: b1.id });
    expect(chain.map((b) => b.value)).toEqual(['Paris', active[0]!.value]);
    expect((await store.list(s, { statuses: ['active', 'superseded'] })).items).toHaveLength(2);

    await expect(
      store.commit({
        scope: s,
        inserts: [],
        updates: [{ id: 'nope', expectedVersion: 1, set: { updatedAt: at(2) } }],
        audit: [],
      }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      store.commit({
        scope: s,
        inserts: [{ belief: belief(s, 'user', 'x', 'y', 'z'), embedding: vec(1, 2) }],
        updates: [],
        audit: [],
      }),
    ).rejects.toBeInstanceOf(DimensionMismatchError);
    expect((await store.list(s, { statuses: ['active', 'superseded', 'pending'] })).items).toHaveLength(2);
    expect(await store.auditLog(s)).toEqual([
      {
        at: T0,
        scope: { userId: 'alice', namespace: 'proj' },
        beliefId: b1.id,
        action: 'add',
        actor: 'test',
      },
    ]);
  });

  it('pages lists newest first and lists scopes sorted', async () => {
    const store = await open();
    const s = { userId: 'pager' };
    const beliefs = Array.from({ length: 7 }, (_, i) =>
      belief(s, 'user', `a${i}`, `v${i}`, `Statement ${i}.`, i),
    );
    await store.commit({ scope: s, inserts: beliefs.map((b) => ({ belief: b })), updates: [], audit: [] });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.list(s, { limit: 3, cursor });
      seen.push(...page.items.map((b) => b.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(beliefs.map((b) => b.id).reverse());
    await expect(store.list(s, { limit: 0 })).rejects.toBeInstanceOf(InvalidInputError);
    await store.commit({
      scope: { userId: 'a' },
      inserts: [{ belief: belief({ userId: 'a' }, 'user', 'k', 'v', 'S.') }],
      updates: [],
      audit: [],
    });
    const scopes = await store.listScopes();
    expect(scopes.map((x) => x.scope.userId)).toEqual(['a', 'pager']);
    expect(scopes[1]!.counts.active).toBe(7);
  });

  it('searches lexically with OR semantics, literally, scope-filtered, for hostile input', async () => {
    const store = await open();
    const s = { userId: HOSTILE[0]! };
    const other = { userId: 'other' };
    const nul = 'The user\u0000s code is x&y|z!(a):*';
    const rows = [
      belief(s, 'user', 'pet', 'cat', 'The user has a cat named Tom.', 1),
      belief(s, 'user', 'drink', 'coffee', 'The user drinks coffee every morning.', 2),
      belief(s, 'user', 'code', 'secret', nul, 3),
      ...HOSTILE.map((h, i) => belief(s, 'user', `h${i}`, h, `Hostile ${h}`, 4 + i)),
    ];
    await store.commit({ scope: s, inserts: rows.map((b) => ({ belief: b })), updates: [], audit: [] });
    await store.commit({
      scope: other,
      inserts: [{ belief: belief(other, 'user', 'pet', 'cat', 'Other user has a cat.') }],
      updates: [],
      audit: [],
    });

    const hits = await store.searchLexical(s, 'cat OR tea? coffee!', { limit: 10 });
    expect(hits.map((h) => h.belief.value).sort()).toEqual(['cat', 'coffee']);
    expect(hits.every((h) => h.belief.scope.userId === s.userId && h.score > 0)).toBe(true);
    // NUL is stored as U+FFFD, consistently for storage and queries.
    const stored = await store.get(s, rows[2]!.id);
    expect(stored!.statement).toBe('The user\uFFFDs code is x&y|z!(a):*');
    expect((await store.searchLexical(s, 'code\u0000', { limit: 5 })).map((h) => h.belief.id)).toEqual([
      rows[2]!.id,
    ]);
    for (const q of [...HOSTILE, '\u0000', '&|!:*()<->', "'", '\\', 'the a of', '', '   ', "' OR 1=1 --"]) {
      const r = await store.searchLexical(s, q, { limit: 50 });
      expect(r.every((h) => h.belief.scope.userId === s.userId)).toBe(true);
    }
    expect(await store.searchLexical(s, 'the of and', { limit: 5 })).toEqual([]);
    expect((await store.searchLexical(s, 'drop table beliefs', { limit: 5 }))[0]!.belief.value).toBe(
      HOSTILE[0],
    );
    expect(await store.searchLexical({ userId: "x' or '1'='1" }, 'cat', { limit: 5 })).toEqual([]);
    const list = await store.list(s);
    expect(list.items).toHaveLength(rows.length);
  });

  it('searches vectors best first within the scope only', async () => {
    const store = await open();
    const s = { userId: 'v' };
    const o = { userId: 'w' };
    const mk = (sc: Scope, k: string, v: Float32Array | null) => ({
      belief: belief(sc, 'user', k, k, `About ${k}.`),
      embedding: v,
    });
    const rows = [
      mk(s, 'a', vec(1, 0, 0, 0)),
      mk(s, 'b', vec(0.9, 0.1, 0, 0)),
      mk(s, 'c', vec(0, 1, 0, 0)),
      mk(s, 'd', null),
    ];
    await store.commit({ scope: s, inserts: rows, updates: [], audit: [] });
    await store.commit({ scope: o, inserts: [mk(o, 'z', vec(1, 0, 0, 0))], updates: [], audit: [] });
    const hits = await store.searchVector(s, vec(2, 0, 0, 0), { limit: 10 });
    expect(hits.map((h) => h.belief.attribute)).toEqual(['a', 'b', 'c']);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[1]!.score).toBeCloseTo(0.9 / Math.sqrt(0.82), 5);
    expect(hits[2]!.score).toBeCloseTo(0, 5);
    expect((await store.searchVector(s, vec(0, 1, 0, 0), { limit: 1 }))[0]!.belief.attribute).toBe('c');
    await expect(store.searchVector(s, vec(1, 0), { limit: 1 })).rejects.toBeInstanceOf(
      DimensionMismatchError,
    );
    const forgotten = await store.forget(s, rows[0]!.belief.id, { at: at(9) });
    expect(forgotten).toMatchObject({
      status: 'forgotten',
      statement: '',
      value: '',
      subject: '',
      version: 2,
    });
    expect(
      (await store.searchVector(s, vec(1, 0, 0, 0), { limit: 10, statuses: ['active', 'forgotten'] })).map(
        (h) => h.belief.attribute,
      ),
    ).toEqual(['b', 'c']);
    expect(await store.searchLexical(s, 'About a', { limit: 10, statuses: ['forgotten'] })).toEqual([]);
    expect(await store.forget(s, rows[0]!.belief.id, { at: at(10) })).toEqual(forgotten);
    await expect(store.forget(o, rows[1]!.belief.id, { at: at(10) })).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      store.forget(s, rows[1]!.belief.id, { at: at(10), expectedVersion: 5 }),
    ).rejects.toBeInstanceOf(VersionConflictError);
  });

  it('hands out outbox entries in order, one claim per user, with lease takeover and LeaseLostError', async () => {
    const store = await open();
    const second = await open({ schema: factory.lastSchema! });
    const u1 = { userId: 'u1' };
    const u2 = { userId: 'u2' };
    const turn = (scope: Scope, position: number, text: string) => ({
      scope,
      sessionId: `s-${scope.userId}`,
      position,
      role: 'user' as const,
      text,
      at: at(position),
    });
    expect(await store.enqueue([turn(u1, 0, 'a'), turn(u1, 1, 'b'), turn(u2, 0, 'c')])).toEqual({
      accepted: 3,
      duplicates: 0,
    });
    expect(await second.enqueue([turn(u1, 0, 'a'), turn(u1, 2, 'd')])).toEqual({
      accepted: 1,
      duplicates: 1,
    });
    const now = at(100);
    const c1 = await store.claim({ worker: 'w1', leaseMs: 10_000, now, maxEntries: 2 });
    expect(c1!.scope.userId).toBe('u1');
    expect(c1!.entries.map((e) => e.text)).toEqual(['a', 'b']);
    // u1 is in flight: the other worker gets u2, then nothing.
    const c2 = await second.claim({ worker: 'w2', leaseMs: 10_000, now });
    expect(c2!.scope.userId).toBe('u2');
    expect(await second.claim({ worker: 'w2', leaseMs: 10_000, now })).toBeNull();
    expect(await store.backlog({ now })).toEqual({
      queued: 1,
      claimed: 3,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: at(110),
    });
    // After the lease expires another worker takes u1 over; the old claim's commit is refused.
    const later = at(200);
    expect(await store.backlog({ now: later })).toMatchObject({ staleLeases: 3 });
    const c3 = await second.claim({ worker: 'w2', leaseMs: 10_000, now: later, userId: 'u1', maxEntries: 5 });
    expect(c3!.entries.map((e) => e.text)).toEqual(['a', 'b', 'd']);
    await expect(store.commit(completeOnly(u1, c1!))).rejects.toBeInstanceOf(LeaseLostError);
    await second.commit(completeOnly(u1, c3!));
    const entries = await store.outboxEntries('u1');
    expect(entries.map((e) => [e.status, e.text])).toEqual([
      ['done', ''],
      ['done', ''],
      ['done', ''],
    ]);
    // fail → retry later → dead after maxAttempts, and a dead entry no longer blocks the user.
    await store.fail(c2!, 'boom sk-abcdefghijklmnop', { maxAttempts: 2, retryAt: at(300) });
    expect(await store.claim({ worker: 'w', leaseMs: 1000, now: at(250) })).toBeNull();
    const c4 = await store.claim({ worker: 'w', leaseMs: 1000, now: at(300) });
    expect(c4!.entries[0]!.attempts).toBe(1);
    expect(c4!.entries[0]!.lastError).toBe('boom ***');
    await store.fail(c4!, 'again', { maxAttempts: 2 });
    await store.enqueue([turn(u2, 1, 'e')]);
    const c5 = await store.claim({ worker: 'w', leaseMs: 1000, now: at(301) });
    expect(c5!.entries.map((e) => e.text)).toEqual(['e']);
    await store.release(c5!, { retryAt: at(400), reason: 'budget' });
    expect(await store.backlog({ now: at(301), userId: 'u2' })).toEqual({
      queued: 1,
      claimed: 0,
      dead: 1,
      staleLeases: 0,
      nextClaimableAt: at(400),
    });
    await expect(store.enqueue([{ ...turn(u1, 0, 'x'), position: -1 }])).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });

  it('drop erases the text of the turns it sets dead and records the reason', async () => {
    const store = await open();
    const scope = { userId: 'u' };
    await store.enqueue([
      { scope, sessionId: 's', position: 0, role: 'user', text: 'my secret plan', at: at(0), grantId: 'g1' },
    ]);
    const claim = await store.claim({ worker: 'w', leaseMs: 1000, now: at(1), userId: 'u' });
    await store.drop(claim!, { reason: 'capture grant g1 was revoked' });
    const client = await connectClient(factory.url);
    const r = await client.query(
      `select status, text, last_error, attempts, grant_id from "${factory.lastSchema}".outbox`,
    );
    await client.end();
    expect(r.rows).toEqual([
      { status: 'dead', text: '', last_error: 'capture grant g1 was revoked', attempts: 0, grant_id: 'g1' },
    ]);
  });

  it('keeps transcripts with operation ids, suffix replacement and enqueue in one transaction', async () => {
    const store = await open();
    const owner = { userId: 'tu' };
    const items = [
      { role: 'user', content: 'hi\u0000 there' },
      { role: 'assistant', content: 'hello' },
    ];
    const r1 = await store.appendItems(owner, 'sess', items, {
      operationId: 'op1',
      operationFingerprint: 'f1',
      enqueue: [{ index: 0, role: 'user', text: 'hi there', at: T0 }],
    });
    expect(r1).toEqual({ positions: [0, 1], duplicate: false });
    expect(
      await store.appendItems(owner, 'sess', items, { operationId: 'op1', operationFingerprint: 'f1' }),
    ).toEqual({ positions: [0, 1], duplicate: true });
    await expect(
      store.appendItems(owner, 'sess', items, { operationId: 'op1', operationFingerprint: 'f2' }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(await store.getItems(owner, 'sess')).toEqual(items);
    await expect(
      store.appendItems(owner, 'sess', [{ x: 1 }], { replaceSuffix: [{ role: 'nope' }] }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(
      await store.appendItems(owner, 'sess', [{ x: 1 }], {
        replaceSuffix: [{ content: 'hello', role: 'assistant' }],
      }),
    ).toEqual({ positions: [1], duplicate: false });
    expect(await store.getItems(owner, 'sess', 1)).toEqual([{ x: 1 }]);
    expect(await store.popItem(owner, 'sess')).toEqual({ x: 1 });
    expect(await store.getItems(owner, 'sess')).toEqual([items[0]]);
    expect((await store.outboxEntries('tu')).map((e) => [e.position, e.text])).toEqual([[0, 'hi there']]);
    await expect(store.appendItems({ userId: 'intruder' }, 'sess', [{}])).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    const receipt = await store.eraseUser('tu');
    expect(receipt).toMatchObject({ outboxEntries: 1, transcriptItems: 1 });
    expect(await store.getItems(owner, 'sess')).toEqual([]);
    await store.appendItems(owner, 's2', [{ a: 1 }]);
    await store.clearSession(owner, 's2');
    expect(await store.popItem(owner, 's2')).toBeUndefined();
  });

  it('imports verbatim and skips ids already present', async () => {
    const store = await open();
    const s = { userId: 'imp' };
    const recs = [
      { belief: { ...belief(s, 'user', 'a', '1', 'One.'), version: 3 }, embedding: vec(0, 0, 1, 0) },
      { belief: { ...belief(s, 'user', 'a', '0', 'Zero.'), status: 'superseded' as const } },
    ];
    expect(await store.importBeliefs(recs)).toEqual({ inserted: 2, skipped: 0 });
    expect(await store.importBeliefs(recs)).toEqual({ inserted: 0, skipped: 2 });
    expect(await store.get(s, recs[0]!.belief.id)).toEqual(recs[0]!.belief);
    expect((await store.searchVector(s, vec(0, 0, 1, 0), { limit: 3 }))[0]!.belief.id).toBe(
      recs[0]!.belief.id,
    );
    await expect(
      store.importBeliefs([{ belief: belief(s, 'user', 'a', '2', 'Two.') }]),
    ).rejects.toBeInstanceOf(DuplicateActiveBeliefError);
  });
});

describe('options', () => {
  const real = new StoreFactory('real');
  const lite = new StoreFactory('pglite');
  afterEach(async () => {
    await real.cleanup();
    await lite.cleanup();
  });

  it("vector: 'pgvector' fails loudly where the extension is missing; 'exact' never uses it", async () => {
    // A server without pgvector: the machine's own when it lacks the extension, else a PGlite without it.
    const err = await openPostgresStore({
      connectionString: inject('noPgvectorUrl'),
      schema: uniqueSchema('nopgv'),
      vector: 'pgvector',
      dimensions: DIMS,
      logger: quiet,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CapabilityError);
    expect((err as Error).message).toMatch(/postgres.*pgvector/);
    const exact = await lite.open({ vector: 'exact', dimensions: DIMS });
    expect(exact.capabilities.vectorIndex).toBe('exact-cosine');
    // The mode is fixed per schema: reopening with auto keeps exact, asking for pgvector is refused.
    expect((await lite.open({ schema: lite.lastSchema!, vector: 'auto' })).capabilities.vectorIndex).toBe(
      'exact-cosine',
    );
    await expect(lite.open({ schema: lite.lastSchema!, vector: 'pgvector' })).rejects.toBeInstanceOf(
      ConfigError,
    );
    const s = { userId: 'x' };
    await exact.commit({
      scope: s,
      inserts: [{ belief: belief(s, 'user', 'k', 'v', 'S.'), embedding: vec(0, 3, 4, 0) }],
      updates: [],
      audit: [],
    });
    expect((await exact.searchVector(s, vec(0, 0, 1, 0), { limit: 1 }))[0]!.score).toBeCloseTo(0.8, 5);
  });

  it('a store opened without migrating refuses an unmigrated schema and reads a migrated one', async () => {
    await expect(real.open({ migrate: false, dimensions: DIMS })).rejects.toThrow(/not migrated/);
    const store = await real.open({ dimensions: DIMS });
    const reader = await real.open({ schema: real.lastSchema!, migrate: false });
    expect((await reader.info()).dimensions).toBe(DIMS);
    await store.close();
    await store.close();
    await expect(store.get({ userId: 'u' }, 'x')).rejects.toBeInstanceOf(ClosedError);
  });

  it('rejects a malformed schema name before touching the database', async () => {
    await expect(
      openPostgresStore({ connectionString: 'postgres://127.0.0.1:1/x', schema: 'a"; drop' }),
    ).rejects.toThrow(/schema must match/);
  });
});
