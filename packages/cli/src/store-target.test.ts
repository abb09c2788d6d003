import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { describeTarget, redactUrl, resolveStoreTarget } from './store-target.js';

// The rule itself is @mem01/runtime's (tested there); these check that the flags map onto it.
describe('resolveStoreTarget', () => {
  const home = { MEM01_HOME: '/tmp/mem01-home' };
  it('defaults to the SQLite default file ($MEM01_HOME/memory.db)', () => {
    expect(resolveStoreTarget({}, home)).toEqual({
      kind: 'sqlite',
      path: join('/tmp/mem01-home', 'memory.db'),
    });
  });
  it('takes DATABASE_URL when no flag is given', () => {
    expect(resolveStoreTarget({}, { DATABASE_URL: 'postgres://u:p@127.0.0.1/test' })).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://u:p@127.0.0.1/test',
      schema: undefined,
    });
  });
  it('--db wins over DATABASE_URL, a path meaning SQLite and a URL Postgres; --pg-schema names the schema', () => {
    const env = { DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ db: '/tmp/x.db' }, env)).toEqual({ kind: 'sqlite', path: '/tmp/x.db' });
    expect(resolveStoreTarget({ db: 'postgresql://127.0.0.1/b', pgSchema: 'team_a' }, env)).toEqual({
      kind: 'postgres',
      connectionString: 'postgresql://127.0.0.1/b',
      schema: 'team_a',
    });
  });
  it('--store forces the kind', () => {
    const env = { ...home, DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ store: 'sqlite' }, env)).toEqual({
      kind: 'sqlite',
      path: join('/tmp/mem01-home', 'memory.db'),
    });
    expect(resolveStoreTarget({ store: 'postgres' }, env)).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://127.0.0.1/a',
      schema: undefined,
    });
  });
  it('rejects contradictions and unknown kinds as usage errors naming the flags', () => {
    expect(() => resolveStoreTarget({ store: 'postgres' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'postgres' }, {})).toThrow(
      '--store postgres needs a postgres:// URL in --db or DATABASE_URL',
    );
    expect(() => resolveStoreTarget({ store: 'postgres', db: '/tmp/x.db' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'sqlite', db: 'postgres://h/d' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'mysql' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({}, { DATABASE_URL: 'mysql://h/d' })).toThrow(UsageError);
    expect(() => resolveStoreTarget({ db: ' ' }, {})).toThrow('--db must not be empty');
  });
});

describe('redactUrl', () => {
  it('hides passwords and secret parameters', () => {
    const shown = redactUrl(
      'postgres://alice:s3cr3t-pw@127.0.0.1:5432/test?sslpassword=hunter2&application_name=x',
    );
    expect(shown).not.toContain('s3cr3t-pw');
    expect(shown).not.toContain('hunter2');
    expect(shown).toContain('alice');
    expect(shown).toContain('application_name=x');
    expect(
      describeTarget({ kind: 'postgres', connectionString: 'postgres://a:pw123456@h/d', schema: undefined }),
    ).not.toContain('pw123456');
  });
});
