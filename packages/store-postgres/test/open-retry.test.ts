/**
 * Opening while the server restarts: its first connections are dropped (as a server shutting down or starting up
 * does). The store retries with a growing pause, within `openRetryMs`, and opens once the server answers; a
 * permanent failure still fails, with the password kept out of the message.
 */
import { createServer, type Server, Socket } from 'node:net';
import { StoreError } from '@mem01/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/index.js';
import { dropSchema, REAL_URL, uniqueSchema } from './helpers.js';

/** A TCP proxy to the real server that drops the first `drops` connections at once. */
async function flakyProxy(
  drops: number,
): Promise<{ url: string; dropped: () => number; close: () => Promise<void> }> {
  const target = new URL(REAL_URL);
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (dropped < drops) {
      dropped++;
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.connect(Number(target.port || 5432), target.hostname, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(REAL_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('opening while the server restarts', () => {
  it('retries dropped connections and opens once the server answers', async () => {
    const proxy = await flakyProxy(3);
    cleanups.push(proxy.close);
    const schema = uniqueSchema('reopen');
    cleanups.push(() => dropSchema(REAL_URL, schema));
    const warnings: string[] = [];
    const store = await openPostgresStore({
      connectionString: proxy.url,
      schema,
      dimensions: 4,
      vector: 'exact',
      logger: { info: () => {}, warn: (m) => warnings.push(m) },
    });
    cleanups.push(() => store.close());
    expect(proxy.dropped()).toBe(3);
    expect(warnings.filter((w) => /cannot open yet/.test(w)).length).toBeGreaterThan(0);
    expect((await store.info()).schemaVersion).toBeGreaterThan(0);
  }, 60_000);

  it('gives up after openRetryMs with a clear error, and never prints the password', async () => {
    const proxy = await flakyProxy(Number.POSITIVE_INFINITY);
    cleanups.push(proxy.close);
    const url = new URL(proxy.url);
    url.username = 'postgres';
    url.password = 'hunter2-secret';
    const err = await openPostgresStore({
      connectionString: url.toString(),
      schema: uniqueSchema('never'),
      openRetryMs: 300,
      logger: { info: () => {}, warn: () => {} },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(proxy.dropped()).toBeGreaterThan(1);
    expect(String((err as Error).message)).not.toContain('hunter2');
  }, 60_000);

  it('does not retry what waiting cannot fix (a bad option fails at once)', async () => {
    const proxy = await flakyProxy(0);
    cleanups.push(proxy.close);
    await expect(
      openPostgresStore({ connectionString: proxy.url, schema: uniqueSchema('nomig'), migrate: false }),
    ).rejects.toThrow(/not migrated/);
  });
});
