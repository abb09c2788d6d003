// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright's Locator.innerText(), not the DOM property
/**
 * The inspector in a real browser: playwright-core driving Debian's Chromium against a server over a real SQLite
 * file seeded from the demo fixture.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { type Belief, MemoryEngine } from '@mem01/engine';
import { createLocalEmbedder } from '@mem01/local';
import { openSqliteStore, type SqliteStore } from '@mem01/store-sqlite';
import { quiet } from '@mem01/test-kit';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Inspector, startInspector } from '../src/inspect/server.js';
import { seedFixture, tempDir, USER, XSS } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
let dir: string;
let store: SqliteStore;
let engine: MemoryEngine;
let inspector: Inspector;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];

function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: inspector.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium chromium-driver`);
  dir = tempDir('mem01-inspect-');
  const path = join(dir, 'memory.db');
  await seedFixture(path);
  store = openSqliteStore({ path, logger: quiet });
  engine = new MemoryEngine({
    store,
    embedder: createLocalEmbedder(),
    extractor: { name: 'none', extract: async () => ({ operations: [] }) },
  });
  inspector = await startInspector({ engine, store });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
});

afterAll(async () => {
  await browser?.close();
  await inspector?.close();
  await engine?.close();
  await store?.close();
});

const active = async (): Promise<readonly Belief[]> =>
  (await store.list({ userId: USER }, { statuses: ['active'], limit: 1000 })).items;

describe('mem01 inspect in Chromium', () => {
  it('listens on 127.0.0.1 with a random token, and answers 401 without it', async () => {
    expect(inspector.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{40,}$/);
    const none = await raw('/');
    expect(none.status).toBe(401);
    const wrong = await raw('/user?u=demo-user&token=nope');
    expect(wrong.status).toBe(401);
    const post = await raw('/act/forget', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: inspector.origin },
      body: 'u=demo-user&id=x',
    });
    expect(post.status).toBe(401);
    expect(none.headers['content-security-policy']).toMatch(/default-src 'none'/);
    // In the browser too: a page without the token is refused.
    const res = await page.goto(`${inspector.origin}/`);
    expect(res?.status()).toBe(401);
  });

  it('opens with the token, lists users, searches, opens a timeline, forgets, and shows <script> as text', {
    timeout: 90_000,
  }, async () => {
    const res = await page.goto(inspector.url);
    expect(res?.status()).toBe(200);
    expect(page.url()).not.toContain('token='); // moved into an HttpOnly cookie
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'mem01_inspect')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    // The users grid is on the page (a locator object is always defined: count what it finds).
    expect(await page.locator('table.grid').count()).toBe(1);
    expect(await page.locator('td a', { hasText: 'other-user' }).count()).toBe(1);

    await page.click(`td a:text-is("${USER}")`);
    await page.waitForSelector('#beliefs');
    const rows = page.locator('#beliefs tbody tr');
    const total = await rows.count();
    expect(total).toBe((await active()).length);
    // The script belief is shown as text and never ran.
    expect(await page.locator('a.statement', { hasText: XSS }).count()).toBe(1);
    expect(await page.locator('main script').count()).toBe(0);

    // Live search in the page: the belief, the turn it came from (kept as an episode), and the assistant's replies
    // that name it (kept as replies, listed for the operator).
    const replies = (await active()).filter(
      (b) => b.kind === 'reply' && /portland/i.test(b.statement),
    ).length;
    await page.fill('#q', 'portland');
    const visible = page.locator('#beliefs tbody tr:visible');
    await expect.poll(() => visible.count()).toBe(2 + replies);
    expect(await page.locator('#beliefs tbody tr:visible', { hasText: 'reply' }).count()).toBe(replies);
    expect(
      await page.locator('#beliefs tbody tr:visible', { hasText: 'The user lives in Portland.' }).count(),
    ).toBe(1);
    expect(await page.locator('#beliefs tbody tr:visible', { hasText: 'episode' }).count()).toBe(1);
    expect(await page.locator('#shown').innerText()).toBe(String(2 + replies));
    // Server-side search too (submitting the form).
    await page.press('#q', 'Enter');
    await page.waitForURL(/q=portland/);
    expect(await page.locator('#beliefs tbody tr').count()).toBe(2 + replies);

    // The timeline: evidence quotes with their session, and what it superseded.
    await page.click('a.statement:text("The user lives in Portland.")');
    await page.waitForSelector('ol.timeline');
    const current = page.locator('article.card.current');
    expect(await current.innerText()).toMatch(/session conv-17 #0/);
    expect(await current.locator('blockquote').first().innerText()).toMatch(/Portland/);
    const seattle = page.locator('article.card', {
      has: page.locator('h3', { hasText: 'The user lives in Seattle.' }),
    });
    expect(await seattle.innerText()).toMatch(/superseded by The user lives in Portland\./);
    expect(await seattle.locator('.badge').innerText()).toBe('superseded');
    await page.screenshot({ path: join(dir, 'timeline.png') });

    // Forget it from the page: it disappears from the list and from the store, with the turn it came from.
    const id = (await active()).find((b) => b.statement === 'The user lives in Portland.')!.id;
    await page.click('section.edit button[data-action="forget"]');
    await page.waitForURL(/\/user\?/);
    expect(await page.locator('.flash').innerText()).toMatch(/forgotten/);
    expect(await page.locator(`#beliefs tr[data-id="${id}"]`).count()).toBe(0);
    expect(await page.locator('#beliefs').innerText()).not.toMatch(/Portland/);
    expect((await store.get({ userId: USER }, id))?.status).toBe('forgotten');
    // The belief, its episode and the replies that named it.
    expect(await page.locator('#beliefs tbody tr').count()).toBe(total - 2 - replies);
    expect(dialogs).toEqual([]);
  });

  it('corrects a belief, approves a pending one, and runs the recall playground', {
    timeout: 90_000,
  }, async () => {
    await page.goto(`${inspector.origin}/user?u=${USER}`);
    await page.click('a.statement:text("The user is vegetarian.")');
    await page.fill('#text', 'The user is vegan.');
    await page.click('button[data-action="correct"]');
    await page.waitForSelector('article.card.current');
    expect(await page.locator('article.card.current h3').innerText()).toMatch(/The user is vegan\./);
    const old = page.locator('article.card', {
      has: page.locator('h3', { hasText: 'The user is vegetarian.' }),
    });
    expect(await old.locator('.badge').innerText()).toBe('superseded');

    await page.goto(`${inspector.origin}/user?u=${USER}`);
    const pendingRows = page.locator('#pending tbody tr');
    const before = await pendingRows.count();
    expect(before).toBeGreaterThan(0);
    const pendingId = await pendingRows.first().getAttribute('data-id');
    await pendingRows.first().locator('button[data-action="approve"]').click();
    await page.waitForSelector('.flash');
    expect((await store.get({ userId: USER }, pendingId!))?.status).toBe('active');

    await page.click('nav.tabs a:text("Recall playground")');
    await page.fill('#rq', 'what food do I eat? vegan');
    await page.press('#rq', 'Enter');
    await page.waitForSelector('#block');
    const block = await page.locator('#block').innerText();
    expect(block).toMatch(/^<mem01-memory trust="untrusted">/);
    expect(block).toMatch(/The user is vegan\./);
    const header = (await page.locator('#ranked thead').innerText()).toLowerCase();
    for (const signal of ['lexical', 'vector', 'recency', 'confidence', 'kind'])
      expect(header).toContain(signal);
    expect(await page.locator('#ranked tbody tr').count()).toBeGreaterThan(0);

    const shot = join(dir, 'inspect.png');
    await page.goto(`${inspector.origin}/user?u=${USER}`);
    await page.screenshot({ path: shot, fullPage: false });
    expect(existsSync(shot)).toBe(true);
    process.stdout.write(`inspector screenshots: ${shot}, ${join(dir, 'timeline.png')}\n`);
    expect(dialogs).toEqual([]);
  });

  it('lists a conversation summary with its kind and date, finds it by kind, and opens its timeline', {
    timeout: 90_000,
  }, async () => {
    const scope = { userId: USER };
    const turns = [
      [
        'user',
        'I am planning a trip to Japan in April with my sister Lena. We want to see the temples of Kyoto.',
      ],
      ['assistant', 'Kyoto in April is lovely for the cherry blossoms. How many days do you have?'],
      ['user', 'We have ten days in Japan, and Lena wants to spend three of them hiking near Mount Fuji.'],
    ] as const;
    await engine.accept(
      turns.map(([role, text], position) => ({
        scope,
        sessionId: 'trip-1',
        position,
        role,
        text,
        at: `2026-03-0${position === 2 ? 3 : 2}T09:0${position}:00.000Z`,
      })),
    );
    await engine.flush(scope);
    const summary = await engine.summarize(scope, 'trip-1');
    expect(summary).toMatchObject({
      kind: 'summary',
      status: 'active',
      validFrom: '2026-03-02T09:00:00.000Z',
    });
    expect(summary!.statement).toMatch(/Kyoto/);

    await page.goto(`${inspector.origin}/user?u=${USER}`);
    const row = page.locator(`#beliefs tr[data-id="${summary!.id}"]`);
    expect(await row.count()).toBe(1);
    expect(await row.locator('a.statement').innerText()).toBe(summary!.statement);
    // Its kind, its conversation and the conversation's date (not the key and the text again).
    expect(await row.locator('.meta').innerText()).toBe(
      'summary · conversation trip-1 · 2026-03-02 to 2026-03-03',
    );
    // Searching by kind finds the summaries, live and on the server.
    const summaries = (await active()).filter((b) => b.kind === 'summary');
    expect(summaries.map((b) => b.id)).toEqual([summary!.id]);
    await page.fill('#q', 'summary');
    const visible = page.locator('#beliefs tbody tr:visible');
    await expect.poll(() => visible.count()).toBe(1);
    expect(await visible.first().getAttribute('data-id')).toBe(summary!.id);
    await page.press('#q', 'Enter');
    await page.waitForURL(/q=summary/);
    expect(await page.locator('#beliefs tbody tr').count()).toBe(1);
    // And by its conversation or its date.
    await page.fill('#q', '2026-03-02');
    await expect.poll(() => visible.count()).toBe(1);

    // Its timeline: the kind and date on the card, the turns it quotes with their session.
    await page.click(`#beliefs tr[data-id="${summary!.id}"] a.statement`);
    await page.waitForSelector('article.card.current');
    const card = page.locator('article.card.current');
    expect(await card.locator('.meta').innerText()).toContain(
      'summary · conversation trip-1 · 2026-03-02 to 2026-03-03',
    );
    expect(await card.innerText()).toMatch(/session trip-1 #0 \(user\)/);
    expect(await card.locator('.badge').innerText()).toBe('active');

    // The recall playground shows it in the block the agent would get, dated by the conversation.
    await page.goto(
      `${inspector.origin}/recall?u=${USER}&q=${encodeURIComponent('What did we talk about on our Kyoto trip with Lena?')}`,
    );
    await page.waitForSelector('#block');
    expect(await page.locator('#block').innerText()).toMatch(/\[conversation 2026-03-02\] .*Kyoto/);
    expect(dialogs).toEqual([]);
  });

  it('refuses cross-origin and origin-less POSTs even with the token', async () => {
    const target = (await active()).find((b) => b.statement === 'The user prefers tea.')!;
    const form = `u=${USER}&id=${target.id}&token=${inspector.token}`;
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `mem01_inspect=${inspector.token}`,
    };
    const evil = await raw('/act/forget', {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example' },
      body: form,
    });
    expect(evil.status).toBe(403);
    expect(evil.body).toContain('cross-origin request refused');
    const cross = await raw('/act/forget', {
      method: 'POST',
      headers: { ...headers, 'sec-fetch-site': 'cross-site' },
      body: form,
    });
    expect(cross.status).toBe(403);
    expect(cross.body).toContain('cross-origin request refused');
    const rebinding = await raw('/', { headers: { host: 'evil.example', cookie: headers.cookie } });
    expect(rebinding.status).toBe(421);
    expect(rebinding.body).toContain('unexpected Host header');
    expect((await store.get({ userId: USER }, target.id))?.status).toBe('active');

    // A real cross-origin form post from another page in the browser is refused as well: the browser does not send
    // the SameSite=Strict cookie on a cross-site post and the forged form has no token, so it is refused as
    // unauthorized before the origin is even looked at.
    const other = await startOtherOrigin(target.id);
    try {
      const refused = page.waitForResponse(
        (r) => r.url() === `${inspector.origin}/act/forget` && r.request().method() === 'POST',
      );
      await page.goto(other.url);
      const response = await refused;
      expect(response.status()).toBe(401);
      expect(await response.text()).toContain('Unauthorized: open the URL with the token');
    } finally {
      await other.close();
    }
    expect((await store.get({ userId: USER }, target.id))?.status).toBe('active');
    // The same request from the page's own origin works.
    const same = await raw('/act/forget', {
      method: 'POST',
      headers: { ...headers, origin: inspector.origin },
      body: form,
    });
    expect(same.status).toBe(303);
    expect((await store.get({ userId: USER }, target.id))?.status).toBe('forgotten');
  });
});

/** A page on another local origin that auto-submits a forget form to the inspector. */
async function startOtherOrigin(id: string): Promise<{ url: string; close: () => Promise<void> }> {
  const { createServer } = await import('node:http');
  const html = `<!doctype html><form id="f" method="post" action="${inspector.origin}/act/forget"><input name="u" value="${USER}"><input name="id" value="${id}"></form><script>document.getElementById('f').submit()</script>`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://localhost:${port}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
