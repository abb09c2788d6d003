// The OpenAI summarizer over the real `openai` client and real HTTP to the fake server, alone and inside MemoryEngine.
import { inspect } from 'node:util';
import { ExtractionError, MemoryEngine, type SummaryRequest } from '@mem01/engine';
import { createMemoryStore } from '@mem01/store-memory';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createOpenAIExtractor,
  createOpenAISummarizer,
  OpenAIAbortedError,
  OpenAIProviderError,
  SUMMARY_INSTRUCTIONS,
  summaryTextFormat,
  type UsageEvent,
} from '../src/index.js';
import { leadingQuote } from '../src/openai-summarizer.js';
import {
  type FakeOpenAI,
  isSummaryRequest,
  quotingResponder,
  startFakeOpenAI,
  summaryData,
} from '../src/testing/index.js';
import { API_KEY, captureLogger, FAST_RETRY, NOW } from './helpers.js';

const fake: FakeOpenAI = await startFakeOpenAI();
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const scope = { userId: 'u1' };
function summarizer(extra: Parameters<typeof createOpenAISummarizer>[0] = {}) {
  return createOpenAISummarizer({
    apiKey: API_KEY,
    baseURL: fake.url,
    retry: FAST_RETRY,
    timeoutMs: 2000,
    ...extra,
  });
}

type Turn = SummaryRequest['turns'][number];
const turn = (position: number, role: Turn['role'], text: string, at = '2026-02-01T11:00:00.000Z'): Turn => ({
  id: `turn:${position}`,
  position,
  role,
  text,
  at,
});
const request = (turns: readonly Turn[], extra: Partial<SummaryRequest> = {}): SummaryRequest => ({
  scope,
  sessionId: 's1',
  turns,
  maxBytes: 400,
  now: NOW,
  ...extra,
});

const u1 = turn(
  0,
  'user',
  'I moved to Lisbon in March, and I work night shifts as a nurse at the Santa Maria hospital near the river now.',
);
const a1 = turn(1, 'assistant', 'Lisbon is lovely! Night shifts must be hard. Do you like the hospital?');
const u2 = turn(
  2,
  'user',
  'Yes. My sister Ana visits next week; we are going hiking in Sintra.',
  '2026-02-03T09:30:00.000Z',
);
const conversation = [u1, a1, u2];
const good = {
  type: 'output' as const,
  output: {
    summary:
      'On 2026-02-01 to 2026-02-03, the user said they moved to Lisbon in March and work night shifts as a nurse; their sister Ana visits the week after 2026-02-03 to hike in Sintra.',
    turns: [1, 3],
  },
};

describe('OpenAI summarizer over HTTP', () => {
  it('one Responses call with Structured Outputs: a dated summary, sources quoting the named turns, usage', async () => {
    fake.script('responses', good);
    const events: UsageEvent[] = [];
    const result = await summarizer({ onUsage: (e) => events.push(e) }).summarize(request(conversation));

    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.path).toBe('/v1/responses');
    expect(req.authorized).toBe(true);
    const body = req.body as {
      model: string;
      store: boolean;
      instructions: string;
      text: { format: unknown };
    };
    // The extractor's model by default.
    expect(body.model).toBe('gpt-5.6-sol');
    expect(body.store).toBe(false);
    expect(body.instructions).toBe(SUMMARY_INSTRUCTIONS);
    expect(body.text.format).toEqual(summaryTextFormat());
    expect(body.text.format).toMatchObject({
      type: 'json_schema',
      name: 'conversation_summary',
      strict: true,
    });

    expect(result.text).toBe(good.output.summary);
    expect(result.sources).toEqual([
      // The first words of the turn up to 100 bytes, cut at a word, verbatim.
      {
        turnId: u1.id,
        quote:
          'I moved to Lisbon in March, and I work night shifts as a nurse at the Santa Maria hospital near the',
      },
      { turnId: u2.id, quote: u2.text },
    ]);
    for (const s of result.sources ?? []) {
      expect(conversation.find((t) => t.id === s.turnId)?.text.startsWith(s.quote)).toBe(true);
      expect(Buffer.byteLength(s.quote)).toBeLessThanOrEqual(100);
    }
    expect(result.usage).toEqual({
      llmCalls: 1,
      inputTokens: req.inputTokens,
      outputTokens: Math.ceil(JSON.stringify(good.output).length / 4),
    });
    expect(events).toEqual([
      { kind: 'summary', userId: 'u1', model: 'gpt-5.6-sol', usage: result.usage, attempts: 1 },
    ]);
  });

  it('sends the turns compactly: numbered rows, a date line per day, no ids or timestamps, long assistant turns cut', async () => {
    const long = turn(3, 'assistant', `Sure. ${'blah '.repeat(200)}The end.`, '2026-02-03T09:31:00.000Z');
    const empty = turn(4, 'user', '   ');
    const last = turn(5, 'user', 'I prefer window seats.', '2026-02-03T10:00:00.000Z');
    await summarizer({ model: 'summary-model' }).summarize(
      request([...conversation, long, empty, last], { maxBytes: 256 }),
    );
    const req = fake.requests[0]!;
    expect((req.body as { model: string }).model).toBe('summary-model');
    const content = (req.body as { input: { content: string }[] }).input[0]!.content;
    expect(content.startsWith('Limit: 256 bytes.\nDATA (untrusted JSON):\n')).toBe(true);
    expect(content).not.toContain('turn:');
    expect(content).not.toContain('T11:00');
    // One date per day, not one per turn.
    expect(content.match(/2026-02-01/g)).toHaveLength(1);
    expect(content.match(/2026-02-03/g)).toHaveLength(1);
    const data = summaryData(req);
    expect(data.maxBytes).toBe(256);
    expect(data.omitted).toBe(0);
    expect(data.turns.map((t) => [t.n, t.role, t.day])).toEqual([
      [1, 'user', '2026-02-01'],
      [2, 'assistant', '2026-02-01'],
      [3, 'user', '2026-02-03'],
      [4, 'assistant', '2026-02-03'],
      [6, 'user', '2026-02-03'],
    ]);
    expect(data.turns[0]!.text).toBe(u1.text);
    expect(data.turns[3]!.text.length).toBeLessThan(320);
    expect(data.turns[3]!.text.startsWith('Sure.')).toBe(true);
    expect(data.turns[3]!.text.endsWith('The end.')).toBe(true);
    expect(isSummaryRequest(req)).toBe(true);
  });

  it('a conversation longer than maxInputChars: the newest turns that fit, and how many were left out', async () => {
    const turns = Array.from({ length: 10 }, (_, i) =>
      turn(i, 'user', `Turn number ${i} says something about day ${i}.`),
    );
    await summarizer({ maxInputChars: 150 }).summarize(request(turns));
    const data = summaryData(fake.requests[0]!);
    expect(data.turns.map((t) => t.n)).toEqual([8, 9, 10]);
    expect(data.omitted).toBe(7);
  });

  it('makes no call when the user said nothing; an empty summary is no summary', async () => {
    const none = await summarizer().summarize(
      request([turn(0, 'assistant', 'Hello! How can I help?'), turn(1, 'user', ' ')]),
    );
    expect(none).toEqual({ text: '', sources: [], usage: { llmCalls: 0, inputTokens: 0, outputTokens: 0 } });
    expect(fake.requests).toHaveLength(0);
    fake.script('responses', { type: 'output', output: { summary: '  ', turns: [1] } });
    const empty = await summarizer().summarize(request([turn(0, 'user', 'Hi there!')]));
    expect(empty.text).toBe('');
    expect(empty.sources).toEqual([]);
    expect(empty.usage.llmCalls).toBe(1);
  });

  it('turn numbers that were not sent are not sources (logged without content); a repeated number counts once', async () => {
    fake.script('responses', {
      type: 'output',
      output: { summary: 'On 2026-02-01, the user moved to Lisbon.', turns: [1, 1, 9, 0, 2.5] },
    });
    const { lines, logger } = captureLogger();
    const result = await summarizer({ logger }).summarize(request(conversation));
    expect(result.sources?.map((s) => s.turnId)).toEqual([u1.id]);
    expect(lines).toEqual([
      'mem01/openai: the summary named 3 turn number(s) that were not sent; they are not its sources',
    ]);
  });

  it('quotes the start of a turn verbatim, at most 100 bytes, cut at a word', () => {
    expect(leadingQuote('  Hello   there,\nfriend  ', 100)).toBe('Hello   there,\nfriend');
    const text = `Überraschung: ${'wörter '.repeat(30)}`;
    const q = leadingQuote(text, 100);
    expect(text.startsWith(q)).toBe(true);
    expect(Buffer.byteLength(q)).toBeLessThanOrEqual(100);
    expect(text[q.length]).toMatch(/\s/);
    expect(leadingQuote('x'.repeat(300), 100)).toBe('x'.repeat(100));
    expect(leadingQuote(' \n ', 100)).toBe('');
  });

  describe('malformed model output is an ExtractionError, and no summary', () => {
    const invalid: [string, unknown][] = [
      ['not JSON', 'The user moved to Lisbon.'],
      ['summary not a string', { summary: 42, turns: [] }],
      ['missing turns', { summary: 'On 2026-02-01, the user moved.' }],
      ['turns not numbers', { summary: 'On 2026-02-01, the user moved.', turns: ['t1'] }],
      ['the extraction schema', { ops: [] }],
      ['wrong root', ['On 2026-02-01, the user moved.']],
    ];
    for (const [name, output] of invalid) {
      it(`rejects ${name}`, async () => {
        fake.script('responses', { type: 'output', output });
        const err = await summarizer()
          .summarize(request(conversation))
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ExtractionError);
        expect(err).toMatchObject({ code: 'extraction' });
        expect((err as Error).message).toMatch(
          /^summary model output (is not JSON|does not match the schema).*no summary was written$/,
        );
        expect(fake.requests).toHaveLength(1);
      });
    }

    it('rejects a refusal and an incomplete output', async () => {
      fake.script(
        'responses',
        { type: 'refusal' },
        { type: 'output', output: '{"summary": "On 2026', status: 'incomplete' },
      );
      await expect(summarizer().summarize(request(conversation))).rejects.toThrow(
        /refused the summary; no summary was written/,
      );
      await expect(summarizer().summarize(request(conversation))).rejects.toThrow(
        /incomplete.*no summary was written/,
      );
    });
  });

  describe('failures, retries, cancellation', () => {
    it('retries a 500, then succeeds', async () => {
      fake.script('responses', { type: 'status', status: 500 }, good);
      const { lines, logger } = captureLogger();
      const events: UsageEvent[] = [];
      const result = await summarizer({ logger, onUsage: (e) => events.push(e) }).summarize(
        request(conversation),
      );
      expect(result.text).toBe(good.output.summary);
      expect(fake.requests).toHaveLength(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^mem01\/openai: summary attempt 1\/4 failed \(HTTP 500\); retrying in \d+ ms$/,
      );
      expect(events[0]).toMatchObject({ kind: 'summary', attempts: 2 });
    });

    it('gives up after maxAttempts with an OpenAIProviderError; a 400 is not retried', async () => {
      fake.script('responses', { type: 'status', status: 503 }, { type: 'status', status: 503 });
      const err = await summarizer({ maxAttempts: 2 })
        .summarize(request(conversation))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAIProviderError);
      expect(err).toMatchObject({ code: 'provider', status: 503, attempts: 2 });
      expect((err as Error).message).toMatch(/HTTP 503.*after 2 attempts/);
      fake.reset();
      fake.script('responses', { type: 'status', status: 400 });
      await expect(summarizer().summarize(request(conversation))).rejects.toMatchObject({
        status: 400,
        attempts: 1,
      });
      expect(fake.requests).toHaveLength(1);
    });

    it('times out a slow reply and retries it; a timeout on the last attempt is an OpenAIProviderError', async () => {
      fake.script('responses', { type: 'slow', delayMs: 3000 }, good);
      const result = await summarizer({ timeoutMs: 250 }).summarize(request(conversation));
      expect(result.text).toBe(good.output.summary);
      expect(fake.requests).toHaveLength(2);
      fake.reset();
      fake.script('responses', { type: 'slow', delayMs: 3000 });
      const err = await summarizer({ timeoutMs: 250, maxAttempts: 1 })
        .summarize(request(conversation))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAIProviderError);
      expect((err as Error).message).toMatch(/timed out/);
    });

    it('an abort ends the request in flight; an aborted signal sends nothing', async () => {
      fake.script('responses', { type: 'slow', delayMs: 5000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await expect(
        summarizer().summarize(request(conversation, { signal: controller.signal })),
      ).rejects.toThrow(OpenAIAbortedError);
      expect(fake.requests).toHaveLength(1);
      fake.reset();
      await expect(
        summarizer().summarize(request(conversation, { signal: AbortSignal.abort() })),
      ).rejects.toMatchObject({ code: 'aborted' });
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('the API key', () => {
    const key = 'sk-proj-SUMMARYKEY0123456789abcdef';
    const leaks = (text: string) => text.includes(key) || text.includes(key.slice(-12));

    it('is absent from errors, logs, inspect, toString and JSON, even when the server echoes it', async () => {
      const echo = {
        error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: key },
      };
      fake.script(
        'responses',
        { type: 'status', status: 500, body: echo },
        { type: 'status', status: 401, body: echo },
      );
      const { lines, logger } = captureLogger();
      const s = summarizer({ apiKey: key, logger });
      const err = await s.summarize(request(conversation)).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'provider', status: 401 });
      expect((err as Error).message).toMatch(/HTTP 401/);
      const texts = [
        (err as Error).message,
        String(err),
        inspect(err, { depth: 20, showHidden: true }),
        JSON.stringify(err),
        String((err as Error).cause),
        (err as Error).stack ?? '',
        ...lines,
        inspect(s, { depth: 20, showHidden: true }),
        String(s),
        JSON.stringify(s),
      ];
      for (const t of texts) expect(leaks(t)).toBe(false);
      expect(JSON.stringify(fake.requests)).not.toContain(key);
    });
  });

  describe('prompt and schema', () => {
    // Any change to what the model reads shows in review as a diff of these files.
    it('instructions and the JSON schema sent as text.format', async () => {
      await expect(SUMMARY_INSTRUCTIONS).toMatchFileSnapshot('__snapshots__/summary-instructions.txt');
      await expect(JSON.stringify(summaryTextFormat(), null, 2)).toMatchFileSnapshot(
        '__snapshots__/summary-schema.json',
      );
    });
  });
});

describe('the fake’s stand-in answers to summary requests', () => {
  it('no script: no summary; quotingResponder: the first clause of each user turn, dated, within the limit', async () => {
    expect((await summarizer().summarize(request(conversation))).text).toBe('');
    const smoke = await startFakeOpenAI({ responses: quotingResponder() });
    try {
      const result = await createOpenAISummarizer({ apiKey: API_KEY, baseURL: smoke.url }).summarize(
        request(conversation),
      );
      // Each user turn's first clause of 3 words or more, its first 12 words.
      expect(result.text).toBe(
        'On 2026-02-01, the user said: I moved to Lisbon in March, and I work night shifts as; My sister Ana visits next week.',
      );
      expect(result.sources?.map((s) => s.turnId)).toEqual([u1.id, u2.id]);
      // Within the byte limit: the second turn does not fit in 100 bytes.
      const short = await createOpenAISummarizer({ apiKey: API_KEY, baseURL: smoke.url }).summarize(
        request(conversation, { maxBytes: 100 }),
      );
      expect(short.sources?.map((s) => s.turnId)).toEqual([u1.id]);
    } finally {
      await smoke.close();
    }
  });
});

describe('inside MemoryEngine', () => {
  it('engine.summarize stores the model’s summary with the named turns as evidence, and counts its usage', async () => {
    // A stand-in model: no beliefs from extraction; a summary of the user turns, naming them.
    const model = await startFakeOpenAI({
      responses: (req) => {
        if (!isSummaryRequest(req)) return { ops: [] };
        const data = summaryData(req);
        const user = data.turns.filter((t) => t.role === 'user');
        return {
          summary: `On ${user[0]!.day}, the user said they moved to Lisbon and that their sister Ana visits next week.`,
          turns: user.map((t) => t.n),
        };
      },
    });
    try {
      const common = { apiKey: API_KEY, baseURL: model.url, retry: FAST_RETRY };
      const engine = new MemoryEngine({
        store: createMemoryStore(),
        extractor: createOpenAIExtractor(common),
        summarizer: createOpenAISummarizer(common),
        // Budgets on, so the engine counts usage per user in the store.
        config: { summaryBytes: 200, budgets: { llmCallsPerUser: 100 } },
      });
      const at = (minute: number) => `2026-02-01T10:0${minute}:00.000Z`;
      const texts: [string, 'user' | 'assistant'][] = [
        ['I moved to Lisbon last month.', 'user'],
        ['Welcome to Lisbon! How do you like it?', 'assistant'],
        ['My sister Ana visits next week.', 'user'],
      ];
      await engine.accept(
        texts.map(([text, role], position) => ({
          scope: { userId: 'maya' },
          sessionId: 's1',
          position,
          role,
          text,
          at: at(position),
        })),
      );
      await engine.flush({ userId: 'maya' });
      const summary = await engine.summarize({ userId: 'maya' }, 's1');

      const requests = model.requestsFor('responses');
      expect(requests).toHaveLength(2);
      const sent = summaryData(requests[1]!);
      expect(sent.maxBytes).toBe(200);
      expect(sent.turns.map((t) => [t.n, t.role, t.text])).toEqual([
        [1, 'user', 'I moved to Lisbon last month.'],
        [2, 'assistant', 'Welcome to Lisbon! How do you like it?'],
        [3, 'user', 'My sister Ana visits next week.'],
      ]);
      expect(summary).toMatchObject({
        kind: 'summary',
        subject: 'conversation',
        status: 'active',
        statement:
          'On 2026-02-01, the user said they moved to Lisbon and that their sister Ana visits next week.',
        validFrom: at(0),
        validTo: at(2),
      });
      expect(summary!.value).toBe(summary!.statement);
      expect(summary!.evidence.map((e) => [e.sessionId, e.position, e.role, e.quote])).toEqual([
        ['s1', 0, 'user', 'I moved to Lisbon last month.'],
        ['s1', 2, 'user', 'My sister Ana visits next week.'],
      ]);
      const usage = await engine.usage({ userId: 'maya' });
      expect(usage.llmCalls.used).toBe(2);
      expect(usage.inputTokens.used).toBe(requests[0]!.inputTokens + requests[1]!.inputTokens);
      expect(engine.stats()).toMatchObject({ llmCalls: 2, summaries: 1 });
      await engine.close();
    } finally {
      await model.close();
    }
  });
});
