/**
 * `--live`: the story through a real model, under a unique user scope and four fresh conversation ids.
 * Memory is opened by `@mem01/runtime` from the environment, as the agent's would be: OpenAI for the extractor and
 * the embedder, Postgres when DATABASE_URL is set, else SQLite.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError } from '@mem01/engine';
import { checkEnvironment, openMemoryRuntime } from '@mem01/runtime';
import { quietLogger } from './scaling.js';
import { runStory, type StoryStep } from './story.js';

export interface LiveResult {
  readonly mode: 'live';
  readonly userId: string;
  readonly store: string;
  readonly model: string;
  readonly note: string;
  readonly steps: ReadonlyArray<Omit<StoryStep, 'answer'> & { readonly modelObservation: string }>;
}

export interface LiveOptions {
  /** The agent's model. Default: the extraction model the runtime resolves (`MEM01_LLM_MODEL`, else its default). */
  readonly model?: string | undefined;
}

export async function runLive(
  env: Record<string, string | undefined>,
  options: LiveOptions = {},
): Promise<LiveResult> {
  const checked = await checkEnvironment(env);
  const key = checked.variables.OPENAI_API_KEY;
  if (!key.set) throw new ConfigError('--live needs OPENAI_API_KEY (in the environment or a .env file)');
  if (!key.valid) throw new ConfigError(`OPENAI_API_KEY ${key.problem}`);
  const db = checked.variables.DATABASE_URL;
  if (!db.valid) throw new ConfigError(`DATABASE_URL ${db.problem}`);
  if (checked.plan === null) throw new ConfigError(checked.problem ?? 'the settings are refused');
  const plan = checked.plan;
  // The database the runtime resolves (Postgres at DATABASE_URL, else the SQLite file in MEM01_HOME), except that a
  // SQLite run gets a file of its own beside the default one: the embedding length is fixed per database, and
  // OpenAI's differs from the offline one's.
  const target = plan.target;
  const sqlitePath =
    target?.kind === 'sqlite' ? join(dirname(target.path), `demo-live-${plan.dimensions}d.db`) : undefined;
  if (sqlitePath !== undefined) mkdirSync(dirname(sqlitePath), { recursive: true, mode: 0o700 });
  const runtime = await openMemoryRuntime({
    env,
    ...(sqlitePath === undefined ? {} : { db: sqlitePath }),
    logger: quietLogger,
    resume: false,
  });
  const storeLabel = sqlitePath === undefined ? `postgres (${db.shown})` : `sqlite (${sqlitePath})`;
  // A key is set, so the runtime runs OpenAI's extractor and names its model.
  const model = options.model ?? (plan.llmModel as string);
  const userId = `demo-live-${randomUUID()}`;
  try {
    const steps = await runStory({
      runtime,
      model,
      userId,
      conversationPrefix: `${userId}-conversation`,
    });
    return {
      mode: 'live',
      userId,
      store: storeLabel,
      model,
      note: 'Answers are model observations from a live call, not assertions of mem01. Belief lifecycles are read from the store.',
      steps: steps.map(({ answer, ...rest }) => ({ ...rest, modelObservation: answer })),
    };
  } finally {
    await runtime.close();
  }
}
