/**
 * `mem01session`: long-term, belief-based memory for the OpenAI Agents SDK for TypeScript. A `Session` whose
 * textual turns feed a per-user belief memory, plus per-run hooks that recall it into the model input.
 *
 * @example
 * import { Runner } from '@openai/agents';
 * import { memSession } from 'mem01session';
 * const session = memSession('conversation-7', { userId: 'user-123' });
 * try {
 *   await new Runner().run(agent, 'Where do I live?', { session, ...session.runConfig() });
 * } finally {
 *   await session.close();
 * }
 * @packageDocumentation
 */
export { AUTHORITY_POLICY } from '@mem01/engine';
export { MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
export type { WorkingMemorySize } from '@mem01/runtime';
export { closeSharedRuntimes, sharedRuntimeCount } from '@mem01/runtime';
export {
  AgentsSdkMissingError,
  RunConfigReusedError,
  SessionHistoryError,
  type SessionHistoryErrorCode,
} from './errors.js';
export {
  getMemoryContext,
  getMemoryUsage,
  type MemoryContext,
  type MemoryContextOptions,
  type MemoryHelperOptions,
  type MemoryInstructionsOptions,
  memoryInstructions,
  type SaveTurnOptions,
  type SearchMemoriesOptions,
  savedTurnsSessionId,
  saveTurn,
  searchMemories,
} from './helpers.js';
export {
  type MemoryHistoryOptions,
  MemSession,
  type MemSessionOptions,
  memSession,
} from './mem-session.js';
export { createMemoryTools, type MemoryToolsOptions } from './memory-tools.js';
export type { MemoryRunConfig } from './run-hooks.js';
// The runtime without the Agents SDK (`mem01session/runtime`), also part of the root.
export * from './runtime.js';
export type {
  HistoryAppendTransaction,
  HistoryMutationArgs,
  HistoryReplaceFunctionCallMutation,
  HistoryReplaceSuffixTransaction,
  HistoryTransactionArgs,
} from './session-history.js';
