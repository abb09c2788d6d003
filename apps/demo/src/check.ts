/**
 * `--check`: which configuration would run, from the environment and `.env` files, with no network call and
 * no secret shown.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { DEFAULT_EMBEDDING_MODEL, DEFAULT_LLM_MODEL } from '@mem01/openai';
import { defaultSqlitePath } from '@mem01/store-sqlite/paths';
import { REPO_ROOT } from './fixture.js';

export interface CheckResult {
  readonly ok: boolean;
  readonly envFiles: readonly string[];
  readonly openai: {
    readonly set: boolean;
    readonly valid: boolean;
    readonly shown: string | null;
    readonly problem?: string;
  };
  readonly database: {
    readonly set: boolean;
    readonly valid: boolean;
    readonly shown: string | null;
    readonly problem?: string;
  };
  readonly wouldRun: { readonly extractor: string; readonly embedder: string; readonly store: string };
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

/** `sk-…` keys: shown as their prefix and last 4 characters only. */
export function maskKey(key: string): string {
  return key.length <= 12 ? '***' : `${key.slice(0, 3)}…${key.slice(-4)}`;
}

/** A URL with its password removed. */
export function maskUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password) copy.password = '***';
  return copy.href;
}

export function checkOpenAIKey(key: string | undefined): CheckResult['openai'] {
  if (key === undefined || key === '') return { set: false, valid: true, shown: null };
  if (/\s/.test(key)) return { set: true, valid: false, shown: null, problem: 'contains whitespace' };
  if (!/^sk-[A-Za-z0-9_-]{16,}$/.test(key)) {
    return {
      set: true,
      valid: false,
      shown: null,
      problem: 'does not look like an OpenAI key (sk-… with at least 16 more characters)',
    };
  }
  return { set: true, valid: true, shown: maskKey(key) };
}

export function checkDatabaseUrl(value: string | undefined): CheckResult['database'] {
  if (value === undefined || value === '') return { set: false, valid: true, shown: null };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      set: true,
      valid: false,
      shown: null,
      problem: 'is not a URL (expected postgres://user:pass@host:5432/db)',
    };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return {
      set: true,
      valid: false,
      shown: maskUrl(url),
      problem: `has protocol ${url.protocol} (expected postgres:)`,
    };
  }
  if (!url.hostname) return { set: true, valid: false, shown: maskUrl(url), problem: 'has no host' };
  return { set: true, valid: true, shown: maskUrl(url) };
}

export function check(env: Record<string, string | undefined>, cwd = process.cwd()): CheckResult {
  const envFiles = loadDotEnv(env, cwd);
  const openai = checkOpenAIKey(env.OPENAI_API_KEY);
  const database = checkDatabaseUrl(env.DATABASE_URL);
  const useOpenAI = openai.set && openai.valid;
  return {
    ok: openai.valid && database.valid,
    envFiles,
    openai,
    database,
    wouldRun: {
      extractor: useOpenAI
        ? `@mem01/openai (${env.MEM01_LLM_MODEL ?? DEFAULT_LLM_MODEL})`
        : '@mem01/local (offline)',
      embedder: useOpenAI
        ? `@mem01/openai (${env.MEM01_EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL})`
        : '@mem01/local (384-d feature hashing)',
      store:
        database.set && database.valid
          ? `postgres (${database.shown})`
          : `sqlite (${defaultSqlitePath(env as NodeJS.ProcessEnv)})`,
    },
  };
}
