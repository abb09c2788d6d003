import { InvalidInputError, type Scope } from '@mem01/engine';
import { stableJson } from '@mem01/engine/binding-kit';
import { idempotencyKey } from '@mem01/engine/store-kit';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { belief, FAR_FUTURE, insertAll, rejects, t, unique } from '../fixtures.js';

const item = (n: number, extra: object = {}) => ({
  type: 'message',
  role: 'user',
  content: `item ${n}`,
  ...extra,
});

const user = (namespace?: string): Scope =>
  namespace === undefined ? { userId: unique('user-') } : { userId: unique('user-'), namespace };

/** A fresh store, two users and one conversation id. */
async function twoUsers(ctx: SuiteContext) {
  return { store: await ctx.open(), alice: user(), bob: user(), thread: unique('thread-') };
}

export function transcriptTests(ctx: SuiteContext): void {
  ctx.test('appendItems numbers positions from 0 and continues after the last item', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    expect(await store.appendItems(me, s, [item(0), item(1)])).toEqual({
      positions: [0, 1],
      duplicate: false,
    });
    expect(await store.appendItems(me, s, [item(2)])).toEqual({ positions: [2], duplicate: false });
    expect(await store.appendItems(me, s, [])).toEqual({ positions: [], duplicate: false });
    expect(await store.popItem(me, s)).toEqual(item(2));
    expect(await store.appendItems(me, s, [item(3)])).toEqual({ positions: [2], duplicate: false });
    expect(await store.getItems(me, s)).toEqual([item(0), item(1), item(3)]);
    // Sessions are independent.
    expect(await store.appendItems(me, unique('s-'), [item(9)])).toEqual({
      positions: [0],
      duplicate: false,
    });
  });

  ctx.test('getItems returns the newest `limit` items in chronological order', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    const items = [0, 1, 2, 3, 4].map((n) => item(n));
    await store.appendItems(me, s, items);
    expect(await store.getItems(me, s)).toEqual(items);
    expect(await store.getItems(me, s, undefined)).toEqual(items);
    expect(await store.getItems(me, s, 2)).toEqual([item(3), item(4)]);
    expect(await store.getItems(me, s, 1)).toEqual([item(4)]);
    expect(await store.getItems(me, s, 5)).toEqual(items);
    expect(await store.getItems(me, s, 50)).toEqual(items);
    expect(await store.getItems(me, s, 0)).toEqual([]);
    expect(await store.getItems(me, s, -3)).toEqual([]);
    expect(await store.getItems(me, unique('s-'))).toEqual([]);
    expect(await store.getItems(me, unique('s-'), 3)).toEqual([]);
  });

  ctx.test('items keep their JSON shape and are returned as deep copies', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    const rich = {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'héllo "world" 🎉 \u0000 \'quoted\'', annotations: [] }],
      nested: { a: [1, 2.5, null, true], b: { c: 'd' } },
      providerData: { id: 'x' },
    };
    await store.appendItems(me, s, [rich]);
    const [got] = await store.getItems(me, s);
    expect(got).toEqual(rich);
    (got as { nested: { b: { c: string } } }).nested.b.c = 'mutated';
    rich.nested.a.push(99);
    expect(await store.getItems(me, s)).toEqual([
      { ...rich, nested: { a: [1, 2.5, null, true], b: { c: 'd' } } },
    ]);
  });

  ctx.test('popItem removes and returns the newest item; undefined when empty', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    expect(await store.popItem(me, s)).toBeUndefined();
    await store.appendItems(me, s, [item(0), item(1)]);
    expect(await store.popItem(me, s)).toEqual(item(1));
    expect(await store.getItems(me, s)).toEqual([item(0)]);
    expect(await store.popItem(me, s)).toEqual(item(0));
    expect(await store.popItem(me, s)).toBeUndefined();
    expect(await store.getItems(me, s)).toEqual([]);
  });

  ctx.test('clearSession removes the items and recorded operation ids but no beliefs', async () => {
    const store = await ctx.open();
    const scope = user();
    const s = unique('s-');
    const other = unique('s-');
    const b = belief(scope);
    await insertAll(store, scope, [b]);
    await store.appendItems(scope, s, [item(0), item(1)], {
      operationId: 'op-1',
      operationFingerprint: 'f1',
    });
    await store.appendItems(scope, other, [item(5)]);
    await store.clearSession(scope, s);
    expect(await store.getItems(scope, s)).toEqual([]);
    expect(await store.getItems(scope, other)).toEqual([item(5)]);
    expect(await store.get(scope, b.id)).toEqual(b);
    // The operation id is forgotten: the same id applies again, from position 0.
    expect(
      await store.appendItems(scope, s, [item(7)], { operationId: 'op-1', operationFingerprint: 'f2' }),
    ).toEqual({
      positions: [0],
      duplicate: false,
    });
    await store.clearSession(scope, unique('s-'));
  });

  ctx.test('operationId makes an append idempotent; a different fingerprint is refused', async () => {
    const store = await ctx.open();
    const scope = user();
    const s = unique('s-');
    const op = { operationId: 'run-1', operationFingerprint: stableJson({ n: 1 }) };
    const enqueue = [{ index: 0, role: 'user' as const, text: 'item 0', at: t(0) }];
    expect(await store.appendItems(scope, s, [item(0), item(1)], { ...op, enqueue })).toEqual({
      positions: [0, 1],
      duplicate: false,
    });
    expect(await store.appendItems(scope, s, [item(0), item(1)], { ...op, enqueue })).toEqual({
      positions: [0, 1],
      duplicate: true,
    });
    await rejects(
      store.appendItems(scope, s, [item(2)], { ...op, operationFingerprint: stableJson({ n: 2 }) }),
      InvalidInputError,
    );
    expect(await store.getItems(scope, s)).toEqual([item(0), item(1)]);
    expect(await store.backlog({ now: t(1), userId: scope.userId })).toMatchObject({ queued: 1 });
    // The id is per session.
    expect(await store.appendItems(scope, unique('s-'), [item(0)], op)).toEqual({
      positions: [0],
      duplicate: false,
    });
  });

  ctx.test(
    'an operation id without a fingerprint: the same append again is a duplicate, another is refused',
    async () => {
      const store = await ctx.open();
      const me = user();
      const s = unique('s-');
      const enqueue = [{ index: 0, role: 'user' as const, text: 'item 0', at: t(0) }];
      expect(await store.appendItems(me, s, [item(0)], { operationId: 'op', enqueue })).toEqual({
        positions: [0],
        duplicate: false,
      });
      expect(await store.appendItems(me, s, [item(0)], { operationId: 'op', enqueue })).toEqual({
        positions: [0],
        duplicate: true,
      });
      await rejects(store.appendItems(me, s, [item(1)], { operationId: 'op' }), InvalidInputError);
      expect(await store.getItems(me, s)).toEqual([item(0)]);
      expect(await store.backlog({ now: t(1), userId: me.userId })).toMatchObject({ queued: 1 });
    },
  );

  ctx.test('replaceSuffix swaps the last items, or refuses and changes nothing', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    await store.appendItems(me, s, [item(0), item(1), item(2)]);
    // Compared as stableJson: key order does not matter.
    const suffix = [{ content: 'item 2', role: 'user', type: 'message' }];
    expect(await store.appendItems(me, s, [item(20), item(21)], { replaceSuffix: suffix })).toEqual({
      positions: [2, 3],
      duplicate: false,
    });
    expect(await store.getItems(me, s)).toEqual([item(0), item(1), item(20), item(21)]);
    for (const wrong of [[item(1)], [item(0), item(21)], [item(0), item(1), item(20), item(21), item(22)]]) {
      await rejects(store.appendItems(me, s, [item(99)], { replaceSuffix: wrong }), InvalidInputError);
    }
    expect(await store.getItems(me, s)).toEqual([item(0), item(1), item(20), item(21)]);
    expect(await store.appendItems(me, s, [], { replaceSuffix: [item(20), item(21)] })).toEqual({
      positions: [],
      duplicate: false,
    });
    expect(await store.getItems(me, s)).toEqual([item(0), item(1)]);
    expect(await store.appendItems(me, s, [item(5)], { replaceSuffix: [] })).toEqual({
      positions: [2],
      duplicate: false,
    });
  });

  ctx.test('enqueue in appendItems uses the items positions, in the same transaction', async () => {
    const store = await ctx.open();
    const scope = user('chat');
    const s = unique('s-');
    await store.appendItems(scope, s, [item(0)]);
    const res = await store.appendItems(scope, s, [item(1), item(2, { role: 'assistant' }), item(3)], {
      enqueue: [
        { index: 0, role: 'user', text: 'I live in Lima', at: t(1) },
        { index: 1, role: 'assistant', text: 'Nice!', at: t(2), ref: 'r-2' },
        { index: 2, role: 'user', text: 'I like tea', at: t(3) },
      ],
    });
    expect(res.positions).toEqual([1, 2, 3]);
    const claim = (await store.claim({
      worker: 'w',
      leaseMs: 1000,
      now: t(5),
      userId: scope.userId,
      maxEntries: 9,
    }))!;
    expect(claim.entries.map((e) => [e.position, e.role, e.text])).toEqual([
      [1, 'user', 'I live in Lima'],
      [2, 'assistant', 'Nice!'],
      [3, 'user', 'I like tea'],
    ]);
    expect(claim.entries[1]).toMatchObject({
      ref: 'r-2',
      sessionId: s,
      scope: { userId: scope.userId, namespace: 'chat' },
    });
    expect(claim.entries[0]!.idempotencyKey).toBe(idempotencyKey(s, 1, 'I live in Lima'));
    // The same turns enqueued directly are duplicates.
    expect(
      await store.enqueue([{ scope, sessionId: s, position: 3, role: 'user', text: 'I like tea', at: t(3) }]),
    ).toEqual({ accepted: 0, duplicates: 1 });
    // A refused append enqueues nothing.
    await rejects(
      store.appendItems(scope, s, [item(4)], {
        replaceSuffix: [item(42)],
        enqueue: [{ index: 0, role: 'user', text: 'never', at: t(6) }],
      }),
      InvalidInputError,
    );
    await rejects(
      store.appendItems(scope, s, [item(4)], { enqueue: [{ index: 3, role: 'user', text: 'x', at: t(6) }] }),
      InvalidInputError,
    );
    expect(await store.backlog({ now: FAR_FUTURE, userId: scope.userId })).toMatchObject({
      queued: 0,
      claimed: 3,
    });
    expect(await store.getItems(scope, s)).toHaveLength(4);
  });

  ctx.test(
    'only plain JSON objects are stored: what would not come back identical is refused by index, never by content',
    async () => {
      const store = await ctx.open();
      const me = user();
      const s = unique('s-');
      await store.appendItems(me, s, [item(0)]);
      const secret = 'api-key-secret-4f1c';
      const withData = (data: unknown) => item(1, { providerData: data });
      const hidden = item(1);
      Object.defineProperty(hidden, 'providerData', { enumerable: false, value: { secret } });
      const getter = item(1);
      Object.defineProperty(getter, 'providerData', {
        enumerable: true,
        get: () => {
          throw new Error(secret);
        },
      });
      const cycle: Record<string, unknown> = { secret };
      cycle.self = cycle;
      const symbolKey = item(1, { [Symbol(secret)]: 1 });
      class Note {
        text = secret;
      }
      const refused: Array<[string, unknown]> = [
        ['a number', 42],
        ['a string', secret],
        ['null', null],
        ['an array', [item(1)]],
        ['a Date', new Date(0)],
        ['a nested Date', withData({ timestamp: new Date(0) })],
        ['a Uint16Array', withData({ values: new Uint16Array([300]) })],
        ['a Uint8Array', withData({ bytes: new Uint8Array([3, 7]) })],
        ['a Map', withData(new Map([[secret, 1]]))],
        ['a class instance', withData(new Note())],
        ['a hidden field', hidden],
        ['a throwing getter', getter],
        ['a symbol', withData({ secret: Symbol(secret) })],
        ['a symbol key', symbolKey],
        ['a bigint', withData({ value: 42n })],
        ['a function', withData({ fn: () => secret })],
        ['NaN', withData({ value: Number.NaN })],
        ['Infinity', withData({ value: Number.POSITIVE_INFINITY })],
        ['a cycle', withData(cycle)],
        // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
        ['a sparse array', withData({ list: [secret, , 1] })],
        ['undefined in an array', withData({ list: [secret, undefined] })],
        ['a Proxy', new Proxy(item(1, { secret }), {})],
      ];
      for (const [what, bad] of refused) {
        const err = await rejects(
          store.appendItems(me, s, [item(1), bad], {
            operationId: 'op-refused',
            operationFingerprint: 'f',
            enqueue: [{ index: 0, role: 'user', text: 'never accepted', at: t(1) }],
          }),
          InvalidInputError,
        );
        expect(err, what).toMatchObject({ field: 'items[1]' });
        expect(err.message, what).not.toContain(secret);
        expect(String(err.cause ?? ''), what).not.toContain(secret);
        // As an expected suffix it is refused the same way.
        const suffixErr = await rejects(
          store.appendItems(me, s, [item(1)], { replaceSuffix: [bad] }),
          InvalidInputError,
        );
        expect(suffixErr, what).toMatchObject({ field: 'replaceSuffix[0]' });
      }
      // Nothing was written, and the refused operation id was never recorded.
      expect(await store.getItems(me, s)).toEqual([item(0)]);
      expect(await store.backlog({ now: FAR_FUTURE, userId: me.userId })).toMatchObject({ queued: 0 });
      expect(
        await store.appendItems(me, s, [item(1)], { operationId: 'op-refused', operationFingerprint: 'f2' }),
      ).toEqual({ positions: [1], duplicate: false });
    },
  );

  ctx.test('an accepted item comes back exactly as given', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    // A null-prototype object is plain data; an undefined field is absent, as JSON has it.
    const bare = Object.assign(Object.create(null) as object, { source: 'provider' });
    const given = item(0, {
      providerData: bare,
      id: undefined,
      nested: { list: [1, -2.5, 'x', null, false, { deep: ['y'] }], empty: {}, none: [] },
    });
    await store.appendItems(me, s, [given]);
    const [got] = await store.getItems(me, s);
    expect(got).toEqual({
      type: 'message',
      role: 'user',
      content: 'item 0',
      providerData: { source: 'provider' },
      nested: { list: [1, -2.5, 'x', null, false, { deep: ['y'] }], empty: {}, none: [] },
    });
    expect(Object.keys(got as object)).not.toContain('id');
    // What came back is accepted as it is: a suffix compares equal to it.
    await store.appendItems(me, s, [item(1)], { replaceSuffix: [got] });
    expect(await store.getItems(me, s)).toEqual([item(1)]);
  });

  ctx.test('bad transcript input is refused and writes nothing', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    await rejects(store.appendItems(me, '', [item(0)]), InvalidInputError);
    await rejects(store.appendItems(me, 42 as never, [item(0)]), InvalidInputError);
    await rejects(store.appendItems(me, s, 'not an array' as never), InvalidInputError);
    await rejects(store.appendItems(me, s, [item(0), undefined]), InvalidInputError);
    await rejects(store.appendItems(me, s, [item(0)], { operationId: '' }), InvalidInputError);
    await rejects(store.appendItems(me, s, [item(0)], { replaceSuffix: 'x' as never }), InvalidInputError);
    await rejects(store.getItems(me, ''), InvalidInputError);
    await rejects(store.popItem(me, ''), InvalidInputError);
    await rejects(store.clearSession(me, ''), InvalidInputError);
    expect(await store.getItems(me, s)).toEqual([]);
  });

  ctx.test('the owner is required and checked on every transcript method', async () => {
    const store = await ctx.open();
    const me = user();
    const s = unique('s-');
    await store.appendItems(me, s, [item(0)]);
    for (const bad of [undefined, null, 'alice', { userId: '' }, { userId: '  ' }, { userId: 7 }, {}]) {
      const owner = bad as never;
      const err = await rejects(store.appendItems(owner, s, [item(1)]), InvalidInputError);
      expect(err.message.length).toBeGreaterThan(0);
      await rejects(store.appendItems(owner, unique('s-'), [item(1)]), InvalidInputError);
      await rejects(store.getItems(owner, s), InvalidInputError);
      await rejects(store.popItem(owner, s), InvalidInputError);
      await rejects(store.clearSession(owner, s), InvalidInputError);
    }
    await rejects(
      store.appendItems({ userId: me.userId, namespace: 3 } as never, s, [item(1)]),
      InvalidInputError,
    );
    expect(await store.getItems(me, s)).toEqual([item(0)]);
  });

  ctx.test(
    'a session is not found through another scope: reads see nothing, pop and clear are refused and change nothing',
    async () => {
      const { store, alice, bob, thread } = await twoUsers(ctx);
      const aliceWork = { userId: alice.userId, namespace: 'work' };
      await store.appendItems(alice, thread, [item(0), item(1)], {
        operationId: 'op-a',
        operationFingerprint: 'fa',
        enqueue: [{ index: 0, role: 'user', text: 'alice turn', at: t(0) }],
      });
      for (const stranger of [bob, aliceWork]) {
        expect(await store.getItems(stranger, thread)).toEqual([]);
        expect(await store.getItems(stranger, thread, 1)).toEqual([]);
        expect(await rejects(store.popItem(stranger, thread), InvalidInputError)).toMatchObject({
          field: 'owner',
        });
        expect(await rejects(store.clearSession(stranger, thread), InvalidInputError)).toMatchObject({
          field: 'owner',
        });
        expect(await store.getItems(alice, thread)).toEqual([item(0), item(1)]);
      }
      // Alice's own scope still reads and changes it.
      expect(await store.getItems({ userId: alice.userId, namespace: '' }, thread, 1)).toEqual([item(1)]);
      expect(await store.popItem(alice, thread)).toEqual(item(1));
      expect(await store.getItems(alice, thread)).toEqual([item(0)]);
    },
  );

  ctx.test('appending to another scope’s session is refused and changes nothing', async () => {
    const { store, alice, bob, thread } = await twoUsers(ctx);
    await store.appendItems(alice, thread, [item(0)], { operationId: 'op-1', operationFingerprint: 'f' });
    const before = await store.backlog({ now: t(0) });
    for (const stranger of [bob, { userId: alice.userId, namespace: 'work' }]) {
      const err = await rejects(
        store.appendItems(stranger, thread, [item(1)], {
          enqueue: [{ index: 0, role: 'user', text: 'intruder turn', at: t(1) }],
        }),
        InvalidInputError,
      );
      expect(err.message).toMatch(/owner/);
      // Not even a repeat of alice's operation id, nor an empty append, nor a suffix replacement.
      await rejects(
        store.appendItems(stranger, thread, [item(0)], { operationId: 'op-1', operationFingerprint: 'f' }),
        InvalidInputError,
      );
      await rejects(store.appendItems(stranger, thread, []), InvalidInputError);
      await rejects(
        store.appendItems(stranger, thread, [item(9)], { replaceSuffix: [item(0)] }),
        InvalidInputError,
      );
    }
    expect(await store.getItems(alice, thread)).toEqual([item(0)]);
    expect(await store.backlog({ now: t(0) })).toEqual(before);
    expect(await store.claim({ worker: 'w', leaseMs: 1000, now: t(2), userId: bob.userId })).toBeNull();
    // Alice goes on as before.
    expect(await store.appendItems(alice, thread, [item(1)])).toEqual({ positions: [1], duplicate: false });
  });

  ctx.test(
    'a second user with the same conversation id gets no session of their own and sees nothing',
    async () => {
      const { store, alice, bob, thread } = await twoUsers(ctx);
      await store.appendItems(alice, thread, [item(0, { content: 'alice private' })]);
      // Bob's client picks the same id: his reads find nothing of alice's, his changes are refused.
      expect(await store.getItems(bob, thread)).toEqual([]);
      await rejects(store.appendItems(bob, thread, [item(0, { content: 'bob' })]), InvalidInputError);
      await rejects(store.popItem(bob, thread), InvalidInputError);
      expect(await store.getItems(alice, thread)).toEqual([item(0, { content: 'alice private' })]);
      // The session stays alice's when it is emptied and when it is cleared.
      expect(await store.popItem(alice, thread)).toEqual(item(0, { content: 'alice private' }));
      await rejects(store.appendItems(bob, thread, [item(1)]), InvalidInputError);
      await store.appendItems(alice, thread, [item(2)]);
      await store.clearSession(alice, thread);
      await rejects(store.appendItems(bob, thread, [item(3)]), InvalidInputError);
      expect(await store.appendItems(alice, thread, [item(4)])).toEqual({ positions: [0], duplicate: false });
      expect(await store.getItems(bob, thread)).toEqual([]);
      // Bob's own conversation under another id is his.
      const bobs = unique('thread-');
      await store.appendItems(bob, bobs, [item(5)]);
      expect(await store.getItems(bob, bobs)).toEqual([item(5)]);
      expect(await store.getItems(alice, bobs)).toEqual([]);
    },
  );

  ctx.test(
    'a session written without an owner is open to every scope until an append records one',
    async (c) => {
      const store = await ctx.open();
      if (!ctx.writeUnownedSession) return c.skip('this store cannot hold a session without an owner');
      const alice = user();
      const bob = user();
      const legacy = unique('legacy-');
      await ctx.writeUnownedSession(legacy, [item(0), item(1), item(2)]);
      // No owner yet: every scope reads and changes it, as before owners were recorded.
      expect(await store.getItems(alice, legacy)).toEqual([item(0), item(1), item(2)]);
      expect(await store.getItems(bob, legacy, 1)).toEqual([item(2)]);
      expect(await store.popItem(bob, legacy)).toEqual(item(2));
      // The first owned append records alice as its owner and continues the positions.
      expect(
        await store.appendItems(alice, legacy, [item(3)], {
          enqueue: [{ index: 0, role: 'user', text: 'alice now owns it', at: t(1) }],
        }),
      ).toEqual({ positions: [2], duplicate: false });
      expect(await store.getItems(alice, legacy)).toEqual([item(0), item(1), item(3)]);
      expect(await store.getItems(bob, legacy)).toEqual([]);
      await rejects(store.popItem(bob, legacy), InvalidInputError);
      await rejects(store.clearSession(bob, legacy), InvalidInputError);
      await rejects(store.appendItems(bob, legacy, [item(4)]), InvalidInputError);
      expect(await store.getItems(alice, legacy)).toEqual([item(0), item(1), item(3)]);
      // It is alice's now: erasing alice removes it.
      expect((await store.eraseUser(alice.userId)).transcriptItems).toBe(3);
      expect(await store.getItems(alice, legacy)).toEqual([]);

      // Clearing an unowned session through any scope empties it.
      const other = unique('legacy-');
      await ctx.writeUnownedSession(other, [item(0)]);
      await store.clearSession(bob, other);
      expect(await store.getItems(alice, other)).toEqual([]);
    },
  );
}
