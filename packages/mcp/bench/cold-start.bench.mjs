/**
 * Cold-start benchmark (issue 25.1): how long a fresh process takes to import each mem01 entry point and to reach
 * its first recall on the offline default (SQLite, @mem01/local), against importing `@openai/agents` alone.
 *
 * Every figure is the wall time of a fresh Node process (this Node, the repository's 24.x), from spawn to the
 * moment it reports, measured here in the parent, so node's own boot is in every figure alike and cancels out of the
 * differences. The runs of one round go in a rotating order, so no kind always runs first or after the same one.
 * Medians over the rounds. Imports dist: run `pnpm build` first (`pnpm bench` does).
 *
 * - SDK import: `await import('@openai/agents')` (the yardstick).
 * - mem01session import: the SDK then mem01session (what an agent program imports); mem01's own import cost is
 *   its median minus the SDK-only median (and, in-process, the time `import('mem01session')` takes after the SDK).
 * - @mem01/mcp, @mem01/cli import: `await import(entry)`.
 * - first recall, mem01session: a Runner run with memSession on the defaults, up to the first model call (memSession
 *   recalls before it; the child checks that the block reached the model).
 * - first recall, MCP: the `mem01-mcp` bin over stdio, from spawn to the answer of `initialize` + `tools/call recall`.
 * - first recall, CLI: `mem01 recall --user … <query>`, from spawn to its exit.
 *
 * The store: 1,000 beliefs of one user (syntheticBeliefs, local embeddings) in the default SQLite file of a fresh
 * MEM01_HOME, copied anew for every run so that no run sees another's writes.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticBeliefs } from '@mem01/engine/testing';
import { createLocalEmbedder } from '@mem01/local/embedder';
import { defaultSqlitePath } from '@mem01/runtime';
import { openSqliteStore } from '@mem01/store-sqlite';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BELIEFS = Number(process.env.BENCH_BELIEFS ?? 1000);
const USER = 'bench-user';
const QUERY = 'What did I note about topic 42?';
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const child = (name) => join(here, 'cold-start', name);
const mcpBin = resolve(here, '../dist/bin.js');
const cliBin = resolve(here, '../node_modules/@mem01/cli/dist/bin.js');
const work = mkdtempSync(join(tmpdir(), 'mem01-cold-start-'));
const template = join(work, 'template');
const quiet = { info() {}, warn() {} };

const round = (x) => Math.round(x * 10) / 10;
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stats = (xs) => ({
  median: round(median(xs)),
  min: round(Math.min(...xs)),
  max: round(Math.max(...xs)),
  n: xs.length,
});

// The seeded store, once; each run gets a copy.
{
  const embedder = createLocalEmbedder();
  const path = defaultSqlitePath({ MEM01_HOME: template });
  mkdirSync(dirname(path), { recursive: true });
  const store = openSqliteStore({ path, dimensions: embedder.dimensions, logger: quiet });
  const beliefs = syntheticBeliefs(BELIEFS, { userId: USER, sessions: 100, stepMs: 60_000 });
  const vectors = await embedder.embed(beliefs.map((b) => b.statement));
  await store.importBeliefs(beliefs.map((belief, i) => ({ belief, embedding: vectors[i] ?? null })));
  await store.close();
}
let runs = 0;
function freshHome() {
  const home = join(work, `run-${runs++}`);
  cpSync(template, home, { recursive: true });
  return home;
}

/**
 * Spawns `args` on this Node and resolves with the ms from spawn to the first stdout line starting with `ready`
 * (or to exit when `untilExit`), after the process has exited (so runs never overlap). `send`: lines for stdin.
 */
function timeProcess(args, { home, untilExit = false, send = null, readyOn = /^ready\b/ } = {}) {
  return new Promise((resolvePromise, reject) => {
    const env = { PATH: process.env.PATH ?? '', HOME: home, MEM01_HOME: home, BENCH_USER: USER };
    const start = performance.now();
    const proc = spawn(process.execPath, args, { cwd: resolve(here, '..'), env, stdio: 'pipe' });
    let readyMs = null;
    let line = '';
    let detail = null;
    let stderr = '';
    proc.stderr.on('data', (d) => {
      stderr += d;
    });
    proc.stdout.on('data', (d) => {
      if (readyMs !== null) return;
      line += d;
      for (const l of line.split('\n').slice(0, -1)) {
        if (readyMs === null && readyOn.test(l)) {
          readyMs = performance.now() - start;
          const json = l.replace(readyOn, '').trim();
          detail = json.startsWith('{') ? JSON.parse(json) : json || null;
          if (send) proc.stdin.end();
        }
      }
    });
    if (send) proc.stdin.write(send.map((m) => `${JSON.stringify(m)}\n`).join(''));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const exitMs = performance.now() - start;
      if (code !== 0 && !(send && readyMs !== null)) {
        reject(new Error(`${args.join(' ')} exited with ${code}: ${stderr.slice(0, 2000)}`));
        return;
      }
      const ms = untilExit ? exitMs : readyMs;
      if (ms === null) reject(new Error(`${args.join(' ')} never reported: ${stderr.slice(0, 2000)}`));
      else resolvePromise({ ms, detail });
    });
  });
}

const mcpMessages = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'cold-start', version: '1' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'search_memory', arguments: { query: QUERY } },
  },
];

const kinds = {
  sdkImport: (home) => timeProcess([child('sdk-import.mjs')], { home }),
  sessionImport: (home) => timeProcess([child('import-entry.mjs'), 'mem01session'], { home }),
  mcpImport: (home) => timeProcess([child('import-entry.mjs'), '@mem01/mcp'], { home }),
  cliImport: (home) => timeProcess([child('import-entry.mjs'), '@mem01/cli'], { home }),
  sessionFirstRecall: (home) => timeProcess([child('session-recall.mjs')], { home }),
  mcpFirstRecall: (home) =>
    timeProcess([mcpBin, '--user', USER], { home, send: mcpMessages, readyOn: /^(?=.*"id":2)/ }),
  cliFirstRecall: (home) => timeProcess([cliBin, 'recall', '--user', USER, QUERY], { home, untilExit: true }),
};
const names = Object.keys(kinds);
const samples = Object.fromEntries(names.map((n) => [n, []]));
const details = Object.fromEntries(names.map((n) => [n, []]));
const load = [];

// One warm-up round (file-system caches), not recorded.
for (const name of names) await kinds[name](freshHome());
for (let r = 0; r < ROUNDS; r++) {
  load.push(loadavg()[0]);
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + r) % names.length];
    const home = freshHome();
    const { ms, detail } = await kinds[name](home);
    samples[name].push(ms);
    details[name].push(detail);
    rmSync(home, { recursive: true, force: true });
  }
}
rmSync(work, { recursive: true, force: true });

const recalledEvery = (name, test) => details[name].every(test);
if (!recalledEvery('sessionFirstRecall', (d) => d?.recalled === true))
  throw new Error('memSession did not recall the seeded belief into the first model call');
if (!recalledEvery('mcpFirstRecall', (d) => JSON.stringify(d).includes('topic 42')))
  throw new Error('the MCP recall did not return the seeded belief');

const m = Object.fromEntries(names.map((n) => [n, stats(samples[n])]));
const sdk = m.sdkImport.median;
const inProcessOwn = stats(details.sessionImport.map((d) => d.ownMs));
// CPU ms each importing child spent up to its report: less sensitive to other load on the machine than wall time.
const cpu = Object.fromEntries(
  ['sdkImport', 'sessionImport', 'mcpImport', 'cliImport', 'sessionFirstRecall']
    .map((n) => [n, details[n].map((d) => d?.cpuMs).filter((x) => typeof x === 'number')])
    .filter(([, xs]) => xs.length > 0)
    .map(([n, xs]) => [n, stats(xs)]),
);
const entry = (importKind, recallKind, ownImport) => ({
  importMs: m[importKind],
  importRatioToSdk: ratio(m[importKind].median, sdk),
  ownImportMs: round(ownImport),
  firstRecallMs: m[recallKind],
  firstRecallRatioToSdk: ratio(m[recallKind].median, sdk),
  firstRecallOverSdkMs: round(m[recallKind].median - sdk),
  meets: {
    ownImportWithin150Ms: ownImport <= 150,
    firstRecallWithinSdkPlus300Ms: m[recallKind].median <= sdk + 300,
  },
});
const results = {
  package: '@mem01/mcp',
  benchmark: 'cold start: import and first recall per entry point against importing @openai/agents alone',
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadAverage1m: { min: round(Math.min(...load)), max: round(Math.max(...load)) },
  rounds: ROUNDS,
  beliefs: BELIEFS,
  store: 'sqlite (default file under MEM01_HOME, local 384-d embeddings), offline default',
  method:
    'wall ms from spawn of a fresh node process to its report (CLI: to its exit), medians over rounds in rotating order',
  sdkImportMs: m.sdkImport,
  cpuMsToReport: cpu,
  entryPoints: {
    mem01session: {
      ...entry('sessionImport', 'sessionFirstRecall', m.sessionImport.median - sdk),
      ownImportInProcessMs: inProcessOwn,
    },
    '@mem01/mcp': entry('mcpImport', 'mcpFirstRecall', m.mcpImport.median - sdk),
    '@mem01/cli': entry('cliImport', 'cliFirstRecall', m.cliImport.median - sdk),
  },
  targets:
    "own import <= 150 ms on top of the SDK's import (for @mem01/mcp and the CLI, which do not load the SDK: their import minus the SDK's); first recall <= SDK import + 300 ms",
};

console.log(
  `cold start (${ROUNDS} rounds, ${BELIEFS} beliefs, load ${results.loadAverage1m.min}-${results.loadAverage1m.max}): SDK import median ${sdk} ms`,
);
for (const [name, e] of Object.entries(results.entryPoints)) {
  console.log(
    `  ${name.padEnd(13)} import ${e.importMs.median} ms (x${e.importRatioToSdk}, own ${e.ownImportMs} ms)  first recall ${e.firstRecallMs.median} ms (x${e.firstRecallRatioToSdk}, SDK + ${e.firstRecallOverSdkMs} ms)`,
  );
}
console.log(`  mem01session import after the SDK, in-process: median ${inProcessOwn.median} ms`);
const out = join(root, 'bench/results/cold-start.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${out}`);
