/**
 * Resources and the prompt. Resources are addressed by user id, and every read resolves its scope through the
 * server's user policy: a single-user server answers only for its own user. Failures are protocol errors
 * (`InvalidParams`), as the MCP specification has it for resources and prompts.
 */
import { AUTHORITY_POLICY, Mem01Error, type Scope } from '@mem01/engine';
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Variables } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { beliefView, oneLine } from './format.js';
import type { ServerContext } from './server-context.js';
import { MAX_QUERY_CHARS } from './tools.js';

/** `mem01://users/{userId}/profile`, for a user id. */
export function profileUri(userId: string): string {
  return `mem01://users/${encodeURIComponent(userId)}/profile`;
}

/** `mem01://users/{userId}/usage`, for a user id. */
export function usageUri(userId: string): string {
  return `mem01://users/${encodeURIComponent(userId)}/usage`;
}

/** `mem01://users/{userId}/beliefs/{id}`, for a user id and a belief id. */
export function beliefUri(userId: string, id: string): string {
  return `mem01://users/${encodeURIComponent(userId)}/beliefs/${encodeURIComponent(id)}`;
}

function decode(value: string | string[] | undefined, what: string): string {
  const raw = Array.isArray(value) ? value.join(',') : value;
  if (raw === undefined) throw new McpError(ErrorCode.InvalidParams, `missing ${what}`);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${what} is not valid percent-encoding`);
  }
}

/** Runs `fn`; a mem01 error becomes an `InvalidParams` protocol error with its code, anything else is logged. */
async function guarded<T>(ctx: ServerContext, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof McpError) throw err;
    if (err instanceof Mem01Error)
      throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${oneLine(err.message)}`);
    ctx.log(`mem01-mcp: ${err instanceof Error ? err.name : 'error'} while reading a resource`);
    throw new McpError(ErrorCode.InternalError, 'the memory server failed on this request');
  }
}

/**
 * The read callback of a resource of one user (`{userId}` in its template): `read` gives the text for that user's
 * scope, returned as the resource's one content of `mimeType`; errors as {@link guarded} maps them.
 */
function readForUser(
  ctx: ServerContext,
  mimeType: string,
  read: (scope: Scope, variables: Variables) => Promise<string>,
) {
  return (uri: URL, variables: Variables) =>
    guarded(ctx, async () => {
      const text = await read(ctx.scope(decode(variables.userId, 'userId')), variables);
      return { contents: [{ uri: uri.href, mimeType, text }] };
    });
}

/** Registers the profile, usage and belief resources and the `with-memory` prompt. */
export function registerResources(server: McpServer, ctx: ServerContext): void {
  const { engine, access } = ctx;
  // Listing names only the served user (single-user): other ids are never enumerated.
  const listed = () => (access.mode === 'single' && access.defaultUserId ? [access.defaultUserId] : []);

  server.registerResource(
    'profile',
    new ResourceTemplate('mem01://users/{userId}/profile', {
      list: async () => ({
        resources: listed().map((u) => ({
          uri: profileUri(u),
          name: 'profile',
          title: 'What mem01 remembers about the user',
          mimeType: 'text/plain',
        })),
      }),
    }),
    {
      title: 'User profile',
      description:
        "The user's newest active beliefs, rendered as the bounded block of untrusted data an agent is given.",
      mimeType: 'text/plain',
    },
    readForUser(ctx, 'text/plain', async (scope) => (await engine.context(scope, '')).text),
  );

  server.registerResource(
    'usage',
    new ResourceTemplate('mem01://users/{userId}/usage', {
      list: async () => ({
        resources: listed().map((u) => ({
          uri: usageUri(u),
          name: 'usage',
          title: 'What the user used of each memory budget',
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      title: 'Budget usage',
      description:
        "The user's counts in the current budget window (extractor and embedder calls and tokens, active beliefs), each with the server's limit (null: none), and the window's start and end, as JSON.",
      mimeType: 'application/json',
    },
    readForUser(ctx, 'application/json', async (scope) => JSON.stringify(await engine.usage(scope), null, 2)),
  );

  server.registerResource(
    'belief',
    new ResourceTemplate('mem01://users/{userId}/beliefs/{id}', { list: undefined }),
    {
      title: 'Belief',
      description:
        'One belief as JSON (text fields neutralized), in any status but forgotten (a forgotten one is not found).',
      mimeType: 'application/json',
    },
    readForUser(ctx, 'application/json', async (scope, variables) => {
      const id = decode(variables.id, 'id');
      const belief = await engine.get(scope, id);
      if (!belief) throw new McpError(ErrorCode.InvalidParams, `not_found: belief ${id} not found`);
      return JSON.stringify(beliefView(belief), null, 2);
    }),
  );

  server.registerPrompt(
    'with-memory',
    {
      title: 'Ask with memory',
      description:
        'A question with what mem01 recalls for it placed before it, as one block of untrusted data, with the policy for using it.',
      argsSchema: {
        question: z.string().min(1).max(MAX_QUERY_CHARS).describe('The question to ask'),
        userId: z
          .string()
          .min(1)
          .max(256)
          .optional()
          .describe(access.mode === 'single' ? 'Leave out: this server serves one user' : 'The user'),
      },
    },
    async (args) =>
      guarded(ctx, async () => {
        const scope = ctx.scope(args.userId);
        const block = await engine.context(scope, args.question);
        return {
          description: 'The question, with recalled memory before it',
          messages: [
            {
              role: 'user' as const,
              content: {
                type: 'text' as const,
                text: `${AUTHORITY_POLICY}\n\n${block.text}\n\n${args.question}`,
              },
            },
          ],
        };
      }),
  );
}
