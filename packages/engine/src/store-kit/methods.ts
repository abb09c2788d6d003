/** Writing a store as role modules of functions over shared state, bound into one class by {@link storeClass}. */
import type { FullStore } from '../ports.js';

/** The names of the port methods (not `name` or `capabilities`). */
export type PortMethod = {
  [K in keyof FullStore]: FullStore[K] extends (...args: never[]) => unknown ? K : never;
}[keyof FullStore];

type Method<K extends PortMethod> = FullStore[K] extends (...args: infer A) => infer R ? [A, R] : never;

/**
 * A port method written as a function of a store's shared state `C` (its connection, say), with the port's
 * parameters and result: role modules declare `const get: StoreMethod<Connection, 'get'> = (c, scope, id) => …`.
 */
export type StoreMethod<C, K extends PortMethod> = (c: C, ...args: Method<K>[0]) => Method<K>[1];

/** {@link StoreMethod} for a method that completes synchronously (the bound method is async all the same). */
export type SyncStoreMethod<C, K extends PortMethod> = (c: C, ...args: Method<K>[0]) => Awaited<Method<K>[1]>;

/** The port methods a store's role modules implement: every one but `info` and `close`, which the class keeps. */
export type RoleMethod = Exclude<PortMethod, 'info' | 'close'>;

/** What {@link storeClass} binds: each role method, as a function of the store's state. */
export type StoreImplementation<C> = {
  readonly [K in RoleMethod]: StoreMethod<C, K> | SyncStoreMethod<C, K>;
};

const ROLE_METHODS: readonly RoleMethod[] = [
  'commit',
  'get',
  'getActiveByKeys',
  'list',
  'searchLexical',
  'searchVector',
  'history',
  'forget',
  'getEmbeddings',
  'importBeliefs',
  'eraseUser',
  'eraseScope',
  'listScopes',
  'auditLog',
  'enqueue',
  'claim',
  'renew',
  'fail',
  'release',
  'drop',
  'backlog',
  'appendItems',
  'getItems',
  'popItem',
  'clearSession',
  'getOperation',
  'recordGrant',
  'listGrants',
  'activeGrant',
  'revokeGrants',
  'chargeBudget',
  'readBudget',
  'countActiveBeliefs',
  'recordAccess',
  'clearAll',
];

/** Where a store made by {@link storeClass} keeps its state. */
const STATE = Symbol('mem01 store state');

/**
 * The base class of a store written as role modules: one async prototype method per port method (`commit`,
 * `get`, … `clearSession`), each calling `implementation[name](state, ...args)` on the state given to the
 * constructor, after `options.guard(state)` (e.g. a closed check). A store extends it and adds `name`,
 * `capabilities`, `info` and `close`:
 *
 * ```ts
 * export class MyStore extends storeClass<Connection>({ ...beliefs, ...outbox, ...transcript, ...admin }) {
 *   constructor(db: Db) { super(new Connection(db)); }
 * }
 * ```
 *
 * Module namespaces may be spread in: only the port method names are taken.
 */
export function storeClass<C>(
  implementation: StoreImplementation<C>,
  options: { readonly guard?: ((state: C) => void) | undefined } = {},
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
    const fn = implementation[name] as (state: C, ...args: unknown[]) => unknown;
    if (typeof fn !== 'function') throw new TypeError(`store implementation has no ${name}`);
    Object.defineProperty(Store.prototype, name, {
      async value(this: Store, ...args: unknown[]) {
        options.guard?.(this[STATE]);
        return fn(this[STATE], ...args);
      },
      writable: true,
      configurable: true,
    });
  }
  return Store as unknown as abstract new (
    state: C,
  ) => Pick<FullStore, RoleMethod>;
}
