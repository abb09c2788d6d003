/**
 * The packages as a user gets them: every public package is packed with pnpm (as it is published), checked with
 * publint and @arethetypeswrong/cli, installed with plain npm into temporary projects outside the workspace, and
 * the READMEs' examples run there, on this Node.js (>= 22.13) and on a Node.js 20 when the machine has one.
 *
 * Run: `npx -y pnpm@10.34.9 test:packaging` (builds the packages first). Needs the npm registry (third-party
 * dependencies) and the PostgreSQL server of the other tests (`MEM01_TEST_PG_URL`, default
 * postgres://postgres@127.0.0.1:5432/test), where it creates and drops its own databases.
 */
import { strict as assert } from 'node:assert';
import { execFile, execFileSync, type SpawnSyncReturns, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { findOldNode, TEST_PG_URL } from '@mem01/test-kit';
import semver from 'semver';

const execFileAsync = promisify(execFile);

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'fixtures');
// Not a turbo task (node --test runs it directly), so turbo's environment rules do not apply.
const { MEM01_KEEP_PACKAGING, npm_execpath } = process.env;
const PG_URL = TEST_PG_URL;
/** MEM01_KEEP_PACKAGING=1 keeps the temporary folder (tarballs, projects) to look at. */
const KEEP = MEM01_KEEP_PACKAGING === '1';
/** The only engines ranges the packages claim; the Node.js 20 runs below are what make `>=20` true. */
const ENGINES = new Set(['>=20', '>=22', '>=22.13']);

interface PublicPackage {
  readonly name: string;
  /** Folder relative to the repository root, e.g. `packages/engine`. */
  readonly dir: string;
  tarball: string;
}

const work = mkdtempSync(join(tmpdir(), 'mem01-packaging-'));
// The libraries in packages/, and the apps published for users to run (the demo, `npx mem01-demo`).
const packages: PublicPackage[] = ['packages', 'apps']
  .flatMap((top) => readdirSync(join(ROOT, top)).map((d) => join(top, d)))
  .filter((dir) => existsSync(join(ROOT, dir, 'package.json')))
  .map((dir) => ({ dir, json: readJson(join(ROOT, dir, 'package.json')) }))
  .filter(({ json }) => json.private !== true)
  .map(({ dir, json }) => ({ name: String(json.name), dir, tarball: '' }));
const oldNode: { readonly path?: string; readonly missing?: string } = findOldNode();
const databases: string[] = [];

before(() => {
  assert.ok(!realpathSync(work).startsWith(`${ROOT}${sep}`), `${work} must be outside the workspace`);
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  assert.ok(major > 22 || (major === 22 && minor >= 13), `run on Node.js >= 22.13, not ${process.version}`);
  const dest = join(work, 'tarballs');
  mkdirSync(dest);
  // One recursive pack (a pnpm start per package costs seconds); each tarball is matched by its package.json.
  const filters = packages.flatMap((p) => ['--filter', p.name]);
  run(pnpm(), ['-r', ...filters, 'pack', '--pack-destination', dest]);
  for (const file of readdirSync(dest)) {
    const name = JSON.parse(tarRead(join(dest, file), 'package.json')).name;
    const pkg = packages.find((p) => p.name === name);
    assert.ok(pkg && !pkg.tarball, `${file} is the one tarball of a public package`);
    pkg.tarball = join(dest, file);
  }
  for (const pkg of packages) assert.ok(pkg.tarball, `${pkg.name} was packed`);
});

after(async () => {
  if (databases.length > 0) {
    const client = await pgClient(PG_URL);
    try {
      for (const db of databases) await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }
  if (KEEP) console.log(`# kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
});

describe('every public package, packed', () => {
  it('is found in packages/', () => {
    const names = packages.map((p) => p.name);
    for (const expected of [
      '@mem01/engine',
      '@mem01/store-sqlite',
      '@mem01/runtime',
      'mem01session',
      '@mem01/cli',
      'mem01-demo',
    ]) {
      assert.ok(names.includes(expected), `${expected} among ${names.join(', ')}`);
    }
  });

  it('has the LICENSE, the README, its metadata and no workspace: ranges', () => {
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} mem01 contributors\n/);
    // Every problem of every package at once: one run says all that is missing.
    const problems: string[] = [];
    const check = (ok: unknown, problem: string) => {
      if (!ok) problems.push(problem);
    };
    for (const pkg of packages) {
      const files = new Set(tarList(pkg.tarball));
      for (const f of ['LICENSE', 'README.md', 'package.json', 'esm-only.cjs', 'esm-only.d.cts']) {
        check(files.has(`package/${f}`), `${pkg.name}: ${f} is not in the tarball`);
      }
      if (files.has('package/LICENSE')) {
        check(
          tarRead(pkg.tarball, 'LICENSE') === license,
          `${pkg.name}: LICENSE differs from the repository's`,
        );
      }
      const tests = [...files].filter((f) => /\.test\.[cm]?[jt]s$/.test(f));
      check(tests.length === 0, `${pkg.name}: test files in the tarball: ${tests.join(', ')}`);
      const json = JSON.parse(tarRead(pkg.tarball, 'package.json')) as Record<string, unknown>;
      check(json.license === 'MIT', `${pkg.name}: license is ${String(json.license)}`);
      const repo = json.repository as Record<string, unknown> | undefined;
      check(
        repo?.type === 'git' &&
          repo.url === 'git+https://github.com/mem01/mem01.git' &&
          repo.directory === pkg.dir,
        `${pkg.name}: repository is ${JSON.stringify(repo)}`,
      );
      check(
        json.homepage === `https://github.com/mem01/mem01/tree/main/${pkg.dir}#readme`,
        `${pkg.name}: homepage is ${String(json.homepage)}`,
      );
      check(
        (json.bugs as { url?: unknown } | undefined)?.url === 'https://github.com/mem01/mem01/issues',
        `${pkg.name}: bugs is ${JSON.stringify(json.bugs)}`,
      );
      check(Array.isArray(json.keywords) && json.keywords.length > 0, `${pkg.name}: no keywords`);
      const engines = (json.engines as { node?: string } | undefined)?.node;
      check(
        engines && ENGINES.has(engines),
        `${pkg.name}: engines.node is ${engines}, not one of ${[...ENGINES]}`,
      );
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
        for (const [dep, range] of Object.entries((json[field] ?? {}) as Record<string, string>)) {
          check(!range.startsWith('workspace:'), `${pkg.name}: ${field}.${dep} is ${range}`);
        }
      }
      // A package claims no older Node.js than its own dependencies do (npm would warn EBADENGINE there).
      const own = engines ? semver.minVersion(engines) : null;
      for (const dep of Object.keys((json.dependencies ?? {}) as Record<string, string>)) {
        const depJson = readJson(join(ROOT, pkg.dir, 'node_modules', dep, 'package.json'));
        const depEngines = (depJson.engines as { node?: string } | undefined)?.node;
        const needed = depEngines ? semver.minVersion(depEngines) : null;
        check(
          !own || !needed || semver.gte(own, needed),
          `${pkg.name}: engines.node ${engines} is older than ${dep}@${String(depJson.version)}'s ${depEngines}`,
        );
      }
    }
    assert.deepEqual(problems, []);
  });

  it('passes publint (warnings are errors)', async () => {
    await runAll(packages.map((pkg) => [...bin('publint'), 'run', pkg.tarball, '--strict']));
  });

  // ESM-only on purpose: `require` resolves to esm-only.cjs (a clear error) with esm-only.d.cts (its types), so
  // node16 from CommonJS resolves cleanly too. node10 (`moduleResolution: "node"`) predates `exports` and cannot
  // see subpaths such as `./testing`; it is the one resolution left out (attw's node16 profile).
  it('passes @arethetypeswrong/cli (node16 profile: ESM, CommonJS, bundler)', async () => {
    await runAll(
      packages.map((pkg) => [
        ...bin('attw'),
        pkg.tarball,
        '--profile',
        'node16',
        '--format',
        'table-flipped',
        '--no-color',
      ]),
    );
  });
});

describe("the engine README's example, installed as its README says", () => {
  let project: string;
  let example: string;

  before(() => {
    const readme = readFileSync(join(ROOT, 'packages/engine/README.md'), 'utf8');
    const install = npmInstallLine(readme, '@mem01/engine');
    example = codeBlocks(readme, 'ts')[0] ?? '';
    assert.match(example, /new MemoryEngine\(/);
    project = newProject('engine-only', install);
    writeFileSync(join(project, 'example.mjs'), example);
  });

  it('runs, and recalls the corrected belief (SF), not the superseded one (NYC)', () => {
    const out = run(process.execPath, ['example.mjs'], { cwd: project, env: userEnv() }).stdout;
    assertSanFrancisco(out);
  });

  it('type-checks against the installed packages', () => {
    writeFileSync(join(project, 'example.ts'), example);
    typecheck(project, 'example.ts');
  });

  it('runs on Node.js 20 (engine, store-memory and local claim >= 20)', (t) => {
    const node = requireOldNode(t);
    if (!node) return;
    const out = run(node, ['example.mjs'], { cwd: project, env: userEnv() }).stdout;
    assertSanFrancisco(out);
  });

  it('require() of an ESM-only package says to use import (this Node.js and Node.js 20)', (t) => {
    const nodes = [process.execPath, ...(oldNode.path ? [oldNode.path] : [])];
    if (!oldNode.path) t.diagnostic(`require() on Node.js 20 not tried: ${oldNode.missing}`);
    for (const node of nodes) {
      for (const specifier of [
        '@mem01/engine',
        '@mem01/engine/testing',
        '@mem01/store-memory',
        '@mem01/local',
      ]) {
        const r = spawn(node, ['-e', `require(${JSON.stringify(specifier)})`], {
          cwd: project,
          env: userEnv(),
        });
        assert.notEqual(r.status, 0, `${node}: require('${specifier}') fails`);
        const pkg = specifier.split('/').slice(0, 2).join('/');
        assert.ok(r.stderr.includes(`${pkg} is ESM-only and cannot be loaded with require()`), r.stderr);
        assert.ok(r.stderr.includes(`import {`) && r.stderr.includes('await import('), r.stderr);
        assert.ok(r.stderr.includes('ERR_REQUIRE_ESM'), r.stderr);
        assert.ok(!r.stderr.includes('ERR_PACKAGE_PATH_NOT_EXPORTED'), r.stderr);
      }
    }
  });
});

describe("the runtime README's example, installed as its README says", () => {
  let project: string;
  let example: string;

  before(() => {
    const readme = readFileSync(join(ROOT, 'packages/runtime/README.md'), 'utf8');
    const install = npmInstallLine(readme, '@mem01/runtime');
    assert.deepEqual(install, ['@mem01/runtime']);
    example = codeBlocks(readme, 'ts')[0] ?? '';
    assert.match(example, /openMemoryRuntime\(/);
    project = newProject('runtime-only', install);
    writeFileSync(join(project, 'example.mjs'), example);
  });

  it('opens the SQLite file in MEM01_HOME with the offline models and names them, without the SDK or Postgres', () => {
    for (const dep of ['@openai/agents', '@mem01/store-postgres', 'pg']) {
      assert.ok(!existsSync(join(project, 'node_modules', dep)), `${dep} is not installed`);
    }
    const home = join(work, 'runtime-home');
    const r = spawn(process.execPath, ['example.mjs'], { cwd: project, env: userEnv({ MEM01_HOME: home }) });
    assert.equal(r.status, 0, r.stderr);
    const line = `sqlite ${join(home, 'memory.db')} (extractor local-rules, embedder local:mem01-local-hash-v1-384)`;
    assert.ok(r.stderr.includes(line), r.stderr);
    assert.ok(existsSync(join(home, 'memory.db')), 'the SQLite file is where MEM01_HOME says');
  });

  it('type-checks against the installed package', () => {
    writeFileSync(join(project, 'example.ts'), example);
    typecheck(project, 'example.ts');
  });
});

describe('mem01session installed without the Agents SDK', () => {
  it('loads; the session and helpers work; only createMemoryTools needs the SDK, and says so', () => {
    const project = newProject('session-without-sdk', ['mem01session']);
    assert.ok(!existsSync(join(project, 'node_modules', '@openai', 'agents')), 'the SDK is not installed');
    writeFileSync(join(project, 'without-sdk.mjs'), readFileSync(join(FIXTURES, 'without-sdk.mjs')));
    const r = spawn(process.execPath, ['without-sdk.mjs'], {
      cwd: project,
      env: userEnv({ MEM01_HOME: join(work, 'without-sdk-home') }),
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const out = JSON.parse(r.stdout) as {
      sdkInstalled: boolean;
      exports: string[];
      items: unknown[];
      recalledLisbon: boolean;
      tools: { name: string; code: string; message: string } | string;
    };
    assert.equal(out.sdkInstalled, false);
    assert.deepEqual(out.exports, [
      'memSession',
      'saveTurn',
      'getMemoryContext',
      'createMemoryTools',
      'openMemoryRuntime',
    ]);
    assert.deepEqual(out.items, [{ role: 'user', content: 'I live in Lisbon.' }]);
    assert.equal(out.recalledLisbon, true);
    assert.ok(typeof out.tools === 'object', `createMemoryTools: ${JSON.stringify(out.tools)}`);
    assert.equal(out.tools.name, 'AgentsSdkMissingError');
    assert.equal(out.tools.code, 'agents_sdk_missing');
    assert.ok(out.tools.message.includes('npm i @openai/agents'), out.tools.message);
  });
});

describe("the root README's memSession, installed as the README says", () => {
  let project: string;
  let readme: string;

  before(() => {
    readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const install = npmInstallLine(readme, 'mem01session');
    assert.deepEqual(install, ['mem01session', '@openai/agents']);
    project = newProject('session', install);
    writeFileSync(
      join(project, 'two-conversations.mjs'),
      readFileSync(join(FIXTURES, 'two-conversations.mjs')),
    );
  });

  it('the README snippet type-checks against the installed packages', () => {
    const snippet = codeBlocks(readme, 'ts').find((c) => c.includes('memSession('));
    assert.ok(snippet, 'the README has a memSession snippet');
    // The fixture runs this same call with a scripted model; keep the two in step.
    assert.match(
      snippet,
      /new Runner\(\)\.run\(agent, '[^']+', \{ session, \.\.\.session\.runConfig\(\) \}\)/,
    );
    writeFileSync(join(project, 'readme-snippet.ts'), snippet);
    typecheck(project, 'readme-snippet.ts');
  });

  it("the session README's offline example runs as written: the second conversation recalls the first", () => {
    const session = readFileSync(join(ROOT, 'packages/session/README.md'), 'utf8');
    const snippet = codeBlocks(session, 'ts').find((c) => c.includes('ScriptedModel'));
    assert.ok(snippet, 'the session README has an offline ScriptedModel example');
    writeFileSync(join(project, 'offline-example.mts'), snippet);
    const r = spawn(process.execPath, ['offline-example.mts'], {
      cwd: project,
      env: userEnv({ MEM01_HOME: join(work, 'offline-example-home') }, process.execPath),
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /Lisbon/);
  });

  it('SQLite (the default): a fact told in the first conversation reaches the model in the second', () => {
    const home = join(work, 'mem01-home');
    const result = conversations(process.execPath, project, 'user-sqlite', { MEM01_HOME: home });
    assertRecalled(result);
    assert.ok(existsSync(join(home, 'memory.db')), 'the SQLite file is where MEM01_HOME says');
  });

  it('Postgres through DATABASE_URL, after `npm i @mem01/store-postgres`', async () => {
    const install = npmInstallLine(readme, '@mem01/store-postgres');
    assert.deepEqual(install, ['@mem01/store-postgres']);
    addDependencies(project, install);
    const url = await freshDatabase();
    const home = join(work, 'unused-home');
    assertRecalled(
      conversations(process.execPath, project, 'user-pg', { DATABASE_URL: url, MEM01_HOME: home }),
    );
    assert.ok(!existsSync(home), 'no SQLite file was made');
    assert.deepEqual(await activeStatements(url, 'user-pg'), ['The user lives in Lisbon.']);
  });

  it('Postgres with the OpenAI extractor and embedder (a local fake OpenAI server)', async () => {
    // Its own database: the OpenAI embedder's dimensions differ from the local one's.
    const openaiUrl = await freshDatabase();
    const result = conversations(process.execPath, project, 'user-openai', { DATABASE_URL: openaiUrl }, [
      '--fake-openai',
    ]);
    assertRecalled(result);
    assert.ok(result.openaiRequests?.includes('responses') && result.openaiRequests.includes('embeddings'));
  });

  it('a memory store passed in works, and no SQLite file is made', () => {
    addDependencies(project, ['@mem01/store-memory']);
    const home = join(work, 'home-memory');
    assertRecalled(
      conversations(process.execPath, project, 'user-memory', { MEM01_HOME: home }, ['--memory-store']),
    );
    assert.ok(!existsSync(home), 'no SQLite file was made');
  });

  it('on Node.js 20 (below its engines, installed anyway): the default SQLite store fails at first use with the clear error', (t) => {
    const node = requireOldNode(t);
    if (!node) return;
    const home = join(work, 'home-20');
    const r = spawn(node, ['two-conversations.mjs', 'user-sqlite-20'], {
      cwd: project,
      env: userEnv({ MEM01_HOME: home }),
    });
    assert.equal(r.status, 1, r.stderr);
    const { error } = JSON.parse(r.stdout) as { error: { name: string; code: string; message: string } };
    assert.equal(error.name, 'UnsupportedRuntimeError');
    assert.equal(error.code, 'unsupported_runtime');
    assert.ok(error.message.includes('needs Node.js >= 22.13'), error.message);
    assert.ok(error.message.includes('@mem01/store-memory or @mem01/store-postgres'), error.message);
    assert.ok(error.message.includes('set DATABASE_URL'), error.message);
    assert.ok(!existsSync(join(home, 'memory.db')), 'nothing was created');
  });

  it("require('mem01session') says to use import", () => {
    const r = spawn(process.execPath, ['-e', "require('mem01session')"], { cwd: project, env: userEnv() });
    assert.notEqual(r.status, 0);
    assert.ok(r.stderr.includes('mem01session is ESM-only'), r.stderr);
  });
});

describe('the demo, installed from its package (`npx mem01-demo`)', () => {
  let project: string;

  before(() => {
    project = newProject('demo', ['mem01-demo']);
  });

  it('runs offline as the README says, with its own fixture, and prints the results as JSON', () => {
    // `npx mem01-demo` in a project that has it installed runs the installed bin, as after a release with `npx -y`.
    const r = spawn('npx', ['--no-install', 'mem01-demo', '--json'], {
      cwd: project,
      env: userEnv({ OPENAI_API_KEY: '', DATABASE_URL: '' }),
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      scaling: { fixture: string; strategies: Record<string, unknown> };
      story: { recalled: string[] }[];
    };
    assert.match(out.scaling.fixture, /conversations\.json$/);
    assert.ok(Object.keys(out.scaling.strategies).length >= 3, r.stdout.slice(0, 400));
    assert.ok(
      out.story.some((step) => step.recalled.some((s) => /San Francisco|SF/.test(s))),
      JSON.stringify(out.story).slice(0, 800),
    );
  });
});

describe('the CLI, installed alone (no Postgres)', () => {
  let project: string;

  before(() => {
    project = newProject('cli', ['@mem01/cli']);
  });

  it('does not install @mem01/store-postgres, pg or kysely', () => {
    for (const dep of ['@mem01/store-postgres', 'pg', 'kysely']) {
      assert.ok(!existsSync(join(project, 'node_modules', dep)), `${dep} is not installed`);
    }
  });

  it('works on a SQLite file', () => {
    const db = join(work, 'cli.db');
    const r = mem01(process.execPath, project, ['migrate', '--db', db]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /at schema version \d+/);
    const users = mem01(process.execPath, project, ['users', '--db', db, '--json']);
    assert.equal(users.status, 0, users.stderr);
  });

  it('says what to install for a postgres:// database, without the password', () => {
    const r = mem01(process.execPath, project, [
      'users',
      '--db',
      'postgres://mem01:s3cr3t-pw@127.0.0.1:5432/test',
    ]);
    assert.equal(r.status, 1);
    assert.ok(r.stderr.startsWith('error [missing_dependency]: '), r.stderr);
    assert.ok(r.stderr.includes('needs @mem01/store-postgres, which is not installed'), r.stderr);
    assert.ok(r.stderr.includes('npm i @mem01/store-postgres'), r.stderr);
    assert.ok(!r.stderr.includes('s3cr3t'), r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line, no stack trace');
  });

  it('on Node.js 20: a SQLite file gives the clear error, exit code 1', (t) => {
    const node = requireOldNode(t);
    if (!node) return;
    const db = join(work, 'cli.db');
    const r = mem01(node, project, ['users', '--db', db]);
    assert.equal(r.status, 1, r.stdout);
    assert.ok(r.stderr.startsWith('error [unsupported_runtime]: '), r.stderr);
    assert.ok(r.stderr.includes('needs Node.js >= 22.13'), r.stderr);
    assert.ok(!r.stderr.includes('ERR_UNKNOWN_BUILTIN_MODULE'), r.stderr);
  });
});

// ------------------------------------------------------------------------------------------------ helpers

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** pnpm as this run was started (`pnpm test:packaging`), else the repository's pinned pnpm through npx. */
function pnpm(): string[] {
  const execpath = npm_execpath;
  if (execpath && /pnpm/.test(execpath) && existsSync(execpath)) {
    return /\.[cm]?js$/.test(execpath) ? [process.execPath, execpath] : [execpath];
  }
  const version = String(readJson(join(ROOT, 'package.json')).packageManager).split('@')[1];
  return ['npx', '-y', `pnpm@${version}`];
}

function bin(name: string): string[] {
  return [join(ROOT, 'node_modules', '.bin', name)];
}

/**
 * The environment of a user's shell: none of pnpm's `npm_*` variables (`npm_config_local_prefix` would make npm
 * install into the workspace), no NODE_PATH into the workspace, no workspace bins on PATH, and `node` first on
 * PATH when given. npm's network settings are kept.
 */
function userEnv(extra: Record<string, string> = {}, node?: string): NodeJS.ProcessEnv {
  const keep = /^npm_config_(registry|cache|cafile|proxy|https_proxy|noproxy|strict_ssl|userconfig)$/i;
  const drop =
    /^(npm_|pnpm_|turbo_)|^(NODE_PATH|NODE_OPTIONS|INIT_CWD|OPENAI_API_KEY|OPENAI_BASE_URL|DATABASE_URL|MEM01_HOME)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (keep.test(k) || !drop.test(k)) env[k] = v;
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p !== '' && !resolve(p).startsWith(`${ROOT}${sep}`) && !p.startsWith('.'));
  env.PATH = [dirname(node ?? process.execPath), ...path].join(delimiter);
  return {
    ...env,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
}

function spawn(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): SpawnSyncReturns<string> {
  const r = spawnSync(file, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 10 * 60_000,
  });
  if (r.error) throw r.error;
  return r;
}

/** Runs a command and fails with its output when it exits non-zero. */
function run(
  command: string | string[],
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): SpawnSyncReturns<string> {
  const [file, ...pre] = typeof command === 'string' ? [command] : command;
  const r = spawn(file!, [...pre, ...args], options);
  if (r.status !== 0) {
    const where = options.cwd ? relative(work, options.cwd) || options.cwd : '';
    assert.fail(
      `${[file, ...pre, ...args].join(' ')} (in ${where}) exited ${r.status}\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r;
}

/** Runs commands a few at a time (they are CPU-bound); fails listing every one that exited non-zero. */
async function runAll(commands: string[][]): Promise<void> {
  const failures: string[] = [];
  const queue = [...commands];
  const worker = async () => {
    for (let command = queue.shift(); command; command = queue.shift()) {
      const [file, ...args] = command;
      try {
        await execFileAsync(file!, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
      } catch (err) {
        const e = err as { code?: unknown; stdout?: string; stderr?: string };
        failures.push(`${command.join(' ')} exited ${String(e.code)}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), 4) }, worker));
  assert.deepEqual(failures, []);
}

function tarList(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function tarRead(tarball: string, file: string): string {
  return execFileSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
}

/** The fenced code blocks of a language in a Markdown text. */
function codeBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** The packages of the README's first `npm i …` line that installs `name`. */
function npmInstallLine(markdown: string, name: string): string[] {
  for (const block of codeBlocks(markdown, 'sh')) {
    for (const line of block.split('\n')) {
      const words = line.replace(/#.*$/, '').trim().split(/\s+/);
      if (words[0] === 'npm' && (words[1] === 'i' || words[1] === 'install') && words.includes(name)) {
        return words.slice(2).filter((w) => !w.startsWith('-'));
      }
    }
  }
  assert.fail(`no \`npm i … ${name}\` line in the README`);
}

function tarballOf(name: string): string {
  const pkg = packages.find((p) => p.name === name);
  assert.ok(pkg, `${name} is a public package of this repository`);
  return `file:${pkg.tarball}`;
}

/**
 * The versions third-party packages get when a README names them: the ones the workspace tests with (a user gets
 * the newest; the test must not change under us). Everything else resolves from the registry as for a user.
 */
function pinned(name: string): string {
  for (const dir of packages.map((p) => p.dir)) {
    const json = readJson(join(ROOT, dir, 'package.json'));
    const v = (json.devDependencies as Record<string, string> | undefined)?.[name];
    if (v) return v;
  }
  assert.fail(`no workspace package pins ${name}`);
}

/**
 * A project in the temporary folder whose package.json depends on `names` and nothing else. Every mem01 package
 * (also when only a dependency pulls it in) resolves to its tarball through `overrides`: they are not on the
 * registry, and the test must install what this checkout packed.
 */
function newProject(label: string, names: string[]): string {
  const dir = join(work, label);
  mkdirSync(dir);
  const overrides = Object.fromEntries(packages.map((p) => [p.name, `file:${p.tarball}`]));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: `mem01-packaging-${label}`, private: true, type: 'module', overrides }, null, 2)}\n`,
  );
  addDependencies(dir, names);
  return dir;
}

function addDependencies(dir: string, names: string[]): void {
  const json = readJson(join(dir, 'package.json'));
  const deps = { ...((json.dependencies ?? {}) as Record<string, string>) };
  for (const name of names)
    deps[name] = packages.some((p) => p.name === name) ? tarballOf(name) : pinned(name);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ ...json, dependencies: deps }, null, 2)}\n`);
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd: dir,
    env: userEnv(),
  });
}

/** `tsc --noEmit` with a user's strict settings, on the repository's TypeScript. */
function typecheck(dir: string, file: string): void {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2023',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: [file],
    }),
  );
  const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, env: userEnv() });
}

function assertSanFrancisco(out: string): void {
  assert.match(out, /<mem01-memory trust="untrusted">/);
  assert.match(out, /The user lives in San Francisco\./);
  assert.doesNotMatch(out, /NYC|New York/);
}

interface Conversations {
  readonly answers?: string[];
  readonly inputs?: unknown[][];
  readonly openaiRequests?: string[];
  readonly error?: { name: string; code: string; message: string };
}

function conversations(
  node: string,
  project: string,
  userId: string,
  env: Record<string, string>,
  args: string[] = [],
): Conversations {
  const r = spawn(node, ['two-conversations.mjs', userId, ...args], {
    cwd: project,
    env: userEnv(env, node),
  });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout) as Conversations;
}

/** The text of a model input item (string content or text parts). */
function itemText(item: unknown): string {
  const content = (item as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((p) => String((p as { text?: unknown }).text ?? '')).join('');
  return '';
}

/** What the model received: nothing recalled in the first conversation, the fact in the second. */
function assertRecalled(result: Conversations): void {
  assert.equal(result.error, undefined, JSON.stringify(result.error));
  const [first, second] = result.inputs ?? [];
  assert.ok(first && second, 'two model calls');
  const memory = (input: unknown[]) => input.map(itemText).filter((t) => t.startsWith('<mem01-memory'));
  const user = (input: unknown[]) => input.map(itemText).filter((t) => !t.startsWith('<mem01-memory'));
  assert.equal(memory(first).length, 1, 'one memory block in the first call');
  assert.doesNotMatch(memory(first)[0]!, /Lisbon/);
  assert.deepEqual(user(first), ['I live in Lisbon.']);
  assert.equal(memory(second).length, 1, 'one memory block in the second call');
  assert.match(
    memory(second)[0]!,
    /^\[([a-z]+|user said) \d{4}-\d{2}-\d{2}\] (The user lives in|(The user said: )?I live in) Lisbon\.$/m,
  );
  // A new conversation: the first one's turns are not in its history, so only memory can have told the model.
  assert.deepEqual(user(second), ['Where do I live?']);
  assert.deepEqual(result.answers, ['Noted.', 'You live in Lisbon.']);
}

function mem01(node: string, project: string, args: string[]): SpawnSyncReturns<string> {
  return spawn(join(project, 'node_modules', '.bin', 'mem01'), args, {
    cwd: project,
    env: userEnv({}, node),
  });
}

interface PgClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** A client from the workspace's `pg` (a dependency of store-postgres). */
async function pgClient(url: string): Promise<PgClient> {
  const pg = createRequire(join(ROOT, 'packages/store-postgres/package.json'))('pg') as {
    Client: new (options: { connectionString: string }) => PgClient & { connect(): Promise<void> };
  };
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** A new, empty database on the test server (dropped after the run); its URL. */
async function freshDatabase(): Promise<string> {
  const name = `mem01_packaging_${process.pid}_${databases.length}`;
  const client = await pgClient(PG_URL);
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  databases.push(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function activeStatements(url: string, userId: string): Promise<string[]> {
  const client = await pgClient(url);
  try {
    const { rows } = await client.query(
      // The beliefs drawn from what was said (the turns themselves are kept beside them, as episodes and replies).
      `SELECT statement FROM mem01.beliefs WHERE user_id = $1 AND status = 'active' AND kind NOT IN ('episode', 'reply')
        ORDER BY statement`,
      [userId],
    );
    return rows.map((r) => String(r.statement));
  } finally {
    await client.end();
  }
}

/** The Node.js 20 to run on, or a visible skip saying why there is none. */
function requireOldNode(t: TestContext): string | undefined {
  if (oldNode.path) return oldNode.path;
  t.skip(oldNode.missing);
  return undefined;
}
