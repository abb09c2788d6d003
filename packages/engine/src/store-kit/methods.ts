/** Writing a store as role modules of functions over shared state, bound into one class by {@link storeClass}. */
import type { FullStore } from '../ports.js';
import { type Checked, checkCall, type PortMethod, ROLE_METHODS, type RoleMethod } from './checks.js';

export type { Checked, PortMethod, RoleMethod } from './checks.js';

type Result<K extends PortMethod> = FullStore[K] extends (...args: never[]) => infer R ? R : never;

/**
 * A port method written as a function of a store's shared state `C` (its connection, say) and the call's arguments
 * as {@link storeClass} hands them over, checked and canonical ({@link Checked}): role modules declare
 * `const get: StoreMethod<Connection, 'get'> = (c, scope, id) => …`, where `scope` already has its namespace. It may
 * return its result or a promise of it (the bound method is async all the same); `Sync` set to `true` types a method
 * that completes synchronously, so that the store's own code may call it and use its result at once.
 */
export type StoreMethod<C, K extends RoleMethod, Sync extends boolean = false> = (
  c: C,
  ...args: Checked<K>
) => Sync extends true ? Awaited<Result<K>> : Result<K>;

/** What {@link storeClass} binds: each role method, as a function of the store's state. */
export type StoreImplementation<C> = {
  readonly [K in RoleMethod]: StoreMethod<C, K> | StoreMethod<C, K, true>;
};

/** Where a store made by {@link storeClass} keeps its state. */
const STATE = Symbol('mem01 store state');

/**
 * The base class of a store written as role modules: one async prototype method per port method (`commit`,
 * `get`, … `clearSession`). Each runs `options.guard(state)` (e.g. a closed check), then the method's input checks
 * from the store kit's one table (with the store's `maxTextBytes`), then `implementation[name](state, ...checked)`.
 * A store extends it and adds `name`, `capabilities`, `info` and `close`:
 *
 * ```ts
 * export class MyStore extends storeClass<Connection>({ ...beliefs, ...outbox, ...transcript, ...admin }, {
 *   maxTextBytes: () => 65536,
 * }) {
 *   constructor(db: Db) { super(new Connection(db)); }
 * }
 * ```
 *
 * Module namespaces may be spread in: only the port method names are taken.
 */
export function storeClass<C>(
  implementation: StoreImplementation<C>,
  options: {
    /** The store's limit on text (values, statements, quotes, turns), in UTF-8 bytes. */
    readonly maxTextBytes: (state: C) => number;
    readonly guard?: ((state: C) => void) | undefined;
  },
): abstract new (
  state: C,
) => Pick<FullStore, RoleMethod> {
  abstract class Store {
    readonly [STATE]: C;
    constructor(state: C) {
      this[STATE] = state;
    }
  }
  for (const name of ROLE_METHODS) {
    const fn = implementation[name] as (state: C, ...args: readonly unknown[]) => unknown;
    if (typeof fn !== 'function') throw new TypeError(`store implementation has no ${name}`);
    Object.defineProperty(Store.prototype, name, {
      async value(this: Store, ...args: unknown[]) {
        const state = this[STATE];
        options.guard?.(state);
        return fn(state, ...checkCall(name, { maxTextBytes: options.maxTextBytes(state) }, args));
      },
      writable: true,
      configurable: true,
    });
  }
  return Store as unknown as abstract new (
    state: C,
  ) => Pick<FullStore, RoleMethod>;
}
