/**
 * The input checks of every port method, in one table that {@link storeClass} applies before it calls a store's role
 * module: a store receives each call's arguments checked and canonical, so a new store cannot forget a check (the
 * way better-auth's adapter factory transforms input before an adapter sees it). What only the database can tell
 * (versions, ids that exist, dimensions) stays in the store.
 */
import type { FullStore } from '../ports.js';
import { canonicalTimestamp } from '../store-input.js';
import { assertId, normalizeScope } from '../util.js';
import {
  validateAccess,
  validateBudgetRead,
  validateBudgetRequest,
  validateCountOptions,
  validateGrant,
  validateOperationQuery,
  validateRevokeOptions,
} from './governance.js';
import {
  validateBacklogOptions,
  validateClaimOptions,
  validateDrop,
  validateEnqueue,
  validateFail,
  validateRelease,
  validateRenew,
} from './outbox.js';
import {
  validateAuditOptions,
  validateHistoryOptions,
  validateIds,
  validateKeys,
  validateLexicalSearch,
  validateListOptions,
  validateVectorSearch,
} from './reads.js';
import { validateAppend, validateSessionCall } from './transcript.js';
import { validateCommit, validateForgetOptions, validateImport } from './writes.js';

/** The names of the port methods (not `name` or `capabilities`). */
export type PortMethod = {
  [K in keyof FullStore]: FullStore[K] extends (...args: never[]) => unknown ? K : never;
}[keyof FullStore];

/** The port methods a store's role modules implement: every one but `info` and `close`, which the class keeps. */
export type RoleMethod = Exclude<PortMethod, 'info' | 'close'>;

/** The limit a store puts on text (values, statements, quotes, turns), in UTF-8 bytes. */
interface Limits {
  readonly maxTextBytes: number;
}

type Params<K extends RoleMethod> = FullStore[K] extends (...args: infer A) => unknown ? A : never;

/** One check per port method: the port's arguments in, the checked arguments the role module gets out. */
const CHECKS = {
  commit: (l: Limits, request) => [validateCommit(request, l.maxTextBytes)] as const,
  get: (_l: Limits, scope, id) => {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    return [s, id] as const;
  },
  getActiveByKeys: (_l: Limits, scope, keys) => [normalizeScope(scope), validateKeys(keys)] as const,
  list: (_l: Limits, scope, options) => [normalizeScope(scope), validateListOptions(options)] as const,
  searchLexical: (_l: Limits, scope, query, options) =>
    [validateLexicalSearch(scope, query, options)] as const,
  searchVector: (_l: Limits, scope, vector, options) =>
    [validateVectorSearch(scope, vector, options)] as const,
  history: (_l: Limits, scope, options) => [normalizeScope(scope), validateHistoryOptions(options)] as const,
  forget: (_l: Limits, scope, id, options) => {
    const s = normalizeScope(scope);
    assertId(id, 'id');
    return [s, id, validateForgetOptions(options)] as const;
  },
  getEmbeddings: (_l: Limits, scope, ids) => [normalizeScope(scope), validateIds(ids)] as const,
  importBeliefs: (l: Limits, records) =>
    [validateImport(records, l.maxTextBytes), (records as readonly unknown[]).length] as const,
  eraseUser: (_l: Limits, userId) => {
    assertId(userId, 'userId');
    return [userId] as const;
  },
  eraseScope: (_l: Limits, scope) => [normalizeScope(scope)] as const,
  listScopes: () => [] as const,
  auditLog: (_l: Limits, scope, options) => [normalizeScope(scope), validateAuditOptions(options)] as const,
  enqueue: (l: Limits, entries) => [validateEnqueue(entries, l.maxTextBytes)] as const,
  claim: (_l: Limits, options) => [validateClaimOptions(options)] as const,
  renew: (_l: Limits, claim, options) => [validateRenew(claim, options)] as const,
  fail: (_l: Limits, claim, error, options) => [validateFail(claim, error, options)] as const,
  release: (_l: Limits, claim, options) => [validateRelease(claim, options)] as const,
  drop: (_l: Limits, claim, options) => [validateDrop(claim, options)] as const,
  backlog: (_l: Limits, options) => [validateBacklogOptions(options)] as const,
  appendItems: (l: Limits, owner, sessionId, items, options) =>
    [validateAppend(owner, sessionId, items, options, l.maxTextBytes)] as const,
  getItems: (_l: Limits, owner, sessionId, limit) => [validateSessionCall(owner, sessionId, limit)] as const,
  popItem: (_l: Limits, owner, sessionId) => [validateSessionCall(owner, sessionId)] as const,
  clearSession: (_l: Limits, owner, sessionId) => [validateSessionCall(owner, sessionId)] as const,
  getOperation: (_l: Limits, scope, key) => [validateOperationQuery(scope, key)] as const,
  recordGrant: (_l: Limits, grant) => [validateGrant(grant)] as const,
  listGrants: (_l: Limits, scope) => [normalizeScope(scope)] as const,
  activeGrant: (_l: Limits, scope, now) => [normalizeScope(scope), canonicalTimestamp(now, 'now')] as const,
  revokeGrants: (_l: Limits, scope, options) =>
    [normalizeScope(scope), validateRevokeOptions(options)] as const,
  chargeBudget: (_l: Limits, request) => [validateBudgetRequest(request)] as const,
  readBudget: (_l: Limits, request) => [validateBudgetRead(request)] as const,
  countActiveBeliefs: (_l: Limits, userId, options) => [validateCountOptions(userId, options)] as const,
  recordAccess: (_l: Limits, scope, hits, at) => [validateAccess(scope, hits, at)] as const,
  clearAll: () => [] as const,
} satisfies { readonly [K in RoleMethod]: (limits: Limits, ...args: Params<K>) => readonly unknown[] };

/** The arguments a role module receives for port method `K`: the port's arguments, checked and canonical. */
export type Checked<K extends RoleMethod> = ReturnType<(typeof CHECKS)[K]>;

/** Checks the arguments of a call of port method `name` (`InvalidInputError` on the first problem). */
export function checkCall<K extends RoleMethod>(
  name: K,
  limits: Limits,
  args: readonly unknown[],
): Checked<K> {
  const check = CHECKS[name] as (limits: Limits, ...args: readonly unknown[]) => Checked<K>;
  return check(limits, ...args);
}

/** Every role method, in the order of the port contracts. */
export const ROLE_METHODS = Object.keys(CHECKS) as readonly RoleMethod[];
