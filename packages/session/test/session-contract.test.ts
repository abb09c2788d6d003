/**
 * The Agents SDK's `Session` contract, item by item, on the memory, SQLite and PostgreSQL stores: what `addItems`
 * and `applyHistoryTransaction` accept (only what comes back identical), how they refuse (typed, by index, never by
 * content, in the SDK's words where its `MemorySession` has them), `applyHistoryMutations`, and another user's
 * conversation. Where the SDK's own `MemorySession` has a message, it is run beside memSession and its message must
 * appear in memSession's.
 */
import { join } from 'node:path';
import { type FullStore, InvalidInputError } from '@mem01/engine';
import { KeyValueExtractor } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { openPostgresStore } from '@mem01/store-postgres';
import { openSqliteStore } from '@mem01/store-sqlite';
import { dropPgSchema, quiet, TEST_PG_URL, type TempDir, tempDir } from '@mem01/test-kit';
import {
  type AgentInputItem,
  MemorySession,
  type SessionHistoryRewriteAwareSession,
  type SessionHistoryTransactionArgs,
  type SessionHistoryTransactionAwareSession,
} from '@openai/agents';
import { afterAll, describe, expect, it } from 'vitest';
import { type MemSession, memSession, SessionHistoryError } from '../src/index.js';

const SECRET = 'api-key-secret-7d2e';

interface StoreUnderTest {
  readonly name: string;
  open(): Promise<FullStore>;
}

const dirs: TempDir[] = [];
const pgSchemas: string[] = [];
const opened: FullStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  for (const dir of dirs) dir.remove();
  for (const schema of pgSchemas) await dropPgSchema(schema);
});

const STORES: StoreUnderTest[] = [
  { name: 'memory', open: async () => createMemoryStore() },
  {
    name: 'SQLite',
    open: async () => {
      const dir = tempDir('mem01session-contract-');
      dirs.push(dir);
      return openSqliteStore({ path: join(dir.path, 'memory.db'), logger: quiet });
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const schema = `session_contract_${process.pid}_${pgSchemas.length}`;
      pgSchemas.push(schema);
      return openPostgresStore({ connectionString: TEST_PG_URL, schema, logger: quiet, maxConnections: 2 });
    },
  },
];

const user = (text: string): AgentInputItem => ({ role: 'user', content: [{ type: 'input_text', text }] });
type FunctionCallItem = Extract<AgentInputItem, { type: 'function_call' }>;
const call = (callId: string, args: string, id?: string): FunctionCallItem => ({
  type: 'function_call',
  ...(id === undefined ? {} : { id }),
  callId,
  name: 'lookup',
  status: 'completed',
  arguments: args,
});

let counter = 0;

/** The error a promise rejects with (fails when it resolves). */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return err as Error;
  }
  return expect.fail('expected a rejection');
}

/** The SDK's MemorySession's message for the same call, which memSession's message must contain. */
async function sdkMessage(initial: AgentInputItem[], args: SessionHistoryTransactionArgs): Promise<string> {
  const reference = new MemorySession({ initialItems: initial });
  return (await failure(Promise.resolve(reference.applyHistoryTransaction(args)))).message;
}

/** Items with values that do not come back from a store as given, and a word for each. */
function unsupportedItems(): Array<[string, unknown]> {
  const withData = (data: unknown) => ({ ...user('unsupported'), providerData: data });
  const hidden = user('hidden');
  Object.defineProperty(hidden, 'providerData', { enumerable: false, value: { hidden: SECRET } });
  const cycle: Record<string, unknown> = { note: SECRET };
  cycle.self = cycle;
  return [
    ['a number as the item', 42],
    ['a Date', withData({ timestamp: new Date(0) })],
    ['a Uint16Array', withData({ values: new Uint16Array([300]) })],
    ['a bigint', withData({ value: 42n })],
    ['a cycle', withData(cycle)],
    ['a hidden (non-enumerable) field', hidden],
    ['a symbol whose description is a secret', withData({ secret: Symbol(SECRET) })],
  ];
}

describe.each(STORES)('the Session contract on the $name store', (kind) => {
  // One store per kind (a Postgres schema each): every test uses its own users and conversation ids.
  let shared: Promise<FullStore> | undefined;
  async function open(userId = `u-${++counter}`): Promise<{ session: MemSession; store: FullStore }> {
    shared ??= kind.open().then((store) => {
      opened.push(store);
      return store;
    });
    const store = await shared;
    return { store, session: sessionOn(store, userId) };
  }
  const sessionOn = (store: FullStore, userId: string, id = `conv-${++counter}`) =>
    memSession(id, {
      userId,
      store,
      extractor: new KeyValueExtractor(),
      embedder: null,
      env: {},
      logger: quiet,
    });

  it('is the SDK’s transaction- and rewrite-aware Session (checked by the type checker)', async () => {
    const { session } = await open();
    const asSdk: SessionHistoryTransactionAwareSession & SessionHistoryRewriteAwareSession = session;
    expect(typeof asSdk.applyHistoryTransaction).toBe('function');
    expect(typeof asSdk.applyHistoryMutations).toBe('function');
    await session.close();
  });

  it('addItems stores nothing that would come back different: a typed error names the index, never the content', async () => {
    const { session } = await open();
    await session.addItems([user('start')]);
    const getter = user('getter');
    Object.defineProperty(getter, 'providerData', {
      enumerable: true,
      get: () => {
        throw new Error(SECRET);
      },
    });
    for (const [what, bad] of [...unsupportedItems(), ['a throwing getter', getter] as [string, unknown]]) {
      const err = await failure(session.addItems([user('fine'), bad as AgentInputItem]));
      expect(err, what).toBeInstanceOf(InvalidInputError);
      expect(err, what).toMatchObject({ code: 'invalid_input', field: 'items[1]' });
      expect(err.message, what).not.toContain(SECRET);
      expect(String((err as { cause?: unknown }).cause ?? ''), what).not.toContain(SECRET);
    }
    expect(await session.getItems()).toEqual([user('start')]);
    await session.close();
  });

  it('applyHistoryTransaction refuses the same items with the SDK’s message and the index; the id stays free', async () => {
    const { session } = await open();
    const start = user('start');
    await session.addItems([start]);
    for (const [what, bad] of unsupportedItems()) {
      const args = {
        operationId: 'op-refused',
        transaction: { type: 'append_items' as const, items: [user('fine'), bad as AgentInputItem] },
      };
      const expected = await sdkMessage([start], args);
      const err = await failure(session.applyHistoryTransaction(args));
      expect(err, what).toBeInstanceOf(SessionHistoryError);
      expect(err, what).toMatchObject({
        code: 'invalid_history_change',
        field: 'transaction.items[1]',
        index: 1,
      });
      expect(err.message, what).toContain(expected);
      expect(err.message, what).toContain('items[1]');
      expect(err.message, what).not.toContain(SECRET);
    }
    // An items array that is a Proxy, as the SDK's own test gives it.
    const proxied = new Proxy([user('proxied')], {});
    const proxyArgs = {
      operationId: 'op-refused',
      transaction: { type: 'append_items' as const, items: proxied },
    };
    const proxyErr = await failure(session.applyHistoryTransaction(proxyArgs));
    expect(proxyErr.message).toContain(await sdkMessage([start], proxyArgs));
    expect(await session.getItems()).toEqual([start]);
    // None of the refusals recorded the operation id.
    await session.applyHistoryTransaction({
      operationId: 'op-refused',
      transaction: { type: 'append_items', items: [user('accepted')] },
    });
    expect(await session.getItems()).toEqual([start, user('accepted')]);
    await session.close();
  });

  it('reads the arguments once; a throwing getter, a bad id, type or field set are refused in the SDK’s words', async () => {
    const { session } = await open();
    const start = user('start');
    await session.addItems([start]);
    let reads = 0;
    const once = {
      transaction: { type: 'append_items', items: [user('once')] },
    } as SessionHistoryTransactionArgs;
    Object.defineProperty(once, 'operationId', {
      enumerable: true,
      get: () => (++reads === 1 ? 'op-once' : 'changed'),
    });
    await session.applyHistoryTransaction(once);
    expect(reads).toBe(1);
    const throwing = {} as SessionHistoryTransactionArgs;
    Object.defineProperty(throwing, 'operationId', {
      get: () => {
        throw new Error(SECRET);
      },
    });
    const bad: SessionHistoryTransactionArgs[] = [
      throwing,
      { operationId: '   ', transaction: { type: 'append_items', items: [] } },
      { operationId: 'op-x', transaction: null as never },
      { operationId: 'op-x', transaction: { type: 'unknown' } as never },
      {
        operationId: 'op-x',
        transaction: { type: 'append_items', items: [user('x')], metadata: { attempt: 1 } } as never,
      },
      {
        operationId: 'op-x',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [start],
          replacement: [user('x')],
          metadata: { attempt: 1 },
        } as never,
      },
    ];
    for (const args of bad) {
      const expected = await sdkMessage([start], args);
      const err = await failure(session.applyHistoryTransaction(args));
      expect(err).toBeInstanceOf(SessionHistoryError);
      expect(err).toMatchObject({ code: 'invalid_history_change', message: expected });
    }
    expect(await session.getItems()).toEqual([start, user('once')]);
    await session.close();
  });

  it('suffix mismatches, reused operation ids and reuse after an empty append fail in the SDK’s words, unchanged', async () => {
    const { session } = await open();
    const start = user('start');
    await session.addItems([start]);
    const mismatch = {
      operationId: 'op-replace',
      transaction: {
        type: 'replace_suffix' as const,
        expectedSuffix: [user('different')],
        replacement: [user('accepted')],
      },
    };
    const mismatchErr = await failure(session.applyHistoryTransaction(mismatch));
    expect(mismatchErr).toBeInstanceOf(SessionHistoryError);
    expect(mismatchErr).toMatchObject({
      code: 'history_suffix_mismatch',
      message: await sdkMessage([start], mismatch),
    });
    expect(await session.getItems()).toEqual([start]);
    // The refused id was not recorded: the same id with a matching suffix applies, and a retry is a no-op.
    const replace = { ...mismatch, transaction: { ...mismatch.transaction, expectedSuffix: [start] } };
    await session.applyHistoryTransaction(replace);
    await session.applyHistoryTransaction(replace);
    expect(await session.getItems()).toEqual([user('accepted')]);

    const reference = new MemorySession();
    const first = { operationId: 'op-empty', transaction: { type: 'append_items' as const, items: [] } };
    const second = {
      operationId: 'op-empty',
      transaction: { type: 'append_items' as const, items: [user('x')] },
    };
    await reference.applyHistoryTransaction(first);
    const sdkConflict = (await failure(reference.applyHistoryTransaction(second))).message;
    await session.applyHistoryTransaction(first);
    await session.applyHistoryTransaction(first);
    const conflict = await failure(session.applyHistoryTransaction(second));
    expect(conflict).toBeInstanceOf(SessionHistoryError);
    expect(conflict).toMatchObject({ code: 'history_operation_conflict', message: sdkConflict });
    expect(await session.getItems()).toEqual([user('accepted')]);
    // Clearing the session forgets its operation ids, as the SDK's MemorySession does.
    await session.clearSession();
    await session.applyHistoryTransaction(second);
    expect(await session.getItems()).toEqual([user('x')]);
    await session.close();
  });

  it('what it accepts comes back identical, and a round-tripped item is the same operation and suffix', async () => {
    const { session } = await open();
    const appended = {
      ...user('canonical'),
      providerData: Object.assign(Object.create(null) as object, { source: 'provider', n: [1, 2.5, null] }),
    } as AgentInputItem;
    await session.applyHistoryTransaction({
      operationId: 'op-canonical',
      transaction: { type: 'append_items', items: [appended] },
    });
    const [roundTripped] = await session.getItems();
    expect(roundTripped).toEqual({
      ...user('canonical'),
      providerData: { source: 'provider', n: [1, 2.5, null] },
    });
    await session.applyHistoryTransaction({
      operationId: 'op-canonical',
      transaction: { type: 'append_items', items: [roundTripped!] },
    });
    await session.applyHistoryTransaction({
      operationId: 'op-canonical-replace',
      transaction: { type: 'replace_suffix', expectedSuffix: [appended], replacement: [user('replaced')] },
    });
    expect(await session.getItems()).toEqual([user('replaced')]);
    await session.close();
  });

  it('applyHistoryMutations rewrites a function call as the SDK’s MemorySession does, atomically', async () => {
    const { session } = await open();
    const initial = [
      user('start'),
      call('call-1', '{"ok":false}', 'old-1'),
      user('between'),
      call('call-1', '{"duplicate":true}', 'old-2'),
      call('call-2', '{"other":true}'),
    ];
    await session.addItems(initial);
    const mutations = [
      {
        type: 'replace_function_call' as const,
        callId: 'call-1',
        replacement: call('call-1', '{"ok":true}', 'new'),
      },
    ];
    const reference = new MemorySession({ initialItems: initial });
    await reference.applyHistoryMutations({ mutations });
    await session.applyHistoryMutations({ mutations });
    expect(await session.getItems()).toEqual(await reference.getItems());
    expect(await session.getItems()).toEqual([
      user('start'),
      call('call-1', '{"ok":true}', 'new'),
      user('between'),
      call('call-2', '{"other":true}'),
    ]);
    // No mutations, or none that match, change nothing.
    await session.applyHistoryMutations({ mutations: [] });
    await session.applyHistoryMutations({
      mutations: [{ type: 'replace_function_call', callId: 'call-9', replacement: call('call-9', '{}') }],
    });
    expect(await session.getItems()).toHaveLength(4);
    // A replacement that is not that call's function_call, or not plain data, is refused and changes nothing.
    for (const replacement of [
      user('not a call'),
      call('call-2', '{}'),
      { ...call('call-1', '{}'), when: new Date(0) },
    ]) {
      const err = await failure(
        session.applyHistoryMutations({
          mutations: [{ type: 'replace_function_call', callId: 'call-1', replacement: replacement as never }],
        }),
      );
      expect(err).toBeInstanceOf(SessionHistoryError);
      expect(err).toMatchObject({ code: 'invalid_history_change', index: 0 });
    }
    expect(await session.getItems()).toEqual(await reference.getItems());
    await session.close();
  });

  it('popItem and clearSession of another user’s conversation are refused (owner) and change nothing', async () => {
    const { store, session: alice } = await open(`alice-${++counter}`);
    await alice.addItems([user('alice private'), user('alice second')]);
    const bob = sessionOn(store, `bob-${++counter}`, alice.sessionId);
    expect(await bob.getItems()).toEqual([]);
    for (const attempt of [() => bob.popItem(), () => bob.clearSession()]) {
      const err = await failure(attempt());
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toMatchObject({ field: 'owner' });
      expect(err.message).not.toContain('alice private');
    }
    expect(await alice.getItems()).toEqual([user('alice private'), user('alice second')]);
    // Alice's own calls work; an unknown conversation is simply empty.
    expect(await alice.popItem()).toEqual(user('alice second'));
    const fresh = sessionOn(store, `bob-${++counter}`);
    expect(await fresh.popItem()).toBeUndefined();
    await fresh.clearSession();
    await alice.close();
    await bob.close();
    await fresh.close();
  });
});
