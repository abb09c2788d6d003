import { Mem01Error } from '@mem01/engine';

/**
 * A run config from {@link MemSession.runConfig} was used for a second run, or for two runs at once.
 * Each run needs a fresh `session.runConfig()`: the config holds that run's recall query and cached block.
 */
export class RunConfigReusedError extends Mem01Error {
  constructor() {
    super(
      'run_config_reused',
      'this run config was already used by another run; call session.runConfig() again for every run',
    );
  }
}

/** The codes of {@link SessionHistoryError}. */
export type SessionHistoryErrorCode =
  /** The transaction or mutation arguments, or an item in them, are not what the Session contract takes. */
  | 'invalid_history_change'
  /** The operation id was already applied with a different transaction. */
  | 'history_operation_conflict'
  /** A `replace_suffix` transaction's expected suffix is not the end of the history. */
  | 'history_suffix_mismatch';

/**
 * A history transaction or mutation was refused; history is unchanged and the operation id is not recorded. The
 * message is the Agents SDK's own wording where the SDK's `MemorySession` has one (so code matching the SDK's
 * messages keeps working), followed by what mem01 found, naming an item by its index, never by its content.
 */
export class SessionHistoryError extends Mem01Error {
  /** Where the problem is, e.g. `transaction.items[2]`, when one field or item is at fault. */
  readonly field: string | undefined;
  /** The index of the refused item in its list, when an item is at fault. */
  readonly index: number | undefined;
  constructor(
    code: SessionHistoryErrorCode,
    message: string,
    options: { field?: string; index?: number; cause?: unknown } = {},
  ) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = options.field;
    this.index = options.index;
  }
}

/**
 * Something that needs the OpenAI Agents SDK (`@openai/agents`, an optional peer dependency) was used, and the SDK
 * could not be loaded. Install it next to mem01session (`npm i @openai/agents`).
 */
export class AgentsSdkMissingError extends Mem01Error {
  constructor(what: string, options?: { cause?: unknown }) {
    super(
      'agents_sdk_missing',
      `${what} needs the OpenAI Agents SDK: install @openai/agents next to mem01session (npm i @openai/agents)`,
      options,
    );
  }
}
