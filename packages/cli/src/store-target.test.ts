import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { describeTarget, redactUrl, resolveStoreTarget } from './store-target.js';

describe('resolveStoreTarget', () => {
  it('defaults to the SQLite default file', () => {
    expect(resolveStoreTarget({}, {})).toEqual({ kind: 'sqlite', path: undefined });
  });
  it('takes DATABASE_URL when no flag is given', () => {
    expect(resolveStoreTarget({}, { DATABASE_URL: 'postgres://u:p@127.0.0.1/test' })).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://u:p@127.0.0.1/test',
    });
  });
  it('--db wins over DATABASE_URL, a path meaning SQLite and a URL Postgres', () => {
    const env = { DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ db: '/tmp/x.db' }, env)).toEqual({ kind: 'sqlite', path: '/tmp/x.db' });
    expect(resolveStoreTarget({ db: 'postgresql://127.0.0.1/b' }, env)).toEqual({
      kind: 'postgres',
      connectionString: 'postgresql://127.0.0.1/b',
    });
  });
  it('--store forces the kind', () => {
    const env = { DATABASE_URL: 'postgres://127.0.0.1/a' };
    expect(resolveStoreTarget({ store: 'sqlite' }, env)).toEqual({ kind: 'sqlite', path: undefined });
    expect(resolveStoreTarget({ store: 'postgres' }, env)).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://127.0.0.1/a',
    });
  });
  it('rejects contradictions and unknown kinds as usage errors', () => {
    expect(() => resolveStoreTarget({ store: 'postgres' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'postgres', db: '/tmp/x.db' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'sqlite', db: 'postgres://h/d' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({ store: 'mysql' }, {})).toThrow(UsageError);
    expect(() => resolveStoreTarget({}, { DATABASE_URL: 'mysql://h/d' })).toThrow(UsageError);
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
      describeTarget({ kind: 'postgres', connectionString: 'postgres://a:pw123456@h/d' }, ''),
    ).not.toContain('pw123456');
  });
});
