import { describe, expect, it } from 'vitest';
import * as bindingKit from '../src/binding-kit/index.js';
import {
  AbortedError,
  BudgetExceededError,
  CapabilityError,
  CaptureGrantEndedError,
  CaptureNotAuthorizedError,
  ClosedError,
  ConfigError,
  CorruptStoreError,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  DuplicateOperationError,
  ExtractionError,
  InvalidInputError,
  LeaseLostError,
  Mem01Error,
  NotFoundError,
  OperationConflictError,
  PendingWritesError,
  ProviderError,
  SchemaTooNewError,
  StoreError,
  UnsupportedRuntimeError,
  VersionConflictError,
} from '../src/errors.js';
import * as engine from '../src/index.js';
import * as providerKit from '../src/provider-kit/index.js';
import * as storeKit from '../src/store-kit/index.js';

/** One instance of every error class of the engine, built as the engine builds it. */
const INSTANCES: readonly Mem01Error[] = [
  new AbortedError(),
  new BudgetExceededError('spent'),
  new CapabilityError('mine', 'vector search'),
  new CaptureGrantEndedError('b1', 'g1', 'revoked'),
  new CaptureNotAuthorizedError({ userId: 'u1', namespace: '' }),
  new ClosedError('the engine'),
  new ConfigError('bad'),
  new CorruptStoreError('bad row'),
  new DimensionMismatchError(3, 4),
  new DuplicateActiveBeliefError('user', 'home_city'),
  new DuplicateOperationError('k'),
  new ExtractionError('no attribute'),
  new InvalidInputError('scope.userId', 'is required'),
  new LeaseLostError(),
  new NotFoundError('belief b1'),
  new OperationConflictError('k'),
  new PendingWritesError('still queued', { pending: 1, until: null }),
  new ProviderError('500', 500),
  new SchemaTooNewError('db', 9, 1),
  new StoreError('write failed'),
  new UnsupportedRuntimeError('old node', { required: 'Node.js >= 22.13', found: 'Node.js 20' }),
  new VersionConflictError('b1', 1, 2),
];

const snake = (name: string): string =>
  name
    .replace(/Error$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();

describe('error codes follow their classes', () => {
  it.each(INSTANCES.map((e) => [e.name, e] as const))('%s has the code of its name', (name, e) => {
    expect(e).toBeInstanceOf(Mem01Error);
    expect(e.code).toBe(snake(name));
  });

  it('the codes that changed: pending_writes (was timeout), store, provider, extraction, capability, duplicate_active_belief', () => {
    expect(INSTANCES.find((e) => e instanceof PendingWritesError)?.code).toBe('pending_writes');
    expect(new StoreError('x').code).toBe('store');
    expect(new ProviderError('x', null).code).toBe('provider');
    expect(new ExtractionError('x').code).toBe('extraction');
    expect(new CapabilityError('s', 'c').code).toBe('capability');
    expect(new DuplicateActiveBeliefError('s', 'a').code).toBe('duplicate_active_belief');
  });

  it('a refinement of a class keeps its code: InvalidRecordError is an invalid_input naming the record', () => {
    const e = new engine.InvalidRecordError(2, 'belief.status', 'unknown status "x"');
    expect(e).toBeInstanceOf(InvalidInputError);
    expect(e.code).toBe('invalid_input');
    expect(e.field).toBe('records[2].belief.status');
  });

  it('every error class the engine exports (root and kits) is covered above', () => {
    // A direct subclass of Mem01Error has a code of its own; a refinement of one (tested above) keeps its parent's.
    const exported = Object.entries({ ...engine, ...storeKit, ...providerKit, ...bindingKit })
      .filter(
        ([, v]) =>
          typeof v === 'function' &&
          v.prototype instanceof Mem01Error &&
          Object.getPrototypeOf(v.prototype) === Mem01Error.prototype,
      )
      .map(([name]) => name)
      .sort();
    expect(exported).toEqual(INSTANCES.map((e) => e.name).sort());
  });
});
