import type { Belief } from '@mem01/engine';
import { createLocalEmbedder, createLocalExtractor } from '@mem01/local';
import { createMemoryStore } from '@mem01/store-memory';
import { describe, expect, it } from 'vitest';
import { syntheticLocomo } from '../test/synthetic.js';
import { parseLocomo } from './locomo-data.js';
import { collapseCovered, type EvalSystem, provenance, runLocomo, turnText } from './locomo-eval.js';

const data = parseLocomo(syntheticLocomo());
const conv = data.conversations[0];
if (!conv) throw new Error('fixture');

function system(): EvalSystem & { store: ReturnType<typeof createMemoryStore> } {
  return { store: createMemoryStore(), extractor: createLocalExtractor(), embedder: createLocalEmbedder() };
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
    const sys = system();
    const result = await runLocomo({ data, system: sys, ks: [1, 5], episodic: true });
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

  it('beliefs only: no episodes are stored or returned', async () => {
    const result = await runLocomo({ data, system: system(), ks: [5], episodic: false });
    expect(result.ingest.activeByKind.episode).toBeUndefined();
    expect(result.recall.episodeShare).toBe(0);
    expect(result.label).toBe('mem01 beliefs only');
  });

  it('the session clock stamps storedAt with each session date', async () => {
    const sys = system();
    await runLocomo({ data, system: sys, ks: [5], episodic: true, clock: 'session' });
    const page = await sys.store.list({ userId: 'locomo:synth-a' }, { limit: 100 });
    for (const b of page.items.filter((x) => x.kind === 'episode')) {
      expect(b.storedAt).toBe(b.evidence[0]?.at);
    }
    expect(new Set(page.items.map((b) => b.storedAt.slice(0, 10)))).toEqual(
      new Set(['2021-03-03', '2021-06-17', '2021-06-18']),
    );
  });

  it("finds an answer by the turn before it (the engine's conversational context), not only by its words", async () => {
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
    const run = (contextWeight?: number) =>
      runLocomo({
        data: small,
        system: system(),
        ks: [2],
        episodic: true,
        ...(contextWeight === undefined ? {} : { engineConfig: { ranking: { contextWeight } } }),
      });
    expect((await run()).scores.all.recall[2]).toBe(1);
    expect((await run(0)).scores.all.recall[2]).toBe(0);
  });

  it('refuses bad cut-offs', async () => {
    await expect(runLocomo({ data, system: system(), ks: [], episodic: true })).rejects.toThrow(RangeError);
    await expect(runLocomo({ data, system: system(), ks: [0], episodic: true })).rejects.toThrow(RangeError);
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
