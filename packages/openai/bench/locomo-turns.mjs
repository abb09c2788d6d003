// Tokens per turn of the OpenAI extractor on LoCoMo turns (issue 25, item 2).
//
// Method: the first N turns of LoCoMo's first conversation (read from ../shared/bench/locomo10.json, never copied
// into the repository) are fed as the LoCoMo eval feeds them: every turn accepted with role `user` and the text
// `[8 May, 2023] Caroline: …` (plus a shared photo's caption), one user, then the engine's worker runs, so each turn is
// one extraction call with the candidates the engine offers (the user's current beliefs most related to the turn).
// Everything is real except the model: the real MemoryEngine + store-memory, the real OpenAIExtractor and
// OpenAIEmbedder over the real `openai` client, against the fake server of `@mem01/openai/testing`. The fake answers
// each extraction request with what the offline reference extractor (`@mem01/local`) draws from the same turn and
// candidates, written in the extraction output schema (`extractorResponder`): the output is what a model would say
// about the turn, so its size measures the schema's verbosity. Tokens are the fake's count: chars/4 of what it
// received (instructions + input + the JSON schema) and of the output text it sent.
import { existsSync, readFileSync } from 'node:fs';
import { MemoryEngine } from '@mem01/engine';
import { createLocalExtractor } from '@mem01/local';
import { createMemoryStore } from '@mem01/store-memory';
import {
  createOpenAIEmbedder,
  createOpenAIExtractor,
  EXTRACTION_INSTRUCTIONS,
  extractionTextFormat,
} from '../dist/index.js';
import { extractionData, extractorResponder, startFakeOpenAI } from '../dist/testing/index.js';

/** Targets of issue 25.2, per turn: the per-turn part of the input, and the output. */
export const LOCOMO_TARGETS = { dynamicInputTokensPerTurnMax: 600, outputTokensPerTurnMax: 100 };

const MONTHS = 'january february march april may june july august september october november december'.split(
  ' ',
);

/** "1:56 pm on 8 May, 2023" → ISO time (UTC), or null. */
function sessionTime(text) {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text ?? '');
  if (!m) return null;
  const month = MONTHS.indexOf(m[5].toLowerCase());
  if (month < 0) return null;
  const hour = (Number(m[1]) % 12) + (m[3].toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/** The first `limit` turns of LoCoMo conversation `index`, as engine turn texts with their session times. */
export function locomoTurns(path, limit, index = 0) {
  const data = JSON.parse(readFileSync(path, 'utf8'));
  const conv = data[index].conversation;
  const sessions = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter(Boolean)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns = [];
  for (const n of sessions) {
    const dateText = conv[`session_${n}_date_time`] ?? '';
    const at = sessionTime(dateText) ?? new Date(Date.UTC(2023, 0, n)).toISOString();
    const day = dateText.replace(/^.*\bon\s+/i, '') || at.slice(0, 10);
    for (const t of conv[`session_${n}`]) {
      if (turns.length >= limit) return { sampleId: data[index].sample_id, turns };
      const photo = t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : '';
      const body = `${t.text ?? ''}${photo}`.trim() || '(no text)';
      // The eval's default turn format (`date-speaker`).
      turns.push({ session: n, at, text: `[${day}] ${t.speaker}: ${body}` });
    }
  }
  return { sampleId: data[index].sample_id, turns };
}

const pct = (values, p) => {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const STOP = new Set(
  'i my me a an the and to of in at on for is am are was be it this that with as we our you your hi so just now'.split(
    ' ',
  ),
);

/**
 * The dense reference: what `@mem01/local` draws, plus, for every user turn it draws nothing from, one claim quoting
 * the turn's first clause (as `quotingResponder` does). The offline extractor recognises few of LoCoMo's phrasings, so
 * on its own it leaves most turns empty and the user with few beliefs; an LLM extracts from most turns, and then the
 * engine offers up to its cap of 20 candidates per call. This reference gives that load.
 */
function denseReference() {
  const local = createLocalExtractor();
  return {
    name: 'local+quoting',
    async extract(request) {
      const result = await local.extract(request);
      const operations = [...result.operations];
      for (const t of request.turns) {
        if (t.role !== 'user' || operations.some((op) => op.evidence.some((e) => e.turnId === t.id)))
          continue;
        // The speaker's words, after the eval's "[date] Name: " prefix.
        const said = t.text.replace(/^\[[^\]]*\]\s*[^:]{1,40}:\s*/, '');
        const clause = (said.split(/[.!?;]/).find((s) => s.trim().split(/\s+/).length >= 3) ?? said).trim();
        const quote = clause.split(/\s+/).slice(0, 12).join(' ');
        if (quote.split(/\s+/).length < 3 || !t.text.includes(quote)) continue;
        const words = (quote.toLowerCase().match(/[a-z]+/g) ?? []).filter(
          (w) => !STOP.has(w) && w.length > 2,
        );
        const attribute = words.slice(0, 2).join('_') || 'note';
        const same = request.candidates.find((c) => c.attribute === attribute);
        const value = quote.split(/\s+/).slice(-3).join(' ');
        const evidence = [{ turnId: t.id, quote }];
        if (same && same.value === value) operations.push({ op: 'confirm', id: same.id, evidence });
        else
          operations.push({
            op: 'add',
            kind: 'fact',
            subject: 'user',
            attribute,
            value,
            statement: `The user said: ${quote}.`,
            confidence: 0.8,
            evidence,
            validFrom: null,
            validTo: null,
          });
      }
      return { operations };
    },
  };
}

/** The reference extractors the fake answers with (see the method above). */
export const REFERENCES = {
  local: { make: () => createLocalExtractor(), label: '@mem01/local' },
  dense: { make: denseReference, label: '@mem01/local + one quoting claim per turn it leaves empty' },
};

/**
 * Runs the LoCoMo-turns mode with one reference. Returns null (with a note) when the data file is missing.
 * @param {{ path: string, limit: number, notes: string[], reference: 'local' | 'dense' }} options
 */
export async function runLocomoTurns({ path, limit, notes, reference = 'local' }) {
  if (!existsSync(path)) {
    notes.push(`LoCoMo turns skipped: ${path} not found`);
    return null;
  }
  const { sampleId, turns } = locomoTurns(path, limit);
  const fake = await startFakeOpenAI({
    embeddingDimensions: 256,
    responses: extractorResponder(REFERENCES[reference].make()),
  });
  let clockAt = Date.parse(turns[0].at);
  const key = 'sk-bench-not-a-real-key-000000';
  let outputTokens = 0;
  const extractor = createOpenAIExtractor({
    apiKey: key,
    baseURL: fake.url,
    onUsage: (e) => {
      outputTokens += e.usage.outputTokens ?? 0;
    },
  });
  const embedder = createOpenAIEmbedder({ apiKey: key, baseURL: fake.url, dimensions: 256 });
  const store = createMemoryStore();
  const engine = new MemoryEngine({ store, extractor, embedder, clock: () => new Date(clockAt) });
  const scope = { userId: `locomo-${sampleId}` };
  try {
    // As memSession does: each turn is accepted after its run, and the worker extracts it before the next one.
    for (const [position, t] of turns.entries()) {
      clockAt = Math.max(clockAt, Date.parse(t.at));
      await engine.accept([
        { scope, sessionId: `session_${t.session}`, position, role: 'user', text: t.text, at: t.at },
      ]);
      await engine.flush(scope);
    }
    const stats = engine.stats();
    const calls = fake.requestsFor('responses');
    const staticPrefix = Math.ceil(
      (EXTRACTION_INSTRUCTIONS.length + JSON.stringify(extractionTextFormat()).length) / 4,
    );
    const input = calls.map((r) => r.inputTokens);
    const dynamic = input.map((x) => x - staticPrefix);
    const candidates = calls.map((r) => extractionData(r).candidates.length);
    const inputTokens = input.reduce((a, b) => a + b, 0);
    const active = await engine.list(scope, { limit: 1000 });
    const sum = (xs) => xs.reduce((a, b) => a + b, 0);
    const n = turns.length;
    return {
      name: `LoCoMo turns, reference ${reference}`,
      reference: REFERENCES[reference].label,
      data: `locomo10.json conversation ${sampleId}, first ${n} turns (eval format date-speaker, role user)`,
      turns: n,
      llmCalls: calls.length,
      failures: stats.failures,
      inputTokensPerTurn: Math.round(inputTokens / n),
      staticPrefixTokensPerCall: staticPrefix,
      dynamicInputTokensPerTurn: Math.round(sum(dynamic) / n),
      dynamicInputTokensPerCall: { p50: pct(dynamic, 50), p95: pct(dynamic, 95), max: Math.max(...dynamic) },
      outputTokensPerTurn: Math.round(outputTokens / n),
      candidatesPerCall: {
        mean: Math.round((sum(candidates) / Math.max(1, calls.length)) * 10) / 10,
        max: Math.max(0, ...candidates),
      },
      activeBeliefs: active.items.filter((b) => b.kind !== 'episode').length,
      targets: {
        ...LOCOMO_TARGETS,
        dynamicInputMet: Math.round(sum(dynamic) / n) <= LOCOMO_TARGETS.dynamicInputTokensPerTurnMax,
        outputMet: Math.round(outputTokens / n) <= LOCOMO_TARGETS.outputTokensPerTurnMax,
      },
      method:
        'Each turn accepted then flushed through the real MemoryEngine (store-memory) with the real OpenAIExtractor and OpenAIEmbedder over the real openai client against the fake server; the fake answers each extraction with what @mem01/local extracts from the same turn and candidates, written in the output schema (extractorResponder). Tokens = chars/4 of what the fake received and sent; static prefix = instructions + JSON schema.',
    };
  } finally {
    await engine.close();
    await fake.close();
  }
}
