/**
 * `--live`: the story through a real model, under a unique user scope and four fresh conversation ids.
 * OpenAI for the agent, the extractor and the embedder; Postgres when DATABASE_URL is set, else SQLite.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, type FullStore } from '@mem01/engine';
import { createOpenAIEmbedder, createOpenAIExtractor } from '@mem01/openai';
import { defaultSqlitePath } from '@mem01/store-sqlite/paths';
import { checkDatabaseUrl, checkOpenAIKey } from './check.js';
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

export async function runLive(env: Record<string, string | undefined>): Promise<LiveResult> {
  const key = checkOpenAIKey(env.OPENAI_API_KEY);
  if (!key.set) throw new ConfigError('--live needs OPENAI_API_KEY (in the environment or a .env file)');
  if (!key.valid) throw new ConfigError(`OPENAI_API_KEY ${key.problem}`);
  const db = checkDatabaseUrl(env.DATABASE_URL);
  if (!db.valid) throw new ConfigError(`DATABASE_URL ${db.problem}`);

  const embedder = createOpenAIEmbedder({ env });
  const extractor = createOpenAIExtractor({ env });
  let store: FullStore;
  let storeLabel: string;
  if (db.set) {
    const { openPostgresStore } = await import('@mem01/store-postgres');
    store = await openPostgresStore({
      connectionString: env.DATABASE_URL,
      dimensions: embedder.dimensions,
      logger: quietLogger,
    });
    storeLabel = `postgres (${db.shown})`;
  } else {
    const home = dirname(defaultSqlitePath(env as NodeJS.ProcessEnv));
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const { openSqliteStore } = await import('@mem01/store-sqlite');
    // A file of its own: the embedding dimension is fixed per database, and OpenAI's differs from the offline one.
    const path = join(home, `demo-live-${embedder.dimensions}d.db`);
    store = openSqliteStore({ path, dimensions: embedder.dimensions, logger: quietLogger });
    storeLabel = `sqlite (${path})`;
  }
  const model = env.MEM01_DEMO_MODEL ?? env.MEM01_LLM_MODEL ?? 'gpt-5.6-sol';
  const userId = `demo-live-${randomUUID()}`;
  try {
    const steps = await runStory({
      store,
      extractor,
      embedder,
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
    await store.close();
  }
}
