import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Mem01Error } from '@mem01/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOptionalPeer, loadPostgresStore, MissingDependencyError } from './peers.js';

const dir = mkdtempSync(join(tmpdir(), 'mem01-runtime-peer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A module that imports a package nobody installed (as @mem01/store-postgres does `pg`, when pg is missing). */
function peerWithMissingDependency(): string {
  const file = join(dir, 'peer-without-its-dependency.mjs');
  writeFileSync(file, "import 'mem01-absent-dependency';\nexport const loaded = true;\n");
  return pathToFileURL(file).href;
}

const context = { neededFor: 'a postgres:// database', instead: 'or use a SQLite file' };

describe('loadOptionalPeer: one check of "is it installed?", naming what is missing', () => {
  it('a peer that is installed loads', async () => {
    const pg = await loadPostgresStore();
    expect(typeof pg.openPostgresStore).toBe('function');
    expect(typeof pg.POSTGRES_SCHEMA_VERSION).toBe('number');
  });

  it('a missing peer: MissingDependencyError (missing_dependency) naming the peer and how to install it', async () => {
    const err = await loadOptionalPeer('@mem01/not-installed-anywhere', context).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingDependencyError);
    expect(err).toBeInstanceOf(Mem01Error);
    const e = err as MissingDependencyError;
    expect(e.code).toBe('missing_dependency');
    expect(e.module).toBe('@mem01/not-installed-anywhere');
    expect(e.peer).toBe('@mem01/not-installed-anywhere');
    expect(e.message).toBe(
      'a postgres:// database needs @mem01/not-installed-anywhere, which is not installed: run `npm i @mem01/not-installed-anywhere` (or use a SQLite file)',
    );
  });

  it('a peer whose own dependency is missing: names that dependency, not the peer', async () => {
    const peer = peerWithMissingDependency();
    const err = await loadOptionalPeer(peer, { ...context, beside: '@mem01/cli' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingDependencyError);
    const e = err as MissingDependencyError;
    expect(e.module).toBe('mem01-absent-dependency');
    expect(e.peer).toBe(peer);
    expect(e.message).toContain(`needs ${peer}, whose dependency mem01-absent-dependency is not installed`);
    expect(e.message).toContain('install it beside @mem01/cli, e.g. `npm i mem01-absent-dependency`');
    expect(e.message).not.toMatch(new RegExp(`needs ${peer}, which is not installed`));
  });

  it('a peer that fails for another reason: that error, unchanged', async () => {
    const file = join(dir, 'throwing-peer.mjs');
    writeFileSync(file, "throw new TypeError('broken at load');\n");
    const err = await loadOptionalPeer(pathToFileURL(file).href, context).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('broken at load');
  });

  it('under plain Node.js (the built package), the same errors from Node’s own messages', () => {
    const built = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'peers.js');
    expect(existsSync(built), `${built} is built (turbo builds before testing)`).toBe(true);
    const script = `
      import { loadOptionalPeer } from ${JSON.stringify(pathToFileURL(built).href)};
      const out = [];
      for (const spec of ['@mem01/not-installed-anywhere', ${JSON.stringify(peerWithMissingDependency())}]) {
        try { await loadOptionalPeer(spec, { neededFor: 'a postgres:// database' }); out.push(null); }
        catch (e) { out.push({ name: e.name, code: e.code, module: e.module, message: e.message }); }
      }
      console.log(JSON.stringify(out));`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as Array<{ name: string; code: string; module: string; message: string }>;
    expect(out[0]).toMatchObject({
      name: 'MissingDependencyError',
      code: 'missing_dependency',
      module: '@mem01/not-installed-anywhere',
    });
    expect(out[1]).toMatchObject({ name: 'MissingDependencyError', module: 'mem01-absent-dependency' });
    expect(out[1]?.message).toContain('whose dependency mem01-absent-dependency is not installed');
  });
});
