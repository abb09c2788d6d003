/**
 * Property: a single-user server never reads or changes another user's memory, whatever a client sends. Other
 * scopes (ids that break naive code: case and space variants, wildcards, quotes, unicode, the same id in another
 * namespace) hold beliefs with marker words, a summarized conversation and a queued turn; random sequences of tool
 * calls, resource reads and prompts, naming other users, other users' belief ids and their conversations' ids, run
 * against a server for `u`. No answer may contain a
 * marker, and every other scope must be exactly as it was. In-process (the SDK's linked in-memory transport
 * between a real `Client` and the real server) so that many sequences run; the stdio tests cover the bin.
 */
import { join } from 'node:path';
import { type Belief, MemoryEngine, type Scope } from '@mem01/engine';
import { createLocalEmbedder, createLocalExtractor } from '@mem01/local';
import { openSqliteStore, type SqliteStore } from '@mem01/store-sqlite';
import { quiet } from '@mem01/test-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beliefUri, profileUri } from '../src/resources.js';
import { createMemoryServer } from '../src/server.js';
import { clientSessionId } from '../src/session-ids.js';
import { tempDir } from './helpers.js';

const SERVED: Scope = { userId: 'u' };
const OTHERS: readonly Scope[] = [
  { userId: 'U' },
  { userId: 'u ' },
  { userId: ' u' },
  { userId: 'u%' },
  { userId: 'u_' },
  { userId: '%' },
  { userId: '*' },
  { userId: "u' OR '1'='1" },
  { userId: 'u\u0301' },
  { userId: 'ü' },
  { userId: '🙂' },
  { userId: 'u', namespace: 'other' },
  { userId: 'bob' },
];
const MARKER = 'zebra';

let home: ReturnType<typeof tempDir>;
let store: SqliteStore;
let engine: MemoryEngine;
let client: Client;
const otherIds: string[] = [];
const ownIds: string[] = [];

const key = (s: Scope) => JSON.stringify([s.userId, s.namespace ?? '']);
/** The stored id of a scope's conversation `chat`, as the server writes it. */
const chatOf = (s: Scope) => clientSessionId({ userId: s.userId, namespace: s.namespace ?? '' }, 'chat');

/** A conversation `chat` of `scope` (one turn, extracted), summarized. */
async function chat(scope: Scope, text: string): Promise<Belief | null> {
  await engine.accept([
    { scope, sessionId: chatOf(scope), position: 0, role: 'user', text, at: new Date().toISOString() },
  ]);
  await engine.flush(scope);
  return engine.summarize(scope, chatOf(scope));
}

async function snapshot(): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const now = new Date().toISOString();
  for (const scope of OTHERS) {
    out.set(key(scope), {
      history: await store.history(scope),
      audit: (await store.auditLog(scope, { limit: 10_000 })).length,
    });
  }
  out.set('backlog', await store.backlog({ now, userId: 'bob' }));
  return out;
}

beforeAll(async () => {
  home = tempDir();
  store = openSqliteStore({ path: join(home.path, 'memory.db'), logger: quiet });
  engine = new MemoryEngine({ store, extractor: createLocalExtractor(), embedder: createLocalEmbedder() });
  for (const [i, scope] of OTHERS.entries()) {
    const b = await engine.remember(scope, {
      kind: 'fact',
      attribute: 'secret',
      value: `${MARKER}${i}`,
      statement: `The user lives in Lisbon and the secret word is ${MARKER}${i}.`,
    });
    otherIds.push(b.id);
    // A conversation of theirs, summarized: the server for `u` must neither summarize it again nor show it.
    const summary = await chat(
      scope,
      `On the ${MARKER}${i} expedition we crossed the northern glacier with my cousin Tomas.`,
    );
    expect(summary?.statement).toContain(`${MARKER}${i}`);
  }
  await chat(SERVED, 'We walked along the river in Porto and watched the boats at sunset.');
  // A turn of another user left queued (as by a stopped process): a server for `u` must never extract it.
  await store.enqueue([
    {
      scope: { userId: 'bob' },
      sessionId: 'bob-chat',
      position: 0,
      role: 'user',
      text: `I live in Lisbon, my password is ${MARKER}-queued.`,
      at: new Date().toISOString(),
    },
  ]);
  ownIds.push(
    (
      await engine.remember(SERVED, {
        kind: 'fact',
        attribute: 'home_city',
        value: 'Porto',
        statement: 'The user lives in Porto.',
      })
    ).id,
  );
  const server = createMemoryServer({ engine, access: { mode: 'single', userId: SERVED.userId } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'isolation-property', version: '1.0.0' });
  await client.connect(clientSide);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await engine?.close();
  await store?.close();
  home.remove();
});

const userArb = fc.option(fc.constantFrom(SERVED.userId, ...OTHERS.map((s) => s.userId)), { nil: undefined });
// Belief ids exist only once beforeAll ran: the arbitrary names them, and `realId` looks them up.
const idArb = fc.oneof(
  fc.nat({ max: OTHERS.length - 1 }).map((i) => `@other:${i}`),
  fc.constant('@own'),
  fc.string({ minLength: 1, maxLength: 40 }),
);
const textArb = fc.oneof(
  fc.constantFrom(
    'I live in Lisbon.',
    'Where do I live?',
    'secret word',
    'My favorite color is teal.',
    'Lisbon secret word',
    '',
  ),
  fc.string({ maxLength: 60 }),
);
const versionArb = fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined });
// Conversations: the client's id of everyone's `chat`, their stored ids (the served user's and every other's), and any.
const sessionArb = fc.oneof(
  fc.constantFrom('chat', 'bob-chat', chatOf(SERVED), ...OTHERS.map(chatOf)),
  fc.string({ minLength: 1, maxLength: 40 }),
);
const kindsArb = fc.option(fc.subarray(['summary', 'episode', 'fact'] as const, { minLength: 1 }), {
  nil: undefined,
});

type Op =
  | { kind: 'tool'; name: string; args: Record<string, unknown> }
  | { kind: 'profile'; userId: string }
  | { kind: 'belief'; userId: string; id: string }
  | { kind: 'prompt'; question: string; userId: string | undefined };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({ text: textArb, userId: userArb, wait: fc.boolean() })
    .map(
      (a): Op => ({ kind: 'tool', name: 'add_memory', args: { ...a, text: a.text || 'I live in Faro.' } }),
    ),
  fc
    .record({ query: textArb, userId: userArb, explain: fc.boolean() })
    .map((a): Op => ({ kind: 'tool', name: 'search_memory', args: a })),
  fc
    .record({
      status: fc.constantFrom('active', 'all', 'superseded', 'forgotten'),
      kinds: kindsArb,
      sessionId: fc.option(sessionArb, { nil: undefined }),
      userId: userArb,
    })
    .map((a): Op => ({ kind: 'tool', name: 'list_memories', args: a })),
  fc
    .record({ sessionId: sessionArb, userId: userArb })
    .map((a): Op => ({ kind: 'tool', name: 'summarize_conversation', args: a })),
  fc
    .record({ id: idArb, userId: userArb })
    .map((a): Op => ({ kind: 'tool', name: 'memory_history', args: a })),
  fc.record({ id: idArb, text: textArb, expectedVersion: versionArb, userId: userArb }).map(
    (a): Op => ({
      kind: 'tool',
      name: 'update_memory',
      args: { ...a, text: a.text || 'The user lives in Faro.' },
    }),
  ),
  fc
    .record({ id: idArb, expectedVersion: versionArb, userId: userArb })
    .map((a): Op => ({ kind: 'tool', name: 'delete_memory', args: a })),
  fc
    .record({ userId: fc.constantFrom(SERVED.userId, ...OTHERS.map((s) => s.userId)) })
    .map((a): Op => ({ kind: 'profile', ...a })),
  fc
    .record({ userId: fc.constantFrom(SERVED.userId, ...OTHERS.map((s) => s.userId)), id: idArb })
    .map((a): Op => ({ kind: 'belief', ...a })),
  fc
    .record({ question: fc.constantFrom('Where do I live?', 'secret word'), userId: userArb })
    .map((a): Op => ({ kind: 'prompt', ...a })),
);

function realId(id: unknown): unknown {
  if (typeof id !== 'string') return id;
  const other = /^@other:(\d+)$/.exec(id);
  if (other) return otherIds[Number(other[1])] ?? id;
  return id === '@own' ? ownIds[0] : id;
}

async function run(op: Op): Promise<string> {
  try {
    if (op.kind === 'tool') {
      const args: Record<string, unknown> = {
        ...op.args,
        ...('id' in op.args ? { id: realId(op.args.id) } : {}),
      };
      for (const k of Object.keys(args)) if (args[k] === undefined) delete args[k];
      return JSON.stringify(await client.callTool({ name: op.name, arguments: args }));
    }
    if (op.kind === 'profile')
      return JSON.stringify(await client.readResource({ uri: profileUri(op.userId) }));
    if (op.kind === 'belief') {
      const uri = beliefUri(op.userId, String(realId(op.id)));
      return JSON.stringify(await client.readResource({ uri }));
    }
    return JSON.stringify(
      await client.getPrompt({
        name: 'with-memory',
        arguments: { question: op.question, ...(op.userId === undefined ? {} : { userId: op.userId }) },
      }),
    );
  } catch (err) {
    // Protocol errors (resources, prompts) are answers too: they must not leak either.
    return err instanceof Error ? err.message : String(err);
  }
}

describe('isolation of a single-user server', () => {
  it('property: no call reads or changes another user’s memory', { timeout: 300_000 }, async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 6 }), async (ops) => {
        for (const op of ops) {
          const answer = await run(op);
          expect(answer, JSON.stringify(op)).not.toContain(MARKER);
        }
      }),
      { numRuns: 40 },
    );
    const after = await snapshot();
    expect(after).toEqual(before);
    // The served user's memory did work meanwhile (the property did not pass by refusing everything). `remember`
    // returns once the turn is durable; its extraction runs in the background, so the harness waits for it.
    await engine.flush(SERVED);
    const own: Belief[] = await store.history(SERVED);
    expect(own.length).toBeGreaterThan(1);
    const bob = await store.backlog({ now: new Date().toISOString(), userId: 'bob' });
    expect(bob.queued).toBe(1);
  });
});
