/**
 * Memory tools for agents: add, search, list, update and delete the user's beliefs. Every failure comes back
 * to the model as a short string; nothing is thrown into the run.
 */
import { BELIEF_KINDS, type Belief, EXTRACTABLE_KINDS } from '@mem01/engine';
import { canonicalKey, describeError, neutralize, normalizeScope } from '@mem01/engine/binding-kit';
import type { FunctionTool } from '@openai/agents';
import { requireAgentsSdk } from './agents-sdk.js';
import { helperRuntime, type MemoryHelperOptions, reportError } from './helpers.js';

/** Options of {@link createMemoryTools}. */
export interface MemoryToolsOptions extends MemoryHelperOptions {
  /** Only the search tools (`search_memory`, `search_memories`) and `list_memories`. Default false. */
  readonly readOnly?: boolean | undefined;
}

const KINDS = EXTRACTABLE_KINDS;

/**
 * One note a line: its id, `[kind]` (`, unconfirmed` while pending) and statement. A conversation summary also names
 * the day its conversation began (`[summary, conversation 2026-05-01]`), as the block dates it.
 */
function line(b: Belief): string {
  const label =
    b.kind === 'summary'
      ? `summary, conversation ${(b.validFrom ?? b.storedAt).slice(0, 10)}`
      : `${b.kind}${b.status === 'pending' ? ', unconfirmed' : ''}`;
  return `${b.id} [${label}] ${neutralize(b.statement)}`;
}

async function safely(options: MemoryToolsOptions, fn: () => Promise<string>): Promise<string> {
  try {
    return await fn();
  } catch (err) {
    reportError(options, err);
    return `memory error: ${describeError(err).slice(0, 200)}`;
  }
}

/**
 * Tools over one user's memory (`userId` + `namespace`, or `session`'s): `add_memory`, `search_memory` (the name
 * the specification uses), `search_memories` (its deprecated earlier name), `list_memories`, `update_memory` and
 * `delete_memory`: the names of the MCP server's tools too. With `readOnly`, only the searches and the list.
 *
 * Asynchronous because the tools are built with the Agents SDK's `tool()`, loaded here on first use: the package
 * itself loads without the SDK. Without `@openai/agents` (or zod) installed it rejects with
 * `AgentsSdkMissingError` (`code: 'agents_sdk_missing'`).
 *
 * @example
 * const agent = new Agent({ name: 'a', tools: await createMemoryTools({ userId: 'u1', readOnly: true }) });
 */
export async function createMemoryTools(
  options: MemoryToolsOptions,
  // biome-ignore lint/suspicious/noExplicitAny: tools of different parameter types in one list
): Promise<FunctionTool<any, any, any>[]> {
  // Fail fast on a bad scope, at creation rather than inside a run.
  if (!options?.session) normalizeScope({ userId: options?.userId, namespace: options?.namespace });
  const {
    sdk: { tool },
    z,
  } = await requireAgentsSdk('createMemoryTools');
  const searchTool = (name: string, description: string) =>
    tool({
      name,
      description,
      parameters: z.object({
        query: z.string().describe('What to look for, in plain words'),
        limit: z.number().int().min(1).max(50).nullable().describe('Most notes to return (default 6)'),
        // Nullable and optional: the schema sent to the model requires it (strict mode), and calls written before it
        // existed (without the field) still parse.
        minScore: z
          .number()
          .min(0)
          .max(1)
          .nullable()
          .optional()
          .describe('Only notes scoring at least this, from 0 to 1 (default 0: every relevant note)'),
      }),
      execute: ({ query, limit, minScore }) =>
        safely(options, async () => {
          const { runtime, scope } = await helperRuntime(options);
          const hits = await runtime.engine.recall(scope, query, {
            // Omitted: the engine's `recallLimit`, as everywhere else.
            limit: limit ?? undefined,
            minScore: minScore ?? undefined,
          });
          return hits.length === 0 ? 'no matching memories' : hits.map((h) => line(h.belief)).join('\n');
        }),
    });
  const search = searchTool(
    'search_memory',
    "Search the user's long-term memory for notes relevant to a query. Returns one note per line.",
  );
  // The earlier name, kept so agents and prompts written against it keep working; described as the MCP server
  // describes its deprecated names.
  const searchOld = searchTool(
    'search_memories',
    'Deprecated: the earlier name of search_memory, with the same input and output. Call search_memory.',
  );
  const list = tool({
    name: 'list_memories',
    description:
      "List the user's newest remembered notes (beliefs, what the user said, conversation summaries). Returns one note per line with its id and kind.",
    parameters: z.object({
      limit: z.number().int().min(1).max(100).nullable().describe('Most notes to return (default 20)'),
    }),
    execute: ({ limit }) =>
      safely(options, async () => {
        const { runtime, scope } = await helperRuntime(options);
        const page = await runtime.engine.list(scope, {
          statuses: ['active', 'pending'],
          kinds: BELIEF_KINDS.filter((k) => k !== 'reply'),
          limit: limit ?? 20,
        });
        return page.items.length === 0 ? 'no memories' : page.items.map(line).join('\n');
      }),
  });
  if (options?.readOnly) return [search, searchOld, list];
  const add = tool({
    name: 'add_memory',
    description:
      'Remember a durable fact about the user that they stated. A new value for the same attribute replaces the old one.',
    parameters: z.object({
      kind: z.enum(KINDS).describe('What sort of note this is'),
      attribute: z
        .string()
        .min(1)
        .max(100)
        .describe('Short snake_case key the note is about, e.g. home_city'),
      value: z.string().min(1).max(2000).describe('The value, e.g. San Francisco'),
      statement: z
        .string()
        .min(1)
        .max(2000)
        .describe('One sentence, e.g. "The user lives in San Francisco."'),
    }),
    execute: ({ kind, attribute, value, statement }) =>
      safely(options, async () => {
        const { runtime, scope } = await helperRuntime(options);
        const b = await runtime.engine.remember(scope, {
          kind: kind as Belief['kind'],
          attribute: canonicalKey(attribute),
          value,
          statement,
          source: 'tool',
        });
        return `remembered ${b.id}`;
      }),
  });
  const update = tool({
    name: 'update_memory',
    description: 'Correct a remembered note by id (from search or list) with the new text.',
    parameters: z.object({
      id: z.string().min(1).max(100),
      text: z.string().min(1).max(2000).describe('The corrected note'),
    }),
    execute: ({ id, text }) =>
      safely(options, async () => {
        const { runtime, scope } = await helperRuntime(options);
        const b = await runtime.engine.correct(scope, id, text);
        return `updated: ${id} is replaced by ${b.id}`;
      }),
  });
  const del = tool({
    name: 'delete_memory',
    description: 'Forget a remembered note by id (from search or list). Its content is erased.',
    parameters: z.object({ id: z.string().min(1).max(100) }),
    execute: ({ id }) =>
      safely(options, async () => {
        const { runtime, scope } = await helperRuntime(options);
        await runtime.engine.forget(scope, id);
        return `forgotten ${id}`;
      }),
  });
  return [add, search, searchOld, list, update, del];
}
