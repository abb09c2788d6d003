/**
 * `mem01session/runtime`: the runtime `memSession` opens, without the Agents SDK. For servers and tools that need
 * mem01's defaults (the store, extractor and embedder the environment selects, and the engine settings) but run no
 * agent: the MCP server uses it, so it sees the same memory as the sessions. Importing it loads no `@openai/agents`.
 * @packageDocumentation
 */
export {
  type MemoryRuntimeOptions,
  openMemoryRuntime,
  type Runtime as MemoryRuntime,
  type RuntimeDescription,
} from './resolve-runtime.js';
