/**
 * Secrets in every form stay out of every output of a real engine run: an extractor and an embedder throw errors
 * carrying a credential (in the message and in the cause), in strict and in failure-open mode, on the real
 * in-process store. What a caller sees is checked: the thrown error (message, stack, cause chain, util.inspect),
 * `lastError`, the events and the logger's lines. Store failures are in the conformance suite (every store runs it).
 */
import { inspect } from 'node:util';
import { failingExtractor, failingMethod, failureCase, failureOf } from '@mem01/test-kit';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryEngine } from '../src/engine.js';
import type { FullStore } from '../src/ports.js';
import type { Embedder, Extractor } from '../src/provider-ports.js';
import { CREDENTIAL_FORMS, KeyValueExtractor, leakedSecret, WordHashEmbedder } from '../src/testing/index.js';

let createMemoryStore: () => FullStore;
beforeAll(async () => {
  // The real in-process store, from its source (a declared dependency would be a cycle in the package graph).
  const path = '../../store-memory/src/index.js';
  ({ createMemoryStore } = (await import(/* @vite-ignore */ path)) as { createMemoryStore: () => FullStore });
});

const AT = '2026-01-01T00:00:00.000Z';

/** Everything a thrown value shows: message, stack and util.inspect (which walks the cause chain). */
function shown(err: unknown): string {
  const parts = [inspect(err, { depth: 20 })];
  for (let e: unknown = err, i = 0; e instanceof Error && i < 10; e = e.cause, i++) {
    parts.push(e.message, String(e.stack));
  }
  return parts.join('\n');
}

/** An engine whose extractor or embedder throws `failure`, recording log lines and events. */
function failingEngine(source: 'extractor' | 'embedder', failure: () => Error, strict: boolean) {
  const logs: string[] = [];
  const events: string[] = [];
  const words = new WordHashEmbedder(16);
  const extractor: Extractor =
    source === 'extractor' ? failingExtractor(failure, 'failing-extractor') : new KeyValueExtractor();
  const embedder: Embedder = source === 'embedder' ? failingMethod(words, 'embed', failure) : words;
  const engine = new MemoryEngine({
    store: createMemoryStore(),
    extractor,
    embedder,
    config: { strict, maxAttempts: 1 },
    logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
  });
  engine.on((event) => events.push(JSON.stringify(event)));
  return { engine, logs, events };
}

const scope = { userId: 'u1' };
const turn = { scope, sessionId: 's1', position: 0, role: 'user' as const, text: 'city=Lisbon', at: AT };

describe('a failing extractor or embedder leaks no secret, in any form', () => {
  for (const source of ['extractor', 'embedder'] as const) {
    for (const strict of [true, false]) {
      const mode = strict ? 'strict' : 'failure-open';
      for (const form of CREDENTIAL_FORMS) {
        it(`${source}, ${mode}: ${form.id}`, async () => {
          await fc.assert(
            fc.asyncProperty(failureCase(form), async (c) => {
              const { engine, logs, events } = failingEngine(source, () => failureOf(c), strict);
              const outputs: string[] = [];
              await engine.accept([turn]);
              // The read after the write: strict raises the extraction failure, failure-open answers and records it.
              const read = await engine.recall(scope, 'city').then(
                () => null,
                (err: unknown) => err,
              );
              if (strict && source === 'extractor') expect(read).toBeInstanceOf(Error);
              if (read !== null) outputs.push(shown(read));
              if (!strict) expect(read).toBeNull();
              // The query embedding fails too (recall falls back to words, with a warning).
              await engine.recall(scope, 'where do I live').catch((err: unknown) => outputs.push(shown(err)));
              await engine.flush(scope).catch((err: unknown) => outputs.push(shown(err)));
              const lastError = engine.lastError(scope);
              expect(lastError).not.toBeNull();
              outputs.push(String(lastError), ...logs, ...events);
              await engine.close();
              const all = outputs.join('\n');
              expect(leakedSecret(all, c.parts), all).toBeNull();
              expect(all).toContain('upstream failed');
            }),
            { numRuns: 3 },
          );
        });
      }
    }
  }
});
