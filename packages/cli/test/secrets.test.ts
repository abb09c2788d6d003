/**
 * What the CLI prints on failure carries no secret, in any form: a credential pasted into an option that commander
 * echoes back, and a Postgres URL whose password the real store cannot connect with.
 */
import { CREDENTIAL_FORMS, leakedSecret } from '@mem01/engine/testing';
import { embedded, partsOf } from '@mem01/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runInProcess } from './helpers.js';

describe('mem01 prints no secret, in any form', () => {
  it('an option value commander echoes in its usage error', async () => {
    for (const form of CREDENTIAL_FORMS) {
      for (const { parts, text } of fc.sample(embedded(form), 2)) {
        for (const option of ['--store', '--embedder']) {
          const r = await runInProcess([option, text, 'users']);
          expect(r.code, form.id).toBe(2);
          expect(r.stderr).toMatch(/argument [\s\S]* is invalid/);
          expect(leakedSecret(r.stderr + r.stdout, parts), `${form.id}: ${r.stderr}`).toBeNull();
        }
      }
    }
  });

  it('a Postgres URL with a password the real store cannot connect with, from --db and DATABASE_URL', async () => {
    const [form] = CREDENTIAL_FORMS.filter((f) => f.id === 'url-password');
    if (!form) throw new Error('no url-password form');
    for (const [password] of fc.sample(partsOf(form), 1)) {
      // Nothing listens on port 1: the store's connection fails and the CLI reports it.
      const url = `postgres://app:${password}@127.0.0.1:1/test`;
      for (const r of [
        await runInProcess(['--db', url, 'users']),
        await runInProcess(['users'], { env: { DATABASE_URL: url } }),
      ]) {
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/^error/m);
        expect(leakedSecret(r.stderr + r.stdout, [password ?? '']), r.stderr).toBeNull();
      }
    }
  });
});
