import type { FullStore } from '@mem01/engine';
import { afterEach, describe, it } from 'vitest';
import { eraseTests, importTests } from './areas/admin.js';
import { commitTests } from './areas/commit.js';
import { concurrencyTests } from './areas/concurrency.js';
import { governanceTests } from './areas/governance.js';
import { governedEngineTests } from './areas/governed-engine.js';
import { grantBindingTests, grantEngineTests } from './areas/grants.js';
import { isolationTests } from './areas/isolation.js';
import { forgetTests, historyTests } from './areas/lifecycle.js';
import { outboxTests } from './areas/outbox.js';
import { parityTests } from './areas/parity.js';
import { pipelineTests } from './areas/pipeline.js';
import { readTests } from './areas/reads.js';
import { lexicalTests, vectorTests } from './areas/search.js';
import { summaryTests } from './areas/summaries.js';
import { transcriptTests } from './areas/transcript.js';
import { type ConformanceHarness, type ConformanceOptions, DIMS, type SuiteContext } from './context.js';

/** The areas of the suite, in order; each name can be passed in `options.skip`. */
const AREAS: readonly [string, (ctx: SuiteContext) => void][] = [
  ['BeliefStore.commit', commitTests],
  ['BeliefStore reads: get, getActiveByKeys, list', readTests],
  ['BeliefStore.searchLexical', lexicalTests],
  ['BeliefStore.searchVector', vectorTests],
  ['lexical parity across stores', parityTests],
  ['BeliefStore.history', historyTests],
  ['BeliefStore.forget', forgetTests],
  ['BeliefStore.importBeliefs', importTests],
  ['BeliefStore admin: eraseUser, eraseScope, listScopes, auditLog, info', eraseTests],
  ['governance: operation keys, grants, budgets, access counts, metadata, clearAll', governanceTests],
  ['WriteOutbox', outboxTests],
  ['TranscriptStore', transcriptTests],
  ['concurrent writers', concurrencyTests],
  ['scope isolation and bad input', isolationTests],
  ['MemoryEngine pipeline on this store', pipelineTests],
  ['conversation summaries on this store', summaryTests],
  ['MemoryEngine governed writes on this store', governedEngineTests],
  ['capture grants bound to their captures: store ports', grantBindingTests],
  ['capture grants bound to their captures: the engine on this store', grantEngineTests],
];

/**
 * Registers the mem01 store conformance suite (vitest `describe`/`it`) for one store. Call it once, at the top
 * level of the store's test file:
 *
 * ```ts
 * runStoreConformance('memory', { open: async ({ dimensions }) => createMemoryStore({ dimensions }) });
 * ```
 *
 * Every test opens its own store(s) through the harness, and closes them (then calls `cleanup`) afterwards.
 */
export function runStoreConformance(
  name: string,
  harness: ConformanceHarness,
  options: ConformanceOptions = {},
): void {
  const skip = new Set(options.skip ?? []);
  describe(`${name} store conformance`, () => {
    let opened: FullStore[] = [];
    let hasPrimary = false;

    afterEach(async () => {
      const stores = opened.reverse();
      opened = [];
      hasPrimary = false;
      for (const store of stores) await store.close();
      await harness.cleanup?.();
    });

    const ctx: SuiteContext = {
      async open(dimensions = DIMS) {
        const store = await harness.open({ dimensions });
        opened.push(store);
        hasPrimary = true;
        return store;
      },
      async second() {
        if (!harness.openSecond) return null;
        if (!hasPrimary) throw new Error('conformance suite bug: second() before open()');
        const store = await harness.openSecond();
        opened.push(store);
        return store;
      },
      async openAs(owner) {
        if (!harness.openAs) return null;
        if (!hasPrimary) throw new Error('conformance suite bug: openAs() before open()');
        const store = await harness.openAs(owner);
        opened.push(store);
        return store;
      },
      writeUnownedSession: harness.writeUnownedSession
        ? (sessionId, items) => {
            if (!hasPrimary) throw new Error('conformance suite bug: writeUnownedSession() before open()');
            return harness.writeUnownedSession!(sessionId, items);
          }
        : null,
      test(title, fn) {
        (skip.has(title) ? it.skip : it)(title, (context) => fn({ skip: (note) => context.skip(note) }));
      },
    };

    for (const [area, register] of AREAS) {
      (skip.has(area) ? describe.skip : describe)(area, () => register(ctx));
    }
  });
}

/** Names of the suite's areas (for `options.skip`). */
export const CONFORMANCE_AREAS: readonly string[] = AREAS.map(([area]) => area);
