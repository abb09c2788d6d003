/**
 * The front door of the built `mem01-mcp --http`, through real HTTP on 127.0.0.1: authentication before any
 * parsing, generic error bodies whose id is in the server's log, `Origin` checks, the body size limit and
 * per-user tokens (`--token-file`), as a client (raw `node:http`, or the MCP SDK's `Client`) meets them.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { nodeBinary } from '@mem01/test-kit';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { profileUri } from '../src/resources.js';
import {
  BIN,
  call,
  childEnv,
  connectHttp,
  type HttpChild,
  ok,
  startHttpChild,
  tempDir,
  textOf,
} from './helpers.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

interface Reply {
  readonly status: number;
  /** The server sent "100 Continue" (invited the body). */
  readonly continued: boolean;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

interface RawRequest {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** The body, sent whole. */
  readonly body?: string;
  /** Instead of `body`: declare this Content-Length, send only `sendBytes` of it and wait for the answer. */
  readonly declared?: { readonly length: number; readonly sendBytes: number };
}

/** One request to the server's /mcp with node:http (any header, any body); resolves with the full answer. */
function send(url: string, r: RawRequest): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: r.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(r.declared ? { 'content-length': String(r.declared.length) } : {}),
          ...r.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, continued, headers: res.headers, body }));
      },
    );
    req.on('continue', () => {
      continued = true;
      if (r.declared) req.write('x'.repeat(r.declared.sendBytes));
    });
    // The server may close the connection on a refused upload before all of it is written.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    if (r.declared) {
      // Part of the declared body only, and the request left open: an answer can only come from a server that
      // refuses without reading the rest. A client expecting "100 Continue" sends nothing before it.
      if (!/100-continue/i.test(r.headers?.expect ?? '')) req.write('x'.repeat(r.declared.sendBytes));
    } else {
      req.end(r.body ?? JSON.stringify(INITIALIZE));
    }
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The error body every refusal has: a generic JSON-RPC error with an error id, and nothing internal. */
function expectGeneric(reply: Reply): string {
  expect(reply.headers['content-type']).toBe('application/json');
  for (const leak of [
    '    at ',
    '/work/',
    'node_modules',
    '.ts:',
    '.js:',
    'SyntaxError',
    'Error:',
    'stack',
  ]) {
    expect(reply.body).not.toContain(leak);
  }
  const parsed = JSON.parse(reply.body) as {
    jsonrpc: string;
    id: null;
    error: { code: number; message: string; data: { errorId: string } };
  };
  expect(parsed.jsonrpc).toBe('2.0');
  expect(parsed.id).toBeNull();
  expect(parsed.error.data.errorId).toMatch(/^[0-9a-f-]{36}$/);
  return parsed.error.data.errorId;
}

/** The one server log line naming `errorId` (the child's stderr pipe may deliver it just after the answer). */
async function logLine(server: HttpChild, errorId: string): Promise<string> {
  return vi.waitFor(
    () => {
      const lines = server
        .stderr()
        .split('\n')
        .filter((l) => l.includes(errorId));
      expect(lines).toHaveLength(1);
      return lines[0] ?? '';
    },
    { timeout: 10_000, interval: 20 },
  );
}

describe('mem01-mcp --http, single user: the front door', () => {
  let home: ReturnType<typeof tempDir>;
  let server: HttpChild;

  beforeAll(async () => {
    home = tempDir();
    server = await startHttpChild(['--user', 'alice'], childEnv(home.path));
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
    home.remove();
  });

  it('answers a malformed body without a token with 401 (the body is never parsed), no stack, an id in the log', async () => {
    const reply = await send(server.url, { body: '{"jsonrpc": "2.0", "method": tru' });
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toBe('Bearer');
    const id = expectGeneric(reply);
    expect(await logLine(server, id)).toMatch(/HTTP 401 .* no bearer token/);
    // A token sent where it does not belong (the query) is not logged either.
    const query = await send(`${server.url}?access_token=misplaced-secret-123`, {});
    expect(query.status).toBe(401);
    expect(await logLine(server, expectGeneric(query))).toContain('POST "/mcp"');
    expect(server.stderr()).not.toContain('misplaced-secret');
  });

  it('answers a malformed body with the token with a JSON-RPC parse error, no stack, the body kept out of the log', async () => {
    const reply = await send(server.url, {
      headers: bearer(server.token),
      body: '{"secret-looking": "hunter2", oops',
    });
    expect(reply.status).toBe(400);
    const id = expectGeneric(reply);
    expect(JSON.parse(reply.body).error).toMatchObject({ code: -32700, message: 'parse error' });
    const line = await logLine(server, id);
    expect(line).toMatch(/malformed JSON \(\d+ bytes\)/);
    expect(line).not.toContain('hunter2');
  });

  it('refuses a foreign or null Origin with 403 even with the token; accepts none and loopback origins', async () => {
    for (const origin of [
      'https://attacker.example',
      'null',
      'http://localhost.attacker.example',
      'file://',
    ]) {
      const reply = await send(server.url, { headers: { ...bearer(server.token), origin } });
      expect(reply.status, origin).toBe(403);
      expect(reply.body).not.toContain('serverInfo');
      expect(await logLine(server, expectGeneric(reply))).toContain('Origin');
    }
    for (const origin of [
      'http://localhost:5173',
      'https://127.0.0.1:8443',
      'http://[::1]:3000',
      undefined,
    ]) {
      const headers = origin ? { ...bearer(server.token), origin } : bearer(server.token);
      expect((await send(server.url, { headers })).status, String(origin)).toBe(200);
    }
  });

  it('answers 413 to a body declared over 1 MiB without reading it, and closes the connection', async () => {
    const reply = await send(server.url, {
      headers: bearer(server.token),
      declared: { length: 1024 * 1024 + 1, sendBytes: 1024 },
    });
    expect(reply.status).toBe(413);
    expect(reply.headers.connection).toBe('close');
    expect(await logLine(server, expectGeneric(reply))).toContain('declared 1048577');
  });

  it('checks the token before the size: an oversized body without a token gets 401', async () => {
    const reply = await send(server.url, { declared: { length: 50 * 1024 * 1024, sendBytes: 16 } });
    expect(reply.status).toBe(401);
  });

  it('invites an "Expect: 100-continue" upload only past the token and the size checks', async () => {
    const expect100 = { expect: '100-continue' };
    const none = await send(server.url, { headers: expect100, declared: { length: 10, sendBytes: 10 } });
    expect(none.status).toBe(401);
    expect(none.continued).toBe(false);
    const big = await send(server.url, {
      headers: { ...expect100, ...bearer(server.token) },
      declared: { length: 2 * 1024 * 1024, sendBytes: 10 },
    });
    expect(big.status).toBe(413);
    expect(big.continued).toBe(false);
    const fine = await send(server.url, {
      headers: { ...expect100, ...bearer(server.token) },
      body: JSON.stringify(INITIALIZE),
    });
    expect(fine.status).toBe(200);
    expect(fine.continued).toBe(true);
  });

  it('makes the MCP transport’s own refusals generic too, with the detail in the log', async () => {
    // No text/event-stream in Accept: refused by the SDK's transport (406), its message moved to the log.
    const reply = await send(server.url, {
      headers: { ...bearer(server.token), accept: 'application/json' },
    });
    expect(reply.status).toBe(406);
    const id = expectGeneric(reply);
    expect(JSON.parse(reply.body).error.message).toBe('not acceptable');
    expect(await logLine(server, id)).toContain('Not Acceptable');
  });

  it('answers an unknown session 404, another path 404, a non-JSON body 415, all generic', async () => {
    const session = await send(server.url, {
      headers: { ...bearer(server.token), 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(session.status).toBe(404);
    expect(JSON.parse(session.body).error.code).toBe(-32001);
    expectGeneric(session);
    const path = await send(server.url.replace(/\/mcp$/, '/admin'), { headers: bearer(server.token) });
    expect(path.status).toBe(404);
    expectGeneric(path);
    const text = await send(server.url, {
      headers: { ...bearer(server.token), 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expectGeneric(text);
  });

  it('never logs the token', () => {
    expect(server.stderr()).not.toContain(server.token);
  });
});

describe('mem01-mcp --http --multi-user with per-user tokens', () => {
  const ALICE = 'alice-token-0123456789abcdef';
  const TEAM = 'team-token-0123456789abcdef';
  let home: ReturnType<typeof tempDir>;
  let server: HttpChild;

  beforeAll(async () => {
    home = tempDir();
    const file = join(home.path, 'tokens');
    writeFileSync(file, `# one token a line\n${ALICE}:alice\n\n${TEAM}:bob, team-*\n`);
    server = await startHttpChild(
      [
        '--multi-user',
        '--token-file',
        file,
        '--allow-origin',
        'https://app.example',
        '--max-body-bytes',
        '4096',
      ],
      childEnv(home.path),
    );
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
    home.remove();
  });

  it('prints no server token and serves the users the tokens name', async () => {
    expect(server.stdout()).not.toMatch(/^token:/m);
    expect(server.stderr()).toContain('users matching alice, bob, team-*');
    expect(server.stderr()).toContain('2 per-user token(s)');
    expect(server.stderr()).not.toContain(ALICE);
    expect(server.stderr()).not.toContain(TEAM);
  });

  it('serves a token its own users, and refuses another user named in a call with 403', async () => {
    const alice = await connectHttp(server.url, ALICE);
    try {
      expect(
        (await ok<{ userId: string }>(alice.client, 'search_memory', { query: '', userId: 'alice' })).userId,
      ).toBe('alice');
      await expect(
        alice.client.callTool({ name: 'search_memory', arguments: { query: '', userId: 'bob' } }),
      ).rejects.toMatchObject({ code: 403 });
      await expect(alice.client.readResource({ uri: profileUri('team-x') })).rejects.toMatchObject({
        code: 403,
      });
      await expect(
        alice.client.getPrompt({ name: 'with-memory', arguments: { question: 'q', userId: 'bob' } }),
      ).rejects.toMatchObject({ code: 403 });
      // The refusal named no user and the session goes on.
      expect((await ok<{ userId: string }>(alice.client, 'list_memories', { userId: 'alice' })).userId).toBe(
        'alice',
      );
    } finally {
      await alice.close();
    }
    const team = await connectHttp(server.url, TEAM);
    try {
      expect(
        (await ok<{ userId: string }>(team.client, 'search_memory', { query: '', userId: 'team-x' })).userId,
      ).toBe('team-x');
      expect(
        (await ok<{ userId: string }>(team.client, 'search_memory', { query: '', userId: 'bob' })).userId,
      ).toBe('bob');
      await expect(
        team.client.callTool({ name: 'search_memory', arguments: { query: '', userId: 'alice' } }),
      ).rejects.toMatchObject({ code: 403 });
      // No default user here: a call naming none is a tool error, as on any multi-user server without --user.
      const r = await call(team.client, 'search_memory', { query: '' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/userId.*required/);
    } finally {
      await team.close();
    }
  });

  it('refuses a 403 for a named user with a generic body whose id is in the log', async () => {
    const init = await send(server.url, { headers: bearer(ALICE) });
    expect(init.status).toBe(200);
    const sid = init.headers['mcp-session-id'];
    expect(typeof sid).toBe('string');
    const reply = await send(server.url, {
      headers: { ...bearer(ALICE), 'mcp-session-id': String(sid) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search_memory', arguments: { query: '', userId: 'bob' } },
      }),
    });
    expect(reply.status).toBe(403);
    expect(reply.body).not.toContain('bob');
    expect(await logLine(server, expectGeneric(reply))).toMatch(/token 1 names 1 user id/);
  });

  it('does not let another token use a session it did not open', async () => {
    const init = await send(server.url, { headers: bearer(ALICE) });
    const sid = String(init.headers['mcp-session-id']);
    const reply = await send(server.url, {
      headers: { ...bearer(TEAM), 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(reply.status).toBe(404);
    expectGeneric(reply);
  });

  it('answers 401 to a token one character off either way', async () => {
    expect((await send(server.url, { headers: bearer(`${ALICE}x`) })).status).toBe(401);
    expect((await send(server.url, { headers: bearer(ALICE.slice(0, -1)) })).status).toBe(401);
  });

  it('allows the --allow-origin origin besides loopback, and refuses others', async () => {
    expect(
      (await send(server.url, { headers: { ...bearer(ALICE), origin: 'https://app.example' } })).status,
    ).toBe(200);
    expect(
      (await send(server.url, { headers: { ...bearer(ALICE), origin: 'https://app.example.net' } })).status,
    ).toBe(403);
  });

  it('takes --max-body-bytes: 413 past it, declared or streamed, and a body within it is served', async () => {
    const declared = await send(server.url, {
      headers: bearer(ALICE),
      declared: { length: 4097, sendBytes: 10 },
    });
    expect(declared.status).toBe(413);
    // Chunked (no Content-Length): refused once the stream passes the limit.
    const streamed = await send(server.url, {
      headers: { ...bearer(ALICE), 'transfer-encoding': 'chunked' },
      body: JSON.stringify({ ...INITIALIZE, pad: 'x'.repeat(8000) }),
    });
    expect(streamed.status).toBe(413);
    const within = await send(server.url, {
      headers: bearer(ALICE),
      body: JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, pad: 'x'.repeat(3000) } }),
    });
    expect(within.status).toBe(200);
  });

  it('works with the SDK client when a browser-style Origin is sent from an allowed origin', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { ...bearer(TEAM), origin: 'https://app.example' } },
    });
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const client = new Client({ name: 't', version: '1' });
    await client.connect(transport);
    try {
      expect((await ok<{ userId: string }>(client, 'list_memories', { userId: 'team-a' })).userId).toBe(
        'team-a',
      );
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });
});

describe('mem01-mcp --http --multi-user with a server token beside per-user tokens (MEM01_MCP_TOKEN_FILE)', () => {
  const SERVER = 'server-token-0123456789abcdef';
  const CAROL = 'carol-token-0123456789abcdef';
  let home: ReturnType<typeof tempDir>;
  let server: HttpChild;

  beforeAll(async () => {
    home = tempDir();
    const file = join(home.path, 'tokens');
    writeFileSync(file, `${CAROL}:carol\n`);
    server = await startHttpChild(
      ['--multi-user', '--allow-users', 'carol,team-*', '--token', SERVER],
      childEnv(home.path, { MEM01_MCP_TOKEN_FILE: file }),
    );
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
    home.remove();
  });

  it('the server token serves every allowed user; the per-user token only its own', async () => {
    expect(server.stderr()).toContain('a server token for every allowed user and 1 per-user token(s)');
    const all = await connectHttp(server.url, SERVER);
    try {
      for (const user of ['carol', 'team-x', 'team-y']) {
        expect((await ok<{ userId: string }>(all.client, 'list_memories', { userId: user })).userId).toBe(
          user,
        );
      }
      // Beyond --allow-users even the server token gets the policy's refusal.
      const outside = await call(all.client, 'list_memories', { userId: 'mallory' });
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toMatch(/not allowed/);
    } finally {
      await all.close();
    }
    const carol = await connectHttp(server.url, CAROL);
    try {
      expect((await ok<{ userId: string }>(carol.client, 'list_memories', { userId: 'carol' })).userId).toBe(
        'carol',
      );
      await expect(
        carol.client.callTool({ name: 'list_memories', arguments: { userId: 'team-x' } }),
      ).rejects.toMatchObject({ code: 403 });
    } finally {
      await carol.close();
    }
  });
});

describe('mem01-mcp --token-file: bad files are refused at start, naming the line, never the token', () => {
  const runBin = (args: string[], home: string) =>
    spawnSync(nodeBinary(), [BIN, ...args], { env: childEnv(home), encoding: 'utf8', timeout: 60_000 });

  it('refuses a line without users, a short token and a token that cannot serve the single user', () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'tokens');
      writeFileSync(file, 'a-long-enough-token-1234\n');
      let r = runBin(['--http', '--port', '0', '--multi-user', '--token-file', file], dir.path);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('line 1: expected the token, a colon and the users it serves');
      expect(r.stderr).not.toContain('a-long-enough-token-1234');

      writeFileSync(file, '# c\nshort:alice\n');
      r = runBin(['--http', '--port', '0', '--multi-user', '--token-file', file], dir.path);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/line 2: .*at least 16 characters/);
      expect(r.stderr).not.toContain('short');

      writeFileSync(file, 'bobs-token-0123456789abcdef:bob\n');
      r = runBin(['--http', '--port', '0', '--user', 'alice', '--token-file', file], dir.path);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('does not name the served user');
      expect(r.stderr).not.toContain('bobs-token');

      r = runBin(['--user', 'alice', '--token-file', file], dir.path);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('--token-file needs --http');
    } finally {
      dir.remove();
    }
  });
});
