#!/usr/bin/env node
// Checks the GitHub workflows without running them: they parse, every step is well-formed, and they do what the
// README says (per-push CI on Node 22 and 24 against PostgreSQL with pgvector and Chromium, with the oldest and the
// latest Agents SDK; a changesets release that publishes with provenance). Run by .ci/run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const problems = [];
const check = (ok, what) => {
  if (!ok) problems.push(what);
};

function load(name) {
  const path = join(root, '.github', 'workflows', name);
  try {
    return parse(readFileSync(path, 'utf8'), { strict: true, uniqueKeys: true });
  } catch (err) {
    problems.push(`${name}: ${err.message}`);
    return null;
  }
}

function checkSteps(name, job, jobName) {
  check(typeof job['runs-on'] === 'string', `${name}: job ${jobName} has no runs-on`);
  check(Array.isArray(job.steps) && job.steps.length > 0, `${name}: job ${jobName} has no steps`);
  for (const [i, step] of (job.steps ?? []).entries()) {
    const kinds = ['uses', 'run'].filter((k) => typeof step[k] === 'string');
    check(kinds.length === 1, `${name}: ${jobName} step ${i} needs exactly one of uses or run`);
    if (typeof step.uses === 'string')
      check(
        /^[\w.-]+\/[\w./-]+@[\w.-]+$/.test(step.uses),
        `${name}: step ${i} uses "${step.uses}" without a version`,
      );
  }
  return (job.steps ?? []).map((s) => s.run ?? s.uses ?? '');
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const session = JSON.parse(readFileSync(join(root, 'packages/session/package.json'), 'utf8'));

const ci = load('ci.yml');
if (ci) {
  check(
    ci.on?.push !== undefined && ci.on?.pull_request !== undefined,
    'ci.yml: must run on push and pull_request',
  );
  const jobs = Object.entries(ci.jobs ?? {});
  check(jobs.length > 0, 'ci.yml: no jobs');
  for (const [jobName, job] of jobs) {
    const runs = checkSteps('ci.yml', job, jobName);
    const matrix = job.strategy?.matrix ?? {};
    check((matrix.node ?? []).map(String).includes('22'), 'ci.yml: matrix.node lacks 22');
    check((matrix.node ?? []).map(String).includes('24'), 'ci.yml: matrix.node lacks 24');
    const oldest = session.devDependencies?.['@openai/agents'];
    check((matrix.agents ?? []).includes(oldest), `ci.yml: matrix.agents lacks the tested SDK ${oldest}`);
    check((matrix.agents ?? []).includes('latest'), 'ci.yml: matrix.agents lacks latest');
    const lowest = /^>=\s*([\d.]+)/.exec(session.peerDependencies?.['@openai/agents'] ?? '')?.[1];
    check(
      lowest !== undefined && oldest.startsWith(lowest),
      `ci.yml: the oldest SDK ${oldest} is not the peer range's lower bound`,
    );
    check(
      /pgvector/.test(job.services?.postgres?.image ?? ''),
      'ci.yml: the postgres service has no pgvector',
    );
    check(
      runs.some((r) => /chromium/.test(r)),
      'ci.yml: Chromium is not installed',
    );
    for (const script of ['test', 'typecheck', 'lint', 'test:packaging']) {
      check(runs.includes(`pnpm ${script}`), `ci.yml: no "pnpm ${script}" step`);
      check(pkg.scripts?.[script] !== undefined, `package.json has no "${script}" script`);
    }
  }
}

const release = load('release.yml');
if (release) {
  check(release.on?.push?.branches?.includes('main'), 'release.yml: must run on pushes to main');
  check(release.permissions?.['id-token'] === 'write', 'release.yml: provenance needs id-token: write');
  for (const [jobName, job] of Object.entries(release.jobs ?? {})) {
    checkSteps('release.yml', job, jobName);
    const action = (job.steps ?? []).find((s) => String(s.uses ?? '').startsWith('changesets/action@'));
    check(action !== undefined, 'release.yml: no changesets/action step');
    if (action) {
      check(
        action.with?.version === 'pnpm changeset version',
        'release.yml: version is not "pnpm changeset version"',
      );
      check(action.with?.publish === 'pnpm release', 'release.yml: publish is not "pnpm release"');
      check(String(action.env?.NPM_CONFIG_PROVENANCE) === 'true', 'release.yml: publish without provenance');
    }
  }
  check(
    /changeset publish/.test(pkg.scripts?.release ?? ''),
    'package.json: "release" does not run changeset publish',
  );
}

if (problems.length > 0) {
  for (const p of problems) console.error(`error: ${p}`);
  process.exit(1);
}
console.log('workflows: ci.yml and release.yml check out');
