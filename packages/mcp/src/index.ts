/**
 * `@mem01/mcp`: mem01's long-term memory as a Model Context Protocol server, over stdio or Streamable HTTP.
 * The `mem01-mcp` bin runs it; {@link createMemoryServer} and {@link startHttpServer} embed it.
 *
 * @packageDocumentation
 */
import type { HttpServer, HttpServerOptions } from './http-server.js';

export { DEFAULT_MAX_BODY_BYTES } from './http-limits.js';
export type { HttpServer, HttpServerOptions } from './http-server.js';
export { parseTokenSpecs, type TokenGrant } from './http-tokens.js';

/**
 * Starts the Streamable HTTP server at `/mcp`. Its HTTP stack (the SDK's Streamable HTTP transport) is loaded on the
 * first call rather than when `@mem01/mcp` is imported, so stdio servers and embedders that never serve HTTP start
 * without it.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const http = await import('./http-server.js');
  return http.startHttpServer(options);
}
export { DEFAULT_HTTP_PORT, type ProgramIo, run } from './program.js';
export {
  type McpRuntime,
  type McpRuntimeDescription,
  type McpRuntimeOptions,
  openMcpRuntime,
} from './runtime.js';
export { createMemoryServer, MCP_SERVER_VERSION, type MemoryServerOptions } from './server.js';
export { MAX_QUERY_CHARS, MAX_TEXT_CHARS } from './tools.js';
export { type ServedScope, UserAccess, type UserAccessOptions } from './user-access.js';
