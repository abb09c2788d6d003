/**
 * The built `mem01-mcp --http`: the MCP SDK's `Client` over Streamable HTTP with the bearer token; raw requests
 * without the token and with a foreign Host header.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileUri } from '../src/resources.js';
import { childEnv, connectHttp, type HttpChild, ok, startHttpChild, tempDir } from './helpers.js';
import { rememberThenRecallAcrossConnections, USER } from './scenario.js';

let home: ReturnType<typeof tempDir>;
let server: HttpChild;

beforeAll(async () => {
  home = tempDir();
  server = await startHttpChild(['--user', USER], childEnv(home.path));
});

afterAll(async () => {
  const code = await server?.stop();
  expect(code).toBe(0);
  home.remove();
});

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw POST to /mcp with the headers given (node:http, so the Host header can be anything). */
function post(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE);
  });
}

describe('mem01-mcp over Streamable HTTP', () => {
  it('binds 127.0.0.1 and prints a generated token once, on stdout only', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.stdout().split(server.token).length - 1).toBe(1);
    expect(server.stderr()).not.toContain(server.token);
  });

  it('remembers on one connection and recalls on the next; corrects, forgets, serves resources and the prompt', {
    timeout: 120_000,
  }, async () => {
    await rememberThenRecallAcrossConnections(() => connectHttp(server.url, server.token), profileUri(USER));
  });

  it('answers 401 without the token or with a wrong one', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    const wrong = await post({ authorization: `Bearer ${server.token.slice(0, -2)}xx` });
    expect(wrong.status).toBe(401);
    const basic = await post({ authorization: `Basic ${server.token}` });
    expect(basic.status).toBe(401);
    // The server keeps serving.
    const conn = await connectHttp(server.url, server.token);
    try {
      expect((await ok<{ userId: string }>(conn.client, 'search_memory', { query: '' })).userId).toBe(USER);
    } finally {
      await conn.close();
    }
  });

  it('refuses a foreign Host header (DNS rebinding), even with the token', async () => {
    const port = new URL(server.url).port;
    const evil = await post({ host: `attacker.example:${port}`, authorization: `Bearer ${server.token}` });
    expect(evil.status).toBe(403);
    expect(evil.body).not.toContain('serverInfo');
    const local = await post({ host: `localhost:${port}`, authorization: `Bearer ${server.token}` });
    expect(local.status).toBe(200);
  });

  it('uses MEM01_MCP_TOKEN when given and then prints no token', { timeout: 60_000 }, async () => {
    const token = 'a-given-token-of-32-characters!!';
    const other = tempDir();
    const child = await startHttpChild(['--user', 'bob'], childEnv(other.path, { MEM01_MCP_TOKEN: token }));
    try {
      expect(child.stdout()).not.toContain('token:');
      expect(child.stdout()).not.toContain(token);
      const conn = await connectHttp(child.url, token);
      try {
        expect((await ok<{ userId: string }>(conn.client, 'list_memories', {})).userId).toBe('bob');
      } finally {
        await conn.close();
      }
    } finally {
      expect(await child.stop()).toBe(0);
      other.remove();
    }
  });
});
