/**
 * `@mem01/runtime`: the one place where the environment becomes memory. It resolves `DATABASE_URL`, `MEM01_HOME`,
 * `OPENAI_API_KEY` / `OPENAI_BASE_URL`, the model variables and the `MEM01_*` tuning (and the options that override
 * them) into a store, an extractor, an embedder and engine settings, and opens them. The session binding
 * (`mem01session`), the MCP server (`@mem01/mcp`) and the CLI and inspector (`@mem01/cli`) all open memory
 * through it, so each of them recalls exactly what the agent would. It does not load the Agents SDK.
 *
 * @example
 * import { describeRuntime, openMemoryRuntime } from '@mem01/runtime';
 * const runtime = await openMemoryRuntime({ resume: false });
 * console.error(describeRuntime(runtime.description)); // sqlite /home/a/.mem01/memory.db (extractor local-rules, …)
 * await runtime.close();
 * @packageDocumentation
 */
export { type MemoryAdminOptions, type MemoryAdminRuntime, openMemoryAdmin } from './admin.js';
export {
  DEFAULT_WORKING_MEMORY_SIZE,
  ENVIRONMENT_VARIABLES,
  pickEnvironment,
  resolveWorkingMemorySize,
  type ServerSettings,
  serverSettings,
  tuningFromEnv,
  type VariableGroup,
  type WorkingMemorySize,
  workingMemorySizeFromEnv,
} from './env.js';
export { type OpenStoreOptions, openStoreTarget } from './open.js';
export {
  loadOptionalPeer,
  loadPostgresStore,
  MissingDependencyError,
  type OptionalPeerContext,
  type PostgresStoreModule,
} from './peers.js';
export {
  checkEnvironment,
  type EnvironmentCheck,
  type PlannedTarget,
  type PlanOptions,
  planRuntime,
  type RuntimePlan,
  type VariableCheck,
} from './plan.js';
export type { EmbedderChoice, EmbedderOption } from './providers.js';
export {
  checkGivenRuntime,
  describeRuntime,
  type MemoryRuntime,
  type MemoryRuntimeOptions,
  openMemoryRuntime,
  type RuntimeDescription,
  type RuntimeSpec,
  resolveRuntime,
} from './resolve-runtime.js';
export {
  acquireRuntime,
  assertRuntimeOpen,
  closeSharedRuntimes,
  pinnedRuntime,
  type RuntimeLease,
  sharedRuntimeCount,
} from './runtime-registry.js';
export {
  defaultSqlitePath,
  describeStoreTarget,
  resolveStoreTarget,
  type StoreSelection,
  type StoreTarget,
} from './store-target.js';
