/**
 * `mem01session/runtime`: the runtime `memSession` opens, without the Agents SDK. For servers and tools that need
 * mem01's defaults (the store, extractor and embedder the environment selects, and the engine settings) but run no
 * agent. The runtime itself lives in `@mem01/runtime` (which the MCP server and the CLI use too); these are the same
 * functions, re-exported. Importing it loads no `@openai/agents`.
 * @packageDocumentation
 */
export {
  type MemoryRuntime,
  type MemoryRuntimeOptions,
  openMemoryRuntime,
  type RuntimeDescription,
} from '@mem01/runtime';
