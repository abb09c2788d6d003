/**
 * Importing `@mem01/local` and recalling with its embedder must not load the NLP libraries the rules run on:
 * they dominate a process's cold start. Checked in a fresh Node process on `dist` (a module graph is per
 * process), recording which packages the process resolves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const entry = pathToFileURL(join(here, '..', 'dist', 'index.js')).href;

// Runs in the child: records every resolved URL, then reports which NLP packages were loaded at each step.
const script = `
import { registerHooks } from 'node:module';
const urls = [];
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); urls.push(r.url); return r; } });
const loaded = () => ({
  compromise: urls.some((u) => u.includes('/compromise/')),
  chrono: urls.some((u) => u.includes('/chrono-node/')),
});
const steps = {};
const local = await import(${JSON.stringify(entry)});
const extractor = local.createLocalExtractor();
await local.createLocalEmbedder().embed(['Where do I live?']);
steps.afterImportAndEmbed = loaded();
const result = await extractor.extract({
  turns: [{ id: 't1', role: 'user', text: 'I live in Lisbon.', at: '2026-01-05T10:00:00.000Z' }],
  now: '2026-01-05T10:00:00.000Z',
});
steps.afterExtract = loaded();
steps.values = result.operations.map((o) => o.value);
process.stdout.write(JSON.stringify(steps));
`;

function runChild(): {
  afterImportAndEmbed: { compromise: boolean; chrono: boolean };
  afterExtract: { compromise: boolean; chrono: boolean };
  values: string[];
} {
  if (!existsSync(fileURLToPath(entry)))
    throw new Error('dist is missing: run pnpm --filter @mem01/local build');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out);
}

describe('@mem01/local loading', () => {
  it('loads compromise and chrono-node on the first extract, not at import or for embedding', () => {
    const steps = runChild();
    expect(steps.afterImportAndEmbed).toEqual({ compromise: false, chrono: false });
    expect(steps.afterExtract).toEqual({ compromise: true, chrono: true });
    expect(steps.values).toEqual(['Lisbon']);
  });
});
