import { join } from 'node:path';
import { ConfigError } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { describeStoreTarget, resolveStoreTarget } from './store-target.js';

const HOME = { MEM01_HOME: '/tmp/mem01-home' };
const DEFAULT_FILE = join('/tmp/mem01-home', 'memory.db');

describe('resolveStoreTarget: the one rule for which database memory lives in', () => {
  it('without DATABASE_URL or options: the SQLite file in $MEM01_HOME', () => {
    expect(resolveStoreTarget({}, HOME)).toEqual({ kind: 'sqlite', path: DEFAULT_FILE });
    expect(resolveStoreTarget({}, { ...HOME, DATABASE_URL: '  ' })).toEqual({
      kind: 'sqlite',
      path: DEFAULT_FILE,
    });
  });

  it('DATABASE_URL selects Postgres; pgSchema names the schema', () => {
    const env = { ...HOME, DATABASE_URL: 'postgresql://u:p@127.0.0.1/test' };
    expect(resolveStoreTarget({}, env)).toEqual({
      kind: 'postgres',
      connectionString: 'postgresql://u:p@127.0.0.1/test',
      schema: undefined,
    });
    expect(resolveStoreTarget({ pgSchema: 'team_a' }, env)).toMatchObject({ schema: 'team_a' });
  });

  it('a DATABASE_URL that is not a postgres:// URL is refused, not tried as a Postgres server', () => {
    for (const url of ['mysql://h/d', 'file:./dev.db', '/var/data/memory.db']) {
      const err = (() => {
        try {
          resolveStoreTarget({}, { DATABASE_URL: url });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
    }
  });

  it('db wins over DATABASE_URL: a path is a SQLite file, a URL is Postgres', () => {
    const env = { ...HOME, DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ db: ' /tmp/x.db ' }, env)).toEqual({ kind: 'sqlite', path: '/tmp/x.db' });
    expect(resolveStoreTarget({ db: 'POSTGRES://127.0.0.1/b' }, env)).toMatchObject({
      kind: 'postgres',
      connectionString: 'POSTGRES://127.0.0.1/b',
    });
  });

  it('storeKind forces the kind: sqlite ignores DATABASE_URL, postgres needs a URL', () => {
    const env = { ...HOME, DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ storeKind: 'sqlite' }, env)).toEqual({ kind: 'sqlite', path: DEFAULT_FILE });
    expect(resolveStoreTarget({ storeKind: 'postgres' }, env)).toMatchObject({
      connectionString: 'postgres://127.0.0.1/a',
    });
    expect(() => resolveStoreTarget({ storeKind: 'postgres' }, HOME)).toThrow(
      'storeKind postgres needs a postgres:// URL in db or DATABASE_URL',
    );
    expect(() => resolveStoreTarget({ storeKind: 'postgres', db: '/tmp/x.db' }, HOME)).toThrow(ConfigError);
    expect(() => resolveStoreTarget({ storeKind: 'sqlite', db: 'postgres://h/d' }, HOME)).toThrow(
      ConfigError,
    );
  });

  it('refuses malformed selections with a ConfigError', () => {
    expect(() => resolveStoreTarget({ db: '' }, HOME)).toThrow('db must not be empty');
    expect(() => resolveStoreTarget({ storeKind: 'mysql' as 'sqlite' }, HOME)).toThrow(ConfigError);
    expect(() => resolveStoreTarget({ db: 42 as unknown as string }, HOME)).toThrow(ConfigError);
  });
});

describe('describeStoreTarget', () => {
  it('names the file, or the server without its password or secret parameters', () => {
    expect(describeStoreTarget({ kind: 'sqlite', path: '/tmp/x.db' })).toBe('sqlite /tmp/x.db');
    const shown = describeStoreTarget({
      kind: 'postgres',
      connectionString: 'postgres://alice:s3cr3t-pw@127.0.0.1:5432/test?sslpassword=hunter2',
      schema: 'team_a',
    });
    expect(shown).toMatch(/^postgres postgres:\/\/alice:.*@127\.0\.0\.1:5432\/test.* \(schema team_a\)$/);
    expect(shown).not.toContain('s3cr3t-pw');
    expect(shown).not.toContain('hunter2');
  });
});
