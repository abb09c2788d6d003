import { InvalidInputError, idempotencyKey, stableJson } from '@mem01/engine';
import { expect } from 'vitest';
import type { SuiteContext } from '../context.js';
import { belief, FAR_FUTURE, insertAll, rejects, t, unique } from '../fixtures.js';

const item = (n: number, extra: object = {}) => ({
  type: 'message',
  role: 'user',
  content: `item ${n}`,
  ...extra,
});

export function transcriptTests(ctx: SuiteContext): void {
  ctx.test('appendItems numbers positions from 0 and continues after the last item', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    expect(await store.appendItems(s, [item(0), item(1)])).toEqual({ positions: [0, 1], duplicate: false });
    expect(await store.appendItems(s, [item(2)])).toEqual({ positions: [2], duplicate: false });
    expect(await store.appendItems(s, [])).toEqual({ positions: [], duplicate: false });
    expect(await store.popItem(s)).toEqual(item(2));
    expect(await store.appendItems(s, [item(3)])).toEqual({ positions: [2], duplicate: false });
    expect(await store.getItems(s)).toEqual([item(0), item(1), item(3)]);
    // Sessions are independent.
    expect(await store.appendItems(unique('s-'), [item(9)])).toEqual({ positions: [0], duplicate: false });
  });

  ctx.test('getItems returns the newest `limit` items in chronological order', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    const items = [0, 1, 2, 3, 4].map((n) => item(n));
    await store.appendItems(s, items);
    expect(await store.getItems(s)).toEqual(items);
    expect(await store.getItems(s, undefined)).toEqual(items);
    expect(await store.getItems(s, 2)).toEqual([item(3), item(4)]);
    expect(await store.getItems(s, 1)).toEqual([item(4)]);
    expect(await store.getItems(s, 5)).toEqual(items);
    expect(await store.getItems(s, 50)).toEqual(items);
    expect(await store.getItems(s, 0)).toEqual([]);
    expect(await store.getItems(s, -3)).toEqual([]);
    expect(await store.getItems(unique('s-'))).toEqual([]);
    expect(await store.getItems(unique('s-'), 3)).toEqual([]);
  });

  ctx.test('items keep their JSON shape and are returned as deep copies', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    const rich = {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'héllo "world" 🎉 \u0000 \'quoted\'', annotations: [] }],
      nested: { a: [1, 2.5, null, true], b: { c: 'd' } },
      providerData: { id: 'x' },
    };
    await store.appendItems(s, [rich]);
    const [got] = await store.getItems(s);
    expect(got).toEqual(rich);
    (got as { nested: { b: { c: string } } }).nested.b.c = 'mutated';
    rich.nested.a.push(99);
    expect(await store.getItems(s)).toEqual([
      { ...rich, nested: { a: [1, 2.5, null, true], b: { c: 'd' } } },
    ]);
  });

  ctx.test('popItem removes and returns the newest item; undefined when empty', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    expect(await store.popItem(s)).toBeUndefined();
    await store.appendItems(s, [item(0), item(1)]);
    expect(await store.popItem(s)).toEqual(item(1));
    expect(await store.getItems(s)).toEqual([item(0)]);
    expect(await store.popItem(s)).toEqual(item(0));
    expect(await store.popItem(s)).toBeUndefined();
    expect(await store.getItems(s)).toEqual([]);
  });

  ctx.test('clearSession removes the items and recorded operation ids but no beliefs', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const s = unique('s-');
    const other = unique('s-');
    const b = belief(scope);
    await insertAll(store, scope, [b]);
    await store.appendItems(s, [item(0), item(1)], {
      owner: scope,
      operationId: 'op-1',
      operationFingerprint: 'f1',
    });
    await store.appendItems(other, [item(5)]);
    await store.clearSession(s);
    expect(await store.getItems(s)).toEqual([]);
    expect(await store.getItems(other)).toEqual([item(5)]);
    expect(await store.get(scope, b.id)).toEqual(b);
    // The operation id is forgotten: the same id applies again, from position 0.
    expect(
      await store.appendItems(s, [item(7)], { operationId: 'op-1', operationFingerprint: 'f2' }),
    ).toEqual({
      positions: [0],
      duplicate: false,
    });
    await store.clearSession(unique('s-'));
  });

  ctx.test('operationId makes an append idempotent; a different fingerprint is refused', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-') };
    const s = unique('s-');
    const op = { owner: scope, operationId: 'run-1', operationFingerprint: stableJson({ n: 1 }) };
    const enqueue = [{ index: 0, role: 'user' as const, text: 'item 0', at: t(0) }];
    expect(await store.appendItems(s, [item(0), item(1)], { ...op, enqueue })).toEqual({
      positions: [0, 1],
      duplicate: false,
    });
    expect(await store.appendItems(s, [item(0), item(1)], { ...op, enqueue })).toEqual({
      positions: [0, 1],
      duplicate: true,
    });
    await rejects(
      store.appendItems(s, [item(2)], { ...op, operationFingerprint: stableJson({ n: 2 }) }),
      InvalidInputError,
    );
    expect(await store.getItems(s)).toEqual([item(0), item(1)]);
    expect(await store.backlog({ now: t(1), userId: scope.userId })).toMatchObject({ queued: 1 });
    // The id is per session.
    expect(await store.appendItems(unique('s-'), [item(0)], op)).toEqual({
      positions: [0],
      duplicate: false,
    });
  });

  ctx.test('replaceSuffix swaps the last items, or refuses and changes nothing', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    await store.appendItems(s, [item(0), item(1), item(2)]);
    // Compared as stableJson: key order does not matter.
    const suffix = [{ content: 'item 2', role: 'user', type: 'message' }];
    expect(await store.appendItems(s, [item(20), item(21)], { replaceSuffix: suffix })).toEqual({
      positions: [2, 3],
      duplicate: false,
    });
    expect(await store.getItems(s)).toEqual([item(0), item(1), item(20), item(21)]);
    for (const wrong of [[item(1)], [item(0), item(21)], [item(0), item(1), item(20), item(21), item(22)]]) {
      await rejects(store.appendItems(s, [item(99)], { replaceSuffix: wrong }), InvalidInputError);
    }
    expect(await store.getItems(s)).toEqual([item(0), item(1), item(20), item(21)]);
    expect(await store.appendItems(s, [], { replaceSuffix: [item(20), item(21)] })).toEqual({
      positions: [],
      duplicate: false,
    });
    expect(await store.getItems(s)).toEqual([item(0), item(1)]);
    expect(await store.appendItems(s, [item(5)], { replaceSuffix: [] })).toEqual({
      positions: [2],
      duplicate: false,
    });
  });

  ctx.test('enqueue in appendItems uses the items positions, in the same transaction', async () => {
    const store = await ctx.open();
    const scope = { userId: unique('user-'), namespace: 'chat' };
    const s = unique('s-');
    await store.appendItems(s, [item(0)], { owner: scope });
    const res = await store.appendItems(s, [item(1), item(2, { role: 'assistant' }), item(3)], {
      owner: scope,
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
      store.appendItems(s, [item(4)], {
        owner: scope,
        replaceSuffix: [item(42)],
        enqueue: [{ index: 0, role: 'user', text: 'never', at: t(6) }],
      }),
      InvalidInputError,
    );
    await rejects(
      store.appendItems(s, [item(4)], {
        owner: scope,
        enqueue: [{ index: 3, role: 'user', text: 'x', at: t(6) }],
      }),
      InvalidInputError,
    );
    expect(await store.backlog({ now: FAR_FUTURE, userId: scope.userId })).toMatchObject({
      queued: 0,
      claimed: 3,
    });
    expect(await store.getItems(s)).toHaveLength(4);
  });

  ctx.test('bad transcript input is refused and writes nothing', async () => {
    const store = await ctx.open();
    const s = unique('s-');
    await rejects(store.appendItems('', [item(0)]), InvalidInputError);
    await rejects(store.appendItems(42 as never, [item(0)]), InvalidInputError);
    await rejects(store.appendItems(s, 'not an array' as never), InvalidInputError);
    await rejects(store.appendItems(s, [item(0), undefined]), InvalidInputError);
    await rejects(store.appendItems(s, [item(0)], { owner: { userId: '' } }), InvalidInputError);
    await rejects(store.getItems(''), InvalidInputError);
    await rejects(store.popItem(''), InvalidInputError);
    await rejects(store.clearSession(''), InvalidInputError);
    expect(await store.getItems(s)).toEqual([]);
  });
}
