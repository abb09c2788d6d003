/**
 * Faults and several workers against the machine's real PostgreSQL server: killed connections, a worker that
 * dies holding a lease, pool exhaustion, statement timeouts, and per-user order across workers.
 */
import { createBelief, MemoryEngine, type OutboxInput, StoreError } from '@mem01/engine';
import { quiet } from '@mem01/test-kit';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../src/index.js';
import { FakeExtractor } from './fake-extractor.js';
import { connectClient, dropSchema, numberedFact, REAL_URL, uniqueSchema, withAppName } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `perUser` user turns of each of `users` users (`<prefix><u>`, session `s<u>`), interleaved position by position. */
function interleavedTurns(
  prefix: string,
  users: number,
  perUser: number,
  text: (position: number) => string,
): OutboxInput[] {
  const inputs: OutboxInput[] = [];
  for (let p = 0; p < perUser; p++) {
    for (let u = 0; u < users; u++) {
      inputs.push({
        scope: { userId: `${prefix}${u}` },
        sessionId: `s${u}`,
        position: p,
        role: 'user',
        text: text(p),
        at: new Date().toISOString(),
      });
    }
  }
  return inputs;
}

describe('faults on the real server', () => {
  const stores: PostgresStore[] = [];
  const schemas: string[] = [];
  let admin: pg.Client | null = null;

  async function open(schema: string, extra: Parameters<typeof openPostgresStore>[0] = {}) {
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = await openPostgresStore({
      connectionString: REAL_URL,
      schema,
      dimensions: 4,
      logger: quiet,
      ...extra,
    });
    stores.push(store);
    return store;
  }

  async function adminClient(): Promise<pg.Client> {
    if (!admin) {
      admin = await connectClient(REAL_URL);
    }
    return admin;
  }

  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    if (admin) {
      await admin.end();
      admin = null;
    }
    for (const schema of schemas.splice(0)) await dropSchema(REAL_URL, schema);
  });

  it('loses no accepted write while connections are killed mid-write; failures are clear and retries converge', async () => {
    const schema = uniqueSchema('kill');
    await open(schema);
    const app = `mem01-kill-${schema}`;
    const store = await open(schema, { connectionString: withAppName(app), maxConnections: 4 });
    const client = await adminClient();
    let killing = true;
    let kills = 0;
    const killer = (async () => {
      while (killing) {
        const r = await client.query(
          'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = $1',
          [app],
        );
        kills += Number(r.rows[0].n);
        await sleep(60 + Math.random() * 120);
      }
    })();
    const turns: OutboxInput[] = Array.from({ length: 32 }, (_, i) => ({
      scope: { userId: `u${i % 5}` },
      sessionId: `s${i % 5}`,
      position: i,
      role: 'user',
      text: `turn ${i}`,
      at: new Date(1_700_000_000_000 + i).toISOString(),
    }));
    const accepted: OutboxInput[] = [];
    const failed: { input: OutboxInput; error: unknown }[] = [];
    const committed: string[] = [];
    const commitFailures: unknown[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        for (let i = lane; i < turns.length; i += 4) {
          const input = turns[i]!;
          try {
            await store.enqueue([input]);
            accepted.push(input);
          } catch (error) {
            failed.push({ input, error });
          }
          const scope = { userId: `c${lane}` };
          const b = numberedFact(scope, i, input.at);
          try {
            await store.commit({
              scope,
              inserts: [{ belief: b }],
              updates: [],
              audit: [{ at: input.at, scope, beliefId: b.id, action: 'add', actor: 't' }],
            });
            committed.push(b.id);
          } catch (error) {
            commitFailures.push(error);
          }
        }
      }),
    );
    killing = false;
    await killer;
    expect(kills).toBeGreaterThan(0);
    for (const f of [...failed.map((x) => x.error), ...commitFailures]) {
      expect(f).toBeInstanceOf(StoreError);
      expect((f as Error).message).toMatch(/postgres: (enqueue|commit)/);
    }
    // Every accepted turn and every resolved commit is there, with its audit row (all-or-nothing).
    const check = await open(schema);
    const present = new Set<string>();
    for (let u = 0; u < 5; u++)
      for (const e of await check.outboxEntries(`u${u}`)) present.add(`${e.sessionId}:${e.position}`);
    for (const a of accepted) expect(present.has(`${a.sessionId}:${a.position}`)).toBe(true);
    for (let lane = 0; lane < 4; lane++) {
      const scope = { userId: `c${lane}` };
      const beliefs = (await check.list(scope, { limit: 1000 })).items;
      const audit = await check.auditLog(scope);
      expect(audit.map((a) => a.beliefId).sort()).toEqual(beliefs.map((b) => b.id).sort());
      for (const id of committed)
        if (beliefs.some((b) => b.id === id)) expect(audit.some((a) => a.beliefId === id)).toBe(true);
    }
    for (const id of committed) {
      const r = await client.query(`select 1 from "${schema}".beliefs where id = $1`, [id]);
      expect(r.rows).toHaveLength(1);
    }
    // Retrying the failed enqueues converges: each turn exactly once.
    await check.enqueue(failed.map((f) => f.input));
    await check.enqueue(turns);
    const all = (await Promise.all([0, 1, 2, 3, 4].map((u) => check.outboxEntries(`u${u}`)))).flat();
    expect(all).toHaveLength(turns.length);
  }, 90_000);

  it('a worker that dies holding a lease: the lease expires and another worker finishes the job exactly once', async () => {
    const schema = uniqueSchema('lease');
    await open(schema);
    const appA = `mem01-a-${schema}`;
    const storeA = await open(schema, { connectionString: withAppName(appA) });
    const storeB = await open(schema);
    const slow = new FakeExtractor();
    let release!: () => void;
    slow.gate = new Promise((r) => {
      release = r;
    });
    const claimed = new Promise<void>((resolve) => {
      slow.onCall = () => resolve();
    });
    const leaseMs = 1500;
    // Beliefs only (no episodes): the assertions count what the extractor produced.
    const engineA = new MemoryEngine({
      store: storeA,
      extractor: slow,
      workerId: 'A',
      config: { leaseMs, episodic: false },
    });
    const scope = { userId: 'lease-user' };
    await storeA.enqueue([
      { scope, sessionId: 's', position: 0, role: 'user', text: 'city=Oslo', at: new Date().toISOString() },
      { scope, sessionId: 's', position: 1, role: 'user', text: 'pet=cat', at: new Date().toISOString() },
    ]);
    const ctrlA = new AbortController();
    const workerA = engineA.runWorker({ signal: ctrlA.signal, pollMs: 20 }).catch(() => undefined);
    await claimed;
    // Worker A's database goes away while it holds the lease.
    await (await adminClient()).query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [appA],
    );
    await storeA.close();

    const fast = new FakeExtractor();
    const engineB = new MemoryEngine({
      store: storeB,
      extractor: fast,
      workerId: 'B',
      config: { leaseMs, episodic: false },
    });
    const ctrlB = new AbortController();
    const workerB = engineB.runWorker({ signal: ctrlB.signal, pollMs: 50 });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const b = await storeB.backlog({ now: new Date().toISOString(), userId: scope.userId });
      if (b.queued + b.claimed === 0) break;
      await sleep(100);
    }
    // A wakes up after B took over: its commit must not land.
    release();
    await sleep(300);
    ctrlA.abort();
    ctrlB.abort();
    await workerA;
    await workerB;
    await engineA.close().catch(() => undefined);
    await engineB.close();

    const beliefs = (await storeB.list(scope, { statuses: ['active', 'superseded', 'pending'] })).items;
    expect(beliefs.map((b) => `${b.attribute}=${b.value}`).sort()).toEqual(['city=Oslo', 'pet=cat']);
    expect(fast.seen.map((s) => s.position)).toEqual([0, 1]);
    const audit = await storeB.auditLog(scope);
    expect(audit.filter((a) => a.action === 'add')).toHaveLength(2);
    expect((await storeB.outboxEntries(scope.userId)).map((e) => e.status)).toEqual(['done', 'done']);
  });

  it('several workers share the outbox: every turn extracted once, each user in order', async () => {
    const schema = uniqueSchema('workers');
    await open(schema);
    const users = 6;
    const perUser = 8;
    const inputs = interleavedTurns('w', users, perUser, (p) => `k${p}=v${p}`);
    const extractors: FakeExtractor[] = [];
    const log: { userId: string; position: number }[] = [];
    const engines: MemoryEngine[] = [];
    for (let i = 0; i < 3; i++) {
      const store = await open(schema, { maxConnections: 2 });
      const extractor = new FakeExtractor(5 + i * 3, log);
      extractors.push(extractor);
      engines.push(
        new MemoryEngine({
          store,
          extractor,
          workerId: `W${i}`,
          config: { leaseMs: 20_000, episodic: false },
        }),
      );
    }
    await stores[0]!.enqueue(inputs);
    const ctrl = new AbortController();
    const loops = engines.map((e) => e.runWorker({ signal: ctrl.signal, pollMs: 20 }));
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const b = await stores[0]!.backlog({ now: new Date().toISOString() });
      if (b.queued + b.claimed === 0) break;
      await sleep(100);
    }
    ctrl.abort();
    await Promise.all(loops);
    for (const e of engines) await e.close();
    const seen = extractors.flatMap((x) => x.seen);
    expect(seen).toHaveLength(users * perUser);
    expect(new Set(seen.map((s) => s.turnId)).size).toBe(users * perUser);
    // Per user, turns were extracted in acceptance order even though three workers took part.
    for (let u = 0; u < users; u++) {
      const beliefs = (await stores[0]!.list({ userId: `w${u}` })).items;
      expect(beliefs).toHaveLength(perUser);
    }
    expect(extractors.filter((x) => x.seen.length > 0).length).toBeGreaterThan(1);
    // Per user, turns were extracted in acceptance order although three workers took part.
    for (let u = 0; u < users; u++) {
      const positions = log.filter((l) => l.userId === `w${u}`).map((l) => l.position);
      expect(positions).toEqual(Array.from({ length: perUser }, (_, p) => p));
    }
  });

  it('workers whose connections are killed while they work still finish every turn, each belief once', async () => {
    const schema = uniqueSchema('wkill');
    const base = await open(schema);
    const app = `mem01-wk-${schema}`;
    const engines: MemoryEngine[] = [];
    for (let i = 0; i < 2; i++) {
      const store = await open(schema, { connectionString: withAppName(app), maxConnections: 2 });
      engines.push(
        new MemoryEngine({
          store,
          extractor: new FakeExtractor(80),
          workerId: `K${i}`,
          config: { leaseMs: 2_000, maxAttempts: 50, episodic: false },
        }),
      );
    }
    const inputs = interleavedTurns('k', 4, 6, (p) => `key${p}=val${p}`);
    await base.enqueue(inputs);
    const client = await adminClient();
    let killing = true;
    let kills = 0;
    // The chaos is bounded by count, not by time: on a loaded machine the workers may need longer to get
    // through it, and killing until the backlog happens to be empty could starve them for good.
    const MAX_KILLS = 12;
    const killer = (async () => {
      while (killing && kills < MAX_KILLS) {
        await sleep(80 + Math.random() * 120);
        const r = await client.query(
          'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = $1',
          [app],
        );
        kills += Number(r.rows[0].n);
      }
    })();
    const ctrl = new AbortController();
    const crashes: unknown[] = [];
    // A supervisor restarts a worker loop that gave up on a lost connection, as a process manager would.
    const loops = engines.map(async (e) => {
      while (!ctrl.signal.aborted) {
        try {
          await e.runWorker({ signal: ctrl.signal, pollMs: 20 });
        } catch (err) {
          crashes.push(err);
          await sleep(50);
        }
      }
    });
    // Every turn finishes once the killing is over (a lost claim waits out its 2 s lease).
    const deadline = Date.now() + 75_000;
    while (Date.now() < deadline) {
      const b = await base.backlog({ now: new Date().toISOString() });
      if (b.queued + b.claimed === 0) break;
      await sleep(200);
    }
    killing = false;
    await killer;
    ctrl.abort();
    await Promise.all(loops);
    for (const e of engines) await e.close();
    expect(kills).toBeGreaterThan(2);
    for (const c of crashes) expect(c).toBeInstanceOf(StoreError);
    console.info(`workers under kill: ${kills} backends terminated, ${crashes.length} worker-loop restarts`);
    expect(await base.backlog({ now: new Date().toISOString() })).toEqual({
      queued: 0,
      claimed: 0,
      dead: 0,
      staleLeases: 0,
      nextClaimableAt: null,
    });
    for (let u = 0; u < 4; u++) {
      const beliefs = (
        await base.list({ userId: `k${u}` }, { statuses: ['active', 'superseded', 'pending', 'retracted'] })
      ).items;
      expect(beliefs.map((b) => `${b.attribute}=${b.value}`).sort()).toEqual(
        Array.from({ length: 6 }, (_, p) => `key${p}=val${p}`),
      );
    }
  }, 120_000);

  it('pool exhaustion gives a clear error', async () => {
    const schema = uniqueSchema('pool');
    const store = await open(schema, { maxConnections: 1, connectionTimeoutMs: 200 });
    let unblock!: () => void;
    const held = store.db.connection().execute(
      () =>
        new Promise<void>((r) => {
          unblock = r;
        }),
    );
    await sleep(50);
    const err = await store.get({ userId: 'u' }, 'id').catch((e: unknown) => e);
    unblock();
    await held;
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toMatch(/no connection available from the pool within 200 ms/);
    expect(await store.get({ userId: 'u' }, 'id')).toBeNull();
  });

  it('a statement timeout gives a clear error and writes nothing', async () => {
    const schema = uniqueSchema('timeout');
    const store = await open(schema, { statementTimeoutMs: 200 });
    const scope = { userId: 'tu' };
    const b = createBelief({
      scope,
      kind: 'fact',
      subject: 'user',
      attribute: 'a',
      value: 'v',
      statement: 'S.',
      confidence: 1,
      source: 'manual',
      at: new Date().toISOString(),
    });
    await store.commit({ scope, inserts: [{ belief: b }], updates: [], audit: [] });
    const locker = await adminClient();
    await locker.query('begin');
    await locker.query(`select 1 from "${schema}".beliefs where id = $1 for update`, [b.id]);
    const err = await store.forget(scope, b.id, { at: new Date().toISOString() }).catch((e: unknown) => e);
    await locker.query('rollback');
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toMatch(/statement timeout of 200 ms/);
    expect((await store.get(scope, b.id))!.status).toBe('active');
  });
});
