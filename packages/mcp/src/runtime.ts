/**
 * Which store, extractor and embedder the MCP server runs on: `@mem01/runtime`'s `openMemoryRuntime`, the one home
 * of mem01's defaults, with `--db` and `--pg-schema` mapped onto its options, so the agent (`memSession`), the CLI,
 * the inspector and this server open one memory with the same environment (`DATABASE_URL`, `MEM01_HOME`,
 * `OPENAI_API_KEY`, the `MEM01_*` tuning). The server keeps no default of its own.
 * The server never resumes other users' queued turns: it drains each user it serves when it first serves them.
 */
import type { EngineStore, Logger, MemoryEngine } from '@mem01/engine';
import { sanitize } from '@mem01/engine/binding-kit';
import { openMemoryRuntime, type RuntimeDescription } from '@mem01/runtime';

/** Options of {@link openMcpRuntime}. */
export interface McpRuntimeOptions {
  /** `--db`: a `postgres://`/`postgresql://` URL or a SQLite file path (the runtime's `db`). Wins over `DATABASE_URL`. */
  readonly db?: string | undefined;
  /** `--pg-schema`: the Postgres schema of the mem01 tables (the runtime's `pgSchema`). Default `mem01`. */
  readonly pgSchema?: string | undefined;
  /** Environment to read defaults from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Where notices and warnings go. Default: warnings and the one-line notice to stderr. */
  readonly logger?: Logger | undefined;
}

/** What the runtime runs on, without secrets. */
export interface McpRuntimeDescription {
  /** `sqlite <path>` or `postgres <url without password>`. */
  readonly store: string;
  readonly extractor: string;
  /** The embedder's name, or `none`. */
  readonly embedder: string;
  /** Everything the runtime reports about itself (the engine settings it opened with are `engine.config`). */
  readonly runtime: RuntimeDescription;
}

/** An open store and the engine over it. */
export interface McpRuntime {
  readonly engine: MemoryEngine;
  readonly store: EngineStore;
  readonly description: McpRuntimeDescription;
  /** Drains accepted writes, then closes the engine and the store. Idempotent. */
  close(): Promise<void>;
}

const stderrLogger: Logger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`${sanitize(message)}\n`),
};

/** Opens the store, extractor, embedder and engine the options and the environment select. */
export async function openMcpRuntime(options: McpRuntimeOptions = {}): Promise<McpRuntime> {
  const runtime = await openMemoryRuntime({
    db: options.db,
    pgSchema: options.pgSchema,
    env: options.env ?? process.env,
    logger: options.logger ?? stderrLogger,
    resume: false,
  });
  return {
    engine: runtime.engine,
    store: runtime.store,
    description: {
      store: runtime.description.location,
      extractor: runtime.description.extractor,
      embedder: runtime.description.embedder ?? 'none',
      runtime: runtime.description,
    },
    close: () => runtime.close(),
  };
}
