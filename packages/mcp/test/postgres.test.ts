/**
 * The bin on the machine's PostgreSQL server (trust auth, database `test`), in a schema of its own that is dropped
 * afterwards: `--db` and `DATABASE_URL` select it, as for memSession and the CLI, and the URL's password is never
 * printed.
 */
import { dropPgSchema, TEST_PG_URL, uniquePgName } from '@mem01/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, connectStdio, ok, type RecallOut, type RememberOut, tempDir } from './helpers.js';

const BASE = TEST_PG_URL;
const SCHEMA = uniquePgName('mcp');
// Trust auth ignores the password: it is here to show it never reaches the output.
const PASSWORD = 'not-a-real-password-42';
const url = (() => {
  const u = new URL(BASE);
  u.password = PASSWORD;
  return u.toString();
})();

const home = tempDir();

afterAll(async () => {
  await dropPgSchema(SCHEMA);
  home.remove();
});

describe('mem01-mcp on PostgreSQL', () => {
  it('remembers through --db and recalls through DATABASE_URL, printing no password', {
    timeout: 120_000,
  }, async () => {
    const first = await connectStdio(
      ['--user', 'pg-user', '--db', url, '--pg-schema', SCHEMA],
      childEnv(home.path),
    );
    try {
      const r = await ok<RememberOut>(first.client, 'add_memory', { text: 'I live in Lisbon.', wait: true });
      expect(r.extracted?.map((b) => b.statement)).toEqual(['The user lives in Lisbon.']);
      expect(first.stderr()).toContain(`from postgres postgres://postgres:***@`);
      expect(first.stderr()).not.toContain(PASSWORD);
    } finally {
      await first.close();
    }
    const second = await connectStdio(
      ['--user', 'pg-user', '--pg-schema', SCHEMA],
      childEnv(home.path, { DATABASE_URL: url }),
    );
    try {
      const recalled = await ok<RecallOut>(second.client, 'search_memory', { query: 'Where do I live?' });
      expect(recalled.block).toMatch(/\] The user lives in Lisbon\.|\[user said [\d-]+\] I live in Lisbon\./);
      expect(second.stderr()).not.toContain(PASSWORD);
    } finally {
      await second.close();
    }
  });
});
