/**
 * The published surface of `@mem01/engine`: the root (the API) and one kit per audience. Every name is pinned, so a
 * new export is a conscious change here; the distinct names across all four stay at most 150.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as bindingKit from '../src/binding-kit/index.js';
import * as root from '../src/index.js';
import * as providerKit from '../src/provider-kit/index.js';
import * as storeKit from '../src/store-kit/index.js';

/** Every name in an entry's `export { ... }` / `export type { ... }` lists, types included. */
function exportedNames(entry: string): string[] {
  const source = readFileSync(new URL(`../src/${entry}`, import.meta.url), 'utf8').replace(
    /\/\*[\s\S]*?\*\//g,
    '',
  );
  expect(source, `${entry} re-exports a whole module`).not.toMatch(/export\s+(type\s+)?\*/);
  const names: string[] = [];
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of (list ?? '').split(',')) {
      const name = item.replace(/^\s*type\s+/, '').trim();
      if (name) names.push(name);
    }
  }
  return names.sort();
}

const SURFACE = {
  /** The API: the engine and its admin facade, the belief model, configuration, the block, errors, the ports. */
  'index.ts': {
    module: root,
    names: [
      'AUTHORITY_POLICY',
      'AbortedError',
      'AuditEvent',
      'BELIEF_KINDS',
      'Belief',
      'BeliefKind',
      'BeliefSource',
      'BeliefStatus',
      'BudgetExceededError',
      'BudgetUsage',
      'CapabilityError',
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
      'DuplicateOperationError',
      'EXTRACTABLE_KINDS',
      'Embedder',
      'EngineBudgets',
      'EngineConfig',
      'EngineConfigInput',
      'EngineEvent',
      'EngineStore',
      'EraseReceipt',
      'Evidence',
      'ExtractionError',
      'ExtractionRequest',
      'ExtractionResult',
      'Extractor',
      'FullStore',
      'InvalidInputError',
      'InvalidRecordError',
      'LeaseLostError',
      'Logger',
      'MAX_QUERY_CHARS',
      'Mem01Error',
      'MemoryAdmin',
      'MemoryEngine',
      'MemoryEngineOptions',
      'NotFoundError',
      'OperationConflictError',
      'OutboxInput',
      'PendingWritesError',
      'ProviderError',
      'RecallOptions',
      'RecallTier',
      'SchemaTooNewError',
      'Scope',
      'ScoredBelief',
      'SelectedContext',
      'StoreError',
      'Summarizer',
      'SummaryRequest',
      'SummaryResult',
      'TranscriptStore',
      'TurnRole',
      'UnsupportedRuntimeError',
      'VersionConflictError',
      'createBelief',
      'renderContextBlock',
    ],
  },
  /** Store authors: storeClass and its checks table, codecs, transcript and forget rules, liveness of claims. */
  'store-kit/index.ts': {
    module: storeKit,
    names: [
      'BeliefInsert',
      'BeliefPatch',
      'Checked',
      'FORGOTTEN_MARKER',
      'ForgetCandidates',
      'ForgetPlan',
      'MAX_POSITION',
      'NOTHING_ERASED',
      'OperationRecord',
      'OutboxEntry',
      'ProcessIdentity',
      'RoleMethod',
      'Row',
      'ScopeSummary',
      'StoreCapabilities',
      'StoreInfo',
      'StoreMethod',
      'appendTurns',
      'applyCharges',
      'assertId',
      'assertPositiveInteger',
      'assertSessionOwner',
      'auditRow',
      'beliefRow',
      'bytesToVector',
      'claimBatch',
      'claimFromRows',
      'contentStems',
      'cosineSimilarity',
      'decodeItem',
      'describeError',
      'eraseEach',
      'grantFromRow',
      'grantOrder',
      'grantValidAt',
      'historyOrder',
      'hitOrder',
      'idempotencyKey',
      'isoNow',
      'listPage',
      'mayContainNeedle',
      'mayUseSession',
      'newId',
      'normalizeScope',
      'normalizeVector',
      'operationConflictError',
      'operationFromRow',
      'outboxEntryFromRow',
      'planForget',
      'planForgetAsync',
      'processIdentity',
      'redactTranscriptItem',
      'sanitize',
      'scopeSummaries',
      'storeClass',
      'suffixMatches',
      'suffixMismatchError',
      'tombstoneOf',
      'vectorToBytes',
    ],
  },
  /** Extractor and embedder authors: extraction records, usage, canonical keys and values, quote grounding, hashes. */
  'provider-kit/index.ts': {
    module: providerKit,
    names: [
      'CandidateBelief',
      'ExtractionOperation',
      'ExtractionTurn',
      'Usage',
      'canonicalKey',
      'canonicalValue',
      'contentHash',
      'cosineSimilarity',
      'groundQuote',
      'normalizeScope',
      'sanitize',
      'stableJson',
    ],
  },
  /** Bindings (session, MCP, CLI, runtime): config, the block's delimiters, error text, input checks, items, import. */
  'binding-kit/index.ts': {
    module: bindingKit,
    names: [
      'AppendEnqueue',
      'BELIEF_STATUSES',
      'BeliefInsert',
      'FORGOTTEN_MARKER',
      'MAX_LIST_LIMIT',
      'MAX_POSITION',
      'MEMORY_BLOCK_CLOSE',
      'MEMORY_BLOCK_OPEN',
      'ScopeSummary',
      'assertId',
      'assertText',
      'bytesToVector',
      'canonicalKey',
      'describeError',
      'neutralize',
      'normalizeScope',
      'operationConflictError',
      'resolveConfig',
      'sanitize',
      'sanitizeError',
      'snapshotItem',
      'stableJson',
      'suffixMismatchError',
      'validateImportRecords',
      'vectorToBytes',
    ],
  },
} as const;

describe('the surface of @mem01/engine', () => {
  it.each(Object.entries(SURFACE))('%s exports exactly its pinned names', (entry, { module, names }) => {
    const exported = exportedNames(entry);
    expect(new Set(exported).size, 'a name exported twice').toBe(exported.length);
    expect(exported).toEqual([...names].sort());
    // Every value the module really has is one of the names (types leave no runtime trace).
    for (const value of Object.keys(module)) expect(names, value).toContain(value);
  });

  it('counts at most 150 distinct names across the root and every kit', () => {
    const all = new Set(Object.values(SURFACE).flatMap((e) => e.names));
    expect(all.size).toBeLessThanOrEqual(150);
  });

  it('leaves to the root what the root exports: no kit repeats a name of the API', () => {
    const api = new Set<string>(SURFACE['index.ts'].names);
    for (const [entry, { names }] of Object.entries(SURFACE)) {
      if (entry === 'index.ts') continue;
      for (const name of names) expect(api.has(name), `${entry}: ${name}`).toBe(false);
    }
  });

  it('has one subpath per kit in package.json, each built from the file pinned here', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { 'mem01-source': string }>;
    };
    for (const entry of Object.keys(SURFACE)) {
      const subpath = entry === 'index.ts' ? '.' : `./${entry.replace('/index.ts', '')}`;
      expect(pkg.exports[subpath]?.['mem01-source'], subpath).toBe(`./src/${entry}`);
    }
  });
});
