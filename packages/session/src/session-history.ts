/**
 * The Agents SDK's history-change contract (`applyHistoryTransaction`, `applyHistoryMutations`), typed
 * structurally so the package needs no SDK at runtime, and checked the way the SDK's own `MemorySession` checks it,
 * with the SDK's wording. Items are checked once, by the store kit's `snapshotItem`, which every store applies too.
 */
import { InvalidInputError } from '@mem01/engine';
import { snapshotItem } from '@mem01/engine/binding-kit';
import { SessionHistoryError } from './errors.js';

/** Appends items (`SessionHistoryAppendItemsTransaction` of the SDK). */
export interface HistoryAppendTransaction<Item = unknown> {
  readonly type: 'append_items';
  readonly items: readonly Item[];
}

/** Replaces the end of the history (`SessionHistoryReplaceSuffixTransaction` of the SDK). */
export interface HistoryReplaceSuffixTransaction<Item = unknown> {
  readonly type: 'replace_suffix';
  readonly expectedSuffix: readonly Item[];
  readonly replacement: readonly Item[];
}

/** The arguments of `applyHistoryTransaction` (`SessionHistoryTransactionArgs` of the SDK). */
export interface HistoryTransactionArgs<Item = unknown> {
  /** Non-empty, and stable when the transaction is retried. */
  readonly operationId: string;
  readonly transaction: HistoryAppendTransaction<Item> | HistoryReplaceSuffixTransaction<Item>;
}

/** Replaces the stored call of `callId` (`SessionHistoryReplaceFunctionCallMutation` of the SDK). */
export interface HistoryReplaceFunctionCallMutation<Item = unknown> {
  readonly type: 'replace_function_call';
  readonly callId: string;
  readonly replacement: Item;
}

/** The arguments of `applyHistoryMutations` (`SessionHistoryRewriteArgs` of the SDK). */
export interface HistoryMutationArgs<Item = unknown> {
  readonly mutations: readonly HistoryReplaceFunctionCallMutation<Item>[];
}

type Plain = Record<string, unknown>;

/** A checked transaction: plain copies, read once. */
export type CheckedTransaction =
  | { readonly type: 'append_items'; readonly items: Plain[] }
  | { readonly type: 'replace_suffix'; readonly expectedSuffix: Plain[]; readonly replacement: Plain[] };

/** The SDK's `MemorySession` messages (agents-core `memory/memorySession`), matched word for word. */
export const SDK_MESSAGES = {
  arguments: 'Session history transaction arguments are invalid.',
  operationId: 'Session history transaction operationId must be a non-empty string.',
  transaction: 'Session history transaction must be an object.',
  items: 'Session history transaction items contain invalid or unsupported data.',
  appendFields: 'Session history append transaction fields are invalid.',
  suffixFields: 'Session history suffix transaction fields are invalid.',
  type: 'Unsupported session history transaction type.',
  conflict: 'Session history operation was already applied with a different transaction.',
  suffix: 'Session history suffix no longer matches the transaction precondition.',
} as const;

const invalid = (message: string, options?: { field?: string; index?: number }) =>
  new SessionHistoryError('invalid_history_change', message, options);

/**
 * Reads `args` once (a getter is never read twice, and its error never passes through) and checks it as the SDK's
 * `MemorySession` does: a non-empty `operationId`, a transaction with exactly the fields of its type, and items that
 * are plain JSON objects. Throws {@link SessionHistoryError} (`invalid_history_change`) before anything is written.
 */
export function checkTransaction(args: unknown): { operationId: string; transaction: CheckedTransaction } {
  let operationId: unknown;
  let transaction: unknown;
  try {
    if (!args || typeof args !== 'object') throw new Error('not an object');
    operationId = Reflect.get(args, 'operationId');
    transaction = Reflect.get(args, 'transaction');
  } catch {
    throw invalid(SDK_MESSAGES.arguments);
  }
  if (typeof operationId !== 'string' || operationId.trim() === '') {
    throw invalid(SDK_MESSAGES.operationId, { field: 'operationId' });
  }
  if (!transaction || typeof transaction !== 'object') {
    throw invalid(SDK_MESSAGES.transaction, { field: 'transaction' });
  }
  const fields = envelope(transaction);
  if (fields.type === 'append_items') {
    if (!hasExactly(fields, ['type', 'items']) || !Array.isArray(fields.items)) {
      throw invalid(SDK_MESSAGES.appendFields, { field: 'transaction' });
    }
    return { operationId, transaction: { type: 'append_items', items: items(fields.items, 'items') } };
  }
  if (fields.type !== 'replace_suffix') throw invalid(SDK_MESSAGES.type, { field: 'transaction.type' });
  if (
    !hasExactly(fields, ['type', 'expectedSuffix', 'replacement']) ||
    !Array.isArray(fields.expectedSuffix) ||
    !Array.isArray(fields.replacement)
  ) {
    throw invalid(SDK_MESSAGES.suffixFields, { field: 'transaction' });
  }
  return {
    operationId,
    transaction: {
      type: 'replace_suffix',
      expectedSuffix: items(fields.expectedSuffix, 'expectedSuffix'),
      replacement: items(fields.replacement, 'replacement'),
    },
  };
}

/**
 * Checks `applyHistoryMutations` arguments: `mutations` an array of `replace_function_call` mutations, each with a
 * non-empty `callId` and a plain `function_call` item of that call as `replacement`.
 */
export function checkMutations(args: unknown): HistoryReplaceFunctionCallMutation<Plain>[] {
  let mutations: unknown;
  try {
    if (!args || typeof args !== 'object') throw new Error('not an object');
    mutations = Reflect.get(args, 'mutations');
  } catch {
    throw invalid('Session history mutation arguments are invalid.');
  }
  if (!Array.isArray(mutations)) {
    throw invalid('Session history mutations must be an array.', { field: 'mutations' });
  }
  return plainList(mutations, 'mutations').map((mutation, index) => {
    const field = `mutations[${index}]`;
    if (mutation.type !== 'replace_function_call') {
      throw invalid(`Unsupported session history mutation type (${field}).`, { field, index });
    }
    const { callId, replacement } = mutation;
    if (typeof callId !== 'string' || callId === '') {
      throw invalid(`Session history mutation callId must be a non-empty string (${field}).`, {
        field,
        index,
      });
    }
    const item = replacement as Plain | undefined;
    if (!item || typeof item !== 'object' || item.type !== 'function_call' || item.callId !== callId) {
      throw invalid(
        `Session history mutation replacement must be a function_call item of its callId (${field}).`,
        {
          field: `${field}.replacement`,
          index,
        },
      );
    }
    return { type: 'replace_function_call', callId, replacement: item };
  });
}

/**
 * The SDK's `applySessionHistoryMutations`: each `replace_function_call` puts its replacement where the first
 * function call of its `callId` was and drops the other calls of that id; other items are kept in order.
 */
export function applyMutations(
  items: readonly unknown[],
  mutations: readonly HistoryReplaceFunctionCallMutation<Plain>[],
): unknown[] {
  let next = [...items];
  for (const mutation of mutations) {
    const out: unknown[] = [];
    let placed = false;
    for (const item of next) {
      const rec = item as Plain | null;
      if (rec && typeof rec === 'object' && rec.type === 'function_call' && rec.callId === mutation.callId) {
        if (!placed) out.push(structuredClone(mutation.replacement));
        placed = true;
        continue;
      }
      out.push(item);
    }
    next = out;
  }
  return next;
}

/** The transaction's own fields, read once; a non-plain envelope is refused like an item. */
function envelope(transaction: object): Plain {
  try {
    return snapshotEnvelope(transaction);
  } catch {
    throw invalid(SDK_MESSAGES.items, { field: 'transaction' });
  }
}

function snapshotEnvelope(value: object): Plain {
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) throw new Error('not plain');
  const out: Plain = {};
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (typeof key !== 'string' || !descriptor?.enumerable || !('value' in descriptor)) {
      throw new Error('not plain');
    }
    out[key] = descriptor.value;
  }
  return out;
}

function hasExactly(record: Plain, keys: readonly string[]): boolean {
  const own = Object.keys(record);
  return own.length === keys.length && keys.every((k) => own.includes(k));
}

/** The items of one list of the transaction, each a plain copy; the first refused one is named by its index. */
function items(list: unknown[], name: string): Plain[] {
  try {
    return plainList(list, name);
  } catch (err) {
    if (err instanceof SessionHistoryError) {
      throw new SessionHistoryError('invalid_history_change', `${SDK_MESSAGES.items} ${err.message}`, {
        field: err.field === undefined ? undefined : `transaction.${err.field}`,
        index: err.index,
      });
    }
    throw err;
  }
}

/**
 * Each element of an array as a plain copy (the store kit's rule). Refused: an array that is not plain (a Proxy,
 * holes, extra properties) and an element that is not plain JSON data; the message names the index and the kind of
 * problem, never the content.
 */
function plainList(list: unknown[], name: string): Plain[] {
  const notPlain = () => invalid(`${name} must be a plain array.`, { field: name });
  let length: number;
  try {
    length = list.length;
    if (Reflect.ownKeys(list).length !== length + 1) throw notPlain();
  } catch {
    throw notPlain();
  }
  const out: Plain[] = [];
  for (let index = 0; index < length; index++) {
    const field = `${name}[${index}]`;
    try {
      out.push(snapshotItem(Reflect.getOwnPropertyDescriptor(list, index)?.value, field));
    } catch (err) {
      const reason = err instanceof InvalidInputError ? err.message : `${field}: could not be read`;
      throw invalid(`${reason}.`, { field, index });
    }
  }
  try {
    // Every element is plain: a clone can only fail on the array itself (a Proxy).
    structuredClone(list);
  } catch {
    throw notPlain();
  }
  return out;
}
