import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.js';
import type {
  CandidateBelief,
  ExtractionOperation,
  ExtractionTurn,
  JsonValue,
  RecallSignals,
  Usage,
} from '../src/store-kit/index.js';
import * as storeKit from '../src/store-kit/index.js';

/** The moved types resolve from store-kit (the typecheck fails otherwise). */
export type StoreKitTypes = [
  CandidateBelief,
  ExtractionOperation,
  ExtractionTurn,
  JsonValue,
  RecallSignals,
  Usage,
];

/** Every name in the root's `export { ... }` / `export type { ... }` lists, types included. */
function rootNames(): string[] {
  const source = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8').replace(
    /\/\*[\s\S]*?\*\//g,
    '',
  );
  const names: string[] = [];
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of (list ?? '').split(',')) {
      const name = item.replace(/^\s*type\s+/, '').trim();
      if (name) names.push(name);
    }
  }
  return names.sort();
}

/** Helpers for authors of stores, extractors, embedders and bindings: in `store-kit`, not the root. */
const STORE_KIT_VALUES = [
  'BELIEF_SOURCES',
  'BELIEF_STATUSES',
  'MAX_POSITION',
  'MEMORY_BLOCK_CLOSE',
  'MEMORY_BLOCK_OPEN',
  'SECRET_PATTERNS',
  'canonicalKey',
  'describeError',
  'neutralise',
  'neutralize',
  'normalizeScope',
  'resolveConfig',
  'sanitize',
  'sanitizeError',
];
const STORE_KIT_TYPES = [
  'CandidateBelief',
  'ExtractionOperation',
  'ExtractionTurn',
  'JsonValue',
  'RankingConfig',
  'RecallSignals',
  'Usage',
];

describe('the root export of @mem01/engine', () => {
  it('is the consumer API: at most 80 names', () => {
    const names = rootNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeLessThanOrEqual(80);
    expect(names).toEqual(
      [
        'AUTHORITY_POLICY',
        'AbortedError',
        'AppendTranscriptOptions',
        'AppendTranscriptResult',
        'AuditEvent',
        'BELIEF_KINDS',
        'Belief',
        'BeliefKind',
        'BeliefMetadata',
        'BeliefOrigin',
        'BeliefSource',
        'BeliefStatus',
        'BudgetExceededError',
        'BudgetUsage',
        'CapabilityError',
        'CaptureDecision',
        'CaptureGrant',
        'CaptureGrantEndedError',
        'CaptureNotAuthorizedError',
        'CapturePolicy',
        'CaptureReview',
        'ClearAllReceipt',
        'ClosedError',
        'ConfigError',
        'ContextBlock',
        'CorruptStoreError',
        'DEFAULT_CONFIG',
        'DimensionMismatchError',
        'DuplicateActiveBeliefError',
        'EXTRACTABLE_KINDS',
        'Embedder',
        'EngineBudgets',
        'EngineConfig',
        'EngineConfigInput',
        'EngineEvent',
        'EngineStats',
        'EngineStore',
        'EraseReceipt',
        'Evidence',
        'ExtractionError',
        'ExtractionRequest',
        'ExtractionResult',
        'Extractor',
        'FullStore',
        'GrantCaptureOptions',
        'InvalidInputError',
        'LeaseLostError',
        'ListOptions',
        'Logger',
        'MAX_QUERY_CHARS',
        'Mem01Error',
        'Mem01ErrorCode',
        'MemoryAdmin',
        'MemoryAdminOptions',
        'MemoryEngine',
        'MemoryEngineOptions',
        'NotFoundError',
        'OperationConflictError',
        'OutboxInput',
        'Page',
        'PendingWritesError',
        'ProviderError',
        'RecallOptions',
        'RecallTier',
        'RememberInput',
        'RememberOptions',
        'RememberTextOptions',
        'RememberTextResult',
        'SchemaTooNewError',
        'Scope',
        'ScoredBelief',
        'SelectedContext',
        'StoreError',
        'TranscriptStore',
        'TurnRole',
        'UnsupportedRuntimeError',
        'VersionConflictError',
        'VersionedOptions',
        'createBelief',
        'renderContextBlock',
      ].sort(),
    );
  });

  it('leaves the helpers of store, extractor, embedder and binding authors to store-kit', () => {
    const names = new Set(rootNames());
    for (const name of [...STORE_KIT_VALUES, ...STORE_KIT_TYPES]) expect(names.has(name), name).toBe(false);
    for (const name of STORE_KIT_VALUES) {
      expect(name in storeKit, name).toBe(true);
      expect(name in root, name).toBe(false);
    }
  });
});
