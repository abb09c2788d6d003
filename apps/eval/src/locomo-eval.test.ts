import type { Belief } from '@mem01/engine';
import { createMemoryStore } from '@mem01/store-memory';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticLocomo, syntheticLongMemEval } from '../test/synthetic.js';
import { parseLocomo } from './locomo-data.js';
import {
  collapseCovered,
  type EvalSystem,
  provenance,
  runLocomo,
  turnText,
  withSpelledDates,
} from './locomo-eval.js';
import { openSystem, type Variant } from './systems.js';

const data = parseLocomo(syntheticLocomo());
const conv = data.conversations[0];
if (!conv) throw new Error('fixture');

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

/** A system as the CLI opens one (mem01session's runtime, offline models), on a fresh in-memory store. */
async function system(
  variant: Partial<Variant> = {},
): Promise<EvalSystem & { store: ReturnType<typeof createMemoryStore> }> {
  const store = createMemoryStore();
  const handle = { kind: 'memory' as const, store, description: 'memory', close: () => store.close() };
  const sys = await openSystem({ episodic: true, clock: 'wall', ...variant }, handle, {});
  opened.push(
    () => handle.close(),
    () => sys.close(),
  );
  return { ...sys, store };
}

describe('turnText', () => {
  const session = conv.sessions[0];
  if (!session) throw new Error('fixture');
  const photo = session.turns[2];
  const plain = session.turns[0];
  if (!photo || !plain) throw new Error('fixture');
  it('prefixes the speaker (and the session date), and describes a shared photo', () => {
    expect(turnText(plain, session, 'speaker')).toBe(
      'Ingrid: I adopted a greyhound called Pepper last weekend.',
    );
    expect(turnText(plain, session, 'date-speaker')).toBe(
      '[3 March, 2021] Ingrid: I adopted a greyhound called Pepper last weekend.',
    );
    expect(turnText(photo, session, 'raw')).toBe(
      'Look at this. [shares a photo: a photo of a lighthouse on a rocky coast]',
    );
  });
});

describe('runLocomo', () => {
  it('ingests every turn as an episode carrying its dialogue id, and finds the evidence', async () => {
    const sys = await system();
    const result = await runLocomo({ data, system: sys, ks: [1, 5], playQuestions: false });
    expect(result.played).toBeNull();
    expect(result.conversations.map((c) => [c.sampleId, c.turns, c.activeByKind.episode])).toEqual([
      ['synth-a', 7, 7],
      ['synth-b', 2, 2],
    ]);
    expect(result.ingest.failures).toBe(0);
    expect(result.recall.queries).toBe(data.report.questions);
    // Single-hop questions that share distinctive words with their evidence turn are found at rank 1.
    expect(result.scores.byCategory['4']?.mrr).toBe(1);
    expect(result.scores.byCategory['4']?.recall[1]).toBe(1);
    expect(result.scores.all.recall[5]).toBeGreaterThan(0.5);
    expect(result.recall.episodeShare).toBeGreaterThan(0);

    const page = await sys.store.list({ userId: 'locomo:synth-a' }, { limit: 100 });
    const episodes = page.items.filter((b) => b.kind === 'episode');
    const expected = conv.sessions.flatMap((s) => s.turns.map((t) => t.diaId)).sort();
    expect(episodes.flatMap((b) => provenance(b)).sort()).toEqual(expected);
    // Every memory, extracted or episodic, maps to dialogue ids of its own conversation.
    for (const b of page.items) {
      expect(provenance(b).length).toBeGreaterThan(0);
      for (const ref of provenance(b)) expect(expected).toContain(ref);
    }
    const other = await sys.store.list({ userId: 'locomo:synth-b' }, { limit: 100 });
    expect(other.items.every((b) => b.scope.userId === 'locomo:synth-b')).toBe(true);
  });

  it('plays each question as a user turn of its own after the normal pass, and scores both modes', async () => {
    const sys = await system();
    const result = await runLocomo({ data, system: sys, ks: [1, 5] });
    const played = result.played;
    if (!played) throw new Error('the question-played mode runs by default');
    expect(played.scores.all.questions).toBe(result.scores.all.questions);
    // The asked questions are in memory, each in a conversation of its own, as memSession would have stored them.
    const page = await sys.store.list({ userId: 'locomo:synth-a' }, { limit: 100 });
    const asked = page.items.filter(
      (b) => b.kind === 'episode' && provenance(b).some((r) => r.startsWith('asked_')),
    );
    expect(asked.map((b) => b.value).sort()).toEqual(
      (conv.questions.map((q) => q.question) as string[]).sort(),
    );
    // A question asked again recalls its answer, not itself: the block holds the same evidence in both modes.
    expect(played.scores.all.blockRecall).toBeCloseTo(result.scores.all.blockRecall ?? -1, 5);
    expect(played.scores.all.recall[5]).toBeCloseTo(result.scores.all.recall[5] ?? -1, 5);
  });

  it('beliefs only: no episodes are stored or returned', async () => {
    const result = await runLocomo({ data, system: await system({ episodic: false }), ks: [5] });
    expect(result.episodic).toBe(false);
    expect(result.ingest.activeByKind.episode).toBeUndefined();
    expect(result.recall.episodeShare).toBe(0);
    expect(result.block.episodeShare).toBe(0);
    expect(result.label).toBe('beliefs only');
  });

  it('the session clock stamps storedAt with each session date', async () => {
    const sys = await system({ clock: 'session' });
    await runLocomo({ data, system: sys, ks: [5], clock: 'session', playQuestions: false });
    const page = await sys.store.list({ userId: 'locomo:synth-a' }, { limit: 100 });
    for (const b of page.items.filter((x) => x.kind === 'episode')) {
      expect(b.storedAt).toBe(b.evidence[0]?.at);
    }
    expect(new Set(page.items.map((b) => b.storedAt.slice(0, 10)))).toEqual(
      new Set(['2021-03-03', '2021-06-17', '2021-06-18']),
    );
  });

  it('finds an answer by the turn before it, not only by its words; engine overrides reach the engine', async () => {
    // Sol answers Ana's question without repeating its words; Sol's other turns share only the speaker's name.
    const doc = [
      {
        sample_id: 'ctx',
        conversation: {
          speaker_a: 'Ana',
          speaker_b: 'Sol',
          session_1_date_time: '2:00 pm on 5 May, 2020',
          session_1: [
            { speaker: 'Ana', dia_id: 'D1:1', text: 'Morning! The weather is grey again.' },
            { speaker: 'Ana', dia_id: 'D1:2', text: 'Sol, which novels have you been reading on the train?' },
            { speaker: 'Sol', dia_id: 'D1:3', text: 'Mostly Le Guin, The Dispossessed right now.' },
            { speaker: 'Ana', dia_id: 'D1:4', text: 'Nice choice.' },
          ],
          session_2_date_time: '2:00 pm on 9 May, 2020',
          session_2: [
            { speaker: 'Sol', dia_id: 'D2:1', text: 'My sister visits next week.' },
            { speaker: 'Sol', dia_id: 'D2:2', text: 'Then we cook paella together.' },
            { speaker: 'Sol', dia_id: 'D2:3', text: 'Our bakery order got lost.' },
          ],
        },
        qa: [
          {
            question: 'Which novels is Sol reading on the train?',
            answer: 'Le Guin',
            evidence: ['D1:3'],
            category: 4,
          },
        ],
      },
    ];
    const small = parseLocomo(doc);
    const run = async (contextWeight?: number) =>
      runLocomo({
        data: small,
        system: await system(
          contextWeight === undefined ? {} : { engineConfig: { ranking: { contextWeight } } },
        ),
        ks: [2],
      });
    expect((await run()).scores.all.recall[2]).toBe(1);
    // An override reaches the engine the runtime opens (what it changes is the engine's business).
    const tuned = await run(0);
    expect(tuned.system.config.ranking.contextWeight).toBe(0);
    expect(tuned.engineConfig).toEqual({ ranking: { contextWeight: 0 } });
  });

  it('refuses bad cut-offs', async () => {
    await expect(runLocomo({ data, system: await system(), ks: [] })).rejects.toThrow(RangeError);
    await expect(runLocomo({ data, system: await system(), ks: [0] })).rejects.toThrow(RangeError);
  });

  it('renders the block memSession would inject for each question and scores the evidence in it', async () => {
    const result = await runLocomo({ data, system: await system(), ks: [5] });
    expect(result.block.budgetBytes).toBe(800);
    expect(result.block.meanBytes).toBeGreaterThan(0);
    expect(result.block.meanBytes).toBeLessThanOrEqual(800);
    expect(result.block.p50Bytes).toBeGreaterThan(0);
    expect(result.block.p50Bytes).toBeLessThanOrEqual(800);
    // Bytes per evidence turn delivered: all the blocks' bytes over the evidence turns they covered, so at least their
    // bytes over every evidence turn (all delivered), and finite once one was.
    const evidence = data.conversations
      .flatMap((c) => c.questions)
      .reduce((n, q) => n + q.evidence.length, 0);
    expect(result.scores.all.blockRecall).toBeGreaterThan(0);
    expect(result.block.bytesPerEvidenceTurn).toBeGreaterThanOrEqual(
      (result.block.meanBytes * result.recall.queries) / evidence - 1e-9,
    );
    expect(Number.isFinite(result.block.bytesPerEvidenceTurn)).toBe(true);
    expect(result.block.meanItems).toBeGreaterThan(0);
    // A block holds fewer memories than the top 5 at most as many: what fits in 800 bytes.
    for (const a of [result.scores.all, ...Object.values(result.scores.byCategory)]) {
      expect(a.blockRecall).not.toBeNull();
      expect(a.blockRecall).toBeGreaterThanOrEqual(0);
      expect(a.blockRecall).toBeLessThanOrEqual(1);
    }
    // Short distinctive single-hop questions: their evidence turn is in the block.
    expect(result.scores.byCategory['4']?.blockRecall).toBe(1);
  });

  it('one long turn never aborts the run: it is split, and a turn the engine refuses is counted and skipped', async () => {
    const sys = await system();
    const { maxTextBytes, maxTurnBytes } = sys.engine.config;
    const paragraph = 'We walked along the harbour and talked about the old ferry timetable. ';
    const long = `I pasted my notes. ${paragraph.repeat(Math.ceil((maxTextBytes * 1.5) / paragraph.length))}The greyhound is called Juniper.`;
    const huge = paragraph.repeat(Math.ceil((maxTurnBytes + 100) / paragraph.length));
    const doc = [
      {
        sample_id: 'long',
        conversation: {
          speaker_a: 'Ana',
          speaker_b: 'Sol',
          session_1_date_time: '2:00 pm on 5 May, 2020',
          session_1: [
            { speaker: 'Ana', dia_id: 'D1:1', text: long },
            { speaker: 'Sol', dia_id: 'D1:2', text: huge },
            { speaker: 'Sol', dia_id: 'D1:3', text: 'My sister bakes sourdough on Sundays.' },
          ],
        },
        qa: [
          { question: 'What does Sol’s sister bake?', answer: 'sourdough', evidence: ['D1:3'], category: 4 },
          { question: 'What is the greyhound called?', answer: 'Juniper', evidence: ['D1:1'], category: 4 },
        ],
      },
    ];
    const result = await runLocomo({ data: parseLocomo(doc), system: sys, ks: [5] });
    expect(result.ingest.maxTextBytes).toBe(maxTextBytes);
    expect(result.ingest.splitTurns).toBe(1);
    expect(result.ingest.refusedTurns).toBe(1);
    expect(result.ingest.refused.map((r) => r.ref)).toEqual(['D1:2']);
    expect(result.ingest.refused[0]?.reason).toMatch(/bytes|long|text/i);
    // Every part of the long turn is an episode carrying the turn's id; the other turns went on as usual.
    const page = await sys.store.list({ userId: 'locomo:long' }, { limit: 100 });
    const episodes = page.items.filter((b) => b.kind === 'episode');
    expect(episodes.filter((b) => provenance(b).includes('D1:1')).length).toBeGreaterThan(1);
    expect(episodes.some((b) => provenance(b).includes('D1:3'))).toBe(true);
    expect(result.scores.all.recall[5]).toBe(1);
  });
});

describe('collapseCovered', () => {
  const m = (id: string, ...refs: string[]) => ({
    id,
    belief: { evidence: refs.map((ref) => ({ ref })) } as unknown as Belief,
  });
  it('drops memories whose turns better-ranked ones already cover, keeping order', () => {
    const out = collapseCovered([
      m('a', 'D1:1'),
      m('b', 'D1:1'),
      m('c', 'D1:1', 'D2:2'),
      m('d'),
      m('e', 'D3:3'),
      m('f', 'D2:2'),
    ]);
    expect(out.map((x) => x.id)).toEqual(['a', 'c', 'e']);
  });
});

describe('runLocomo on a file with real roles (LongMemEval)', () => {
  const lme = parseLocomo(syntheticLongMemEval());

  it('accepts assistant turns as the assistant’s by default: context for extraction, never episodes, kept as replies', async () => {
    const sys = await system();
    const result = await runLocomo({ data: lme, system: sys, ks: [1, 5], sessionDefault: true });
    expect(result.assistantTurns).toBe('context');
    expect(result.assistantTurnsAccepted).toBe(3);
    expect(result.conversations.map((c) => c.activeByKind.episode)).toEqual([2, 1]);
    // "What did you recommend?" has the assistant's turn as its evidence: nothing the user said holds it, and the
    // assistant's reply, kept and asked about, is found.
    expect(result.scores.byCategory['4']?.recall[5]).toBe(1);
    expect(result.scores.byCategory['1']?.recall[1]).toBe(1);
    expect(result.scores.categoryNames?.['4']).toBe('single-session + knowledge-update');
    expect(result.scores.all).toEqual(result.scores.allButAdversarial);
    expect(Object.keys(result.byQuestionType ?? {})).toEqual(['multi-session', 'single-session-assistant']);
    expect(result.byQuestionType?.['single-session-assistant']?.recall[5]).toBe(1);
  });

  it('with assistant turns kept as labelled episodes, recalls what the assistant recommended', async () => {
    const sys = await system({ assistantTurns: 'episodes' });
    const result = await runLocomo({ data: lme, system: sys, ks: [1, 5], assistantTurns: 'episodes' });
    expect(result.assistantTurnsAccepted).toBe(0);
    expect(result.conversations.map((c) => c.activeByKind.episode)).toEqual([4, 2]);
    expect(result.scores.byCategory['4']?.recall[5]).toBe(1);
    expect(
      turnText(
        lme.conversations[0]!.sessions[0]!.turns[1]!,
        lme.conversations[0]!.sessions[0]!,
        'date-speaker',
      ),
    ).toMatch(/^\[2023\/05\/20 \(Sat\) 02:21\] assistant: For a fiddle-leaf fig/);
  });
});

describe('withSpelledDates', () => {
  it('spells each ISO day of a block as the answers spell it, and leaves other text alone', () => {
    expect(withSpelledDates('[user said 2023-05-08] We moved.')).toBe(
      '[user said 2023-05-08 (8 May 2023)] We moved.',
    );
    expect(withSpelledDates('no date 2023-13-01 here')).toBe('no date 2023-13-01 here');
  });
});
