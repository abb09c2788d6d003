/**
 * `--check`: which configuration would run, from the environment and `.env` files, with no network call and
 * no secret shown. What would run is `@mem01/runtime`'s answer (`checkEnvironment`), the one home of the defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { checkEnvironment, type RuntimePlan, type VariableCheck } from '@mem01/runtime';
import { REPO_ROOT } from './fixture.js';

export interface CheckResult {
  readonly ok: boolean;
  readonly envFiles: readonly string[];
  /** `OPENAI_API_KEY`, checked by its form (masked). */
  readonly openai: VariableCheck;
  /** `DATABASE_URL`, checked by its form (without password). */
  readonly database: VariableCheck;
  readonly wouldRun: {
    readonly extractor: string;
    /** Who writes conversation summaries: the engine's offline extractive summarizer, or the model's. */
    readonly summarizer: string;
    readonly embedder: string;
    readonly store: string;
  };
  /** What `@mem01/runtime` would open (the agent's runtime, described without secrets), or null when it would refuse. */
  readonly runtime: RuntimePlan | null;
  /** Why `@mem01/runtime` would refuse these settings, when it would. */
  readonly problem?: string;
}

/**
 * Loads `.env` from the workspace root and then the current folder into `env`, never overriding a variable
 * that is already set. Returns the files read.
 */
export function loadDotEnv(env: Record<string, string | undefined>, cwd = process.cwd()): string[] {
  const files: string[] = [];
  for (const file of [...new Set([join(REPO_ROOT, '.env'), join(cwd, '.env')])]) {
    if (!existsSync(file)) continue;
    const parsed = parseEnv(readFileSync(file, 'utf8'));
    for (const [k, v] of Object.entries(parsed)) if (env[k] === undefined && v !== undefined) env[k] = v;
    files.push(file);
  }
  return files;
}

/**
 * Loads `.env` files into `env` (see {@link loadDotEnv}), then asks `@mem01/runtime` what would run on it: the same
 * resolution the agent, the MCP server and the CLI use, without opening anything.
 */
export async function check(
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): Promise<CheckResult> {
  const envFiles = loadDotEnv(env, cwd);
  const checked = await checkEnvironment(env);
  const plan = checked.plan;
  const openai = checked.variables.OPENAI_API_KEY;
  const database = checked.variables.DATABASE_URL;
  return {
    ok: checked.ok,
    envFiles,
    openai,
    database,
    wouldRun: {
      extractor: plan === null ? 'none (the settings are refused)' : extractorLabel(plan),
      summarizer: plan === null ? 'none' : summarizerLabel(plan),
      embedder: plan === null ? 'none' : embedderLabel(plan),
      store: plan === null ? `none: ${checked.problem}` : storeLabel(plan.location),
    },
    runtime: plan,
    ...(checked.problem === undefined ? {} : { problem: checked.problem }),
  };
}

function extractorLabel(plan: RuntimePlan): string {
  return plan.llmModel === null ? '@mem01/local (offline)' : `@mem01/openai (${plan.llmModel})`;
}

function summarizerLabel(plan: RuntimePlan): string {
  const name = plan.summarizer;
  return name.startsWith('openai:')
    ? `@mem01/openai (${name.slice('openai:'.length)})`
    : `@mem01/engine (offline, ${name})`;
}

function embedderLabel(plan: RuntimePlan): string {
  const name = plan.embedder ?? 'none';
  if (name.startsWith('openai:')) return `@mem01/openai (${name.slice('openai:'.length)})`;
  if (name.startsWith('local:')) return `@mem01/local (${plan.dimensions}-d feature hashing)`;
  return name;
}

/** `sqlite /path` → `sqlite (/path)`; `postgres url` → `postgres (url)`. */
function storeLabel(location: string): string {
  const space = location.indexOf(' ');
  return space < 0 ? location : `${location.slice(0, space)} (${location.slice(space + 1)})`;
}
