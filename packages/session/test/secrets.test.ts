/**
 * Secrets in every form stay out of everything a memSession user sees: an extractor, an embedder and a store throw
 * errors carrying a credential (in the message and the cause) while the real `Runner` runs an offline model, in strict
 * and failure-open modes. Checked: the error the run or a memory call throws (message, stack, cause chain,
 * util.inspect), `lastMemoryError`, the `onError` payloads and the logger's lines.
 */
import { inspect } from 'node:util';
import type { Embedder, EngineStore, Extractor, FullStore } from '@mem01/engine';
import { CREDENTIAL_FORMS, leakedSecret, WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { failingExtractor, failingMethod, failureCase, failureOf } from '@mem01/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memSession } from '../src/index.js';
import { agentWith, echoModel, RecordingExtractor, runner } from './harness.js';

function shown(err: unknown): string {
  const parts = [inspect(err, { depth: 20 })];
  for (let e: unknown = err, i = 0; e instanceof Error && i < 10; e = e.cause, i++) {
    parts.push(e.message, String(e.stack));
  }
  return parts.join('\n');
}

type Source = 'extractor' | 'embedder' | 'store';

function parts(source: Source, failure: () => Error) {
  const words = new WordHashEmbedder();
  const extractor: Extractor = source === 'extractor' ? failingExtractor(failure) : new RecordingExtractor();
  const embedder: Embedder = source === 'embedder' ? failingMethod(words, 'embed', failure) : words;
  const plain = createMemoryStore();
  const store: FullStore | EngineStore =
    source === 'store' ? failingMethod(plain, 'searchLexical', failure) : plain;
  return { extractor, embedder, store };
}

describe('memSession leaks no secret, in any form', () => {
  for (const source of ['extractor', 'embedder', 'store'] as const) {
    for (const strict of [true, false]) {
      it(`${source} failing, ${strict ? 'strict' : 'failure-open'}: every form`, async () => {
        for (const form of CREDENTIAL_FORMS) {
          // Two cases per form: the masking itself is property-tested in the engine's package.
          for (const c of fc.sample(failureCase(form), 2)) {
            const logs: string[] = [];
            const reported: Error[] = [];
            const session = memSession(`leak-${form.id}`, {
              userId: 'u1',
              ...parts(source, () => failureOf(c)),
              strict,
              engine: { maxAttempts: 1 },
              logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
              onError: (e) => reported.push(e),
            });
            const outputs: string[] = [];
            const run = () =>
              runner()
                .run(agentWith(echoModel()), 'home_city=Lisbon', { session, ...session.runConfig() })
                .catch((err: unknown) => outputs.push(shown(err)));
            await run();
            await session.flushMemory().catch((err: unknown) => outputs.push(shown(err)));
            await run();
            outputs.push(String(session.lastMemoryError), ...logs, ...reported.map((e) => shown(e)));
            await session.close();
            const all = outputs.join('\n');
            expect(leakedSecret(all, c.parts), `${form.id}: ${all}`).toBeNull();
            // The failure was reported, masked, not swallowed.
            expect(all, form.id).toMatch(/upstream failed/);
          }
        }
      });
    }
  }
});
