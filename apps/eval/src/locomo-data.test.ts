import { InvalidInputError } from '@mem01/engine';
import { describe, expect, it } from 'vitest';
import { syntheticLocomo, syntheticLongMemEval } from '../test/synthetic.js';
import {
  LOCOMO_CATEGORIES,
  LONGMEMEVAL_CATEGORIES,
  normalizeEvidence,
  normalizeEvidenceId,
  parseLocomo,
  parseSessionDate,
  sliceData,
} from './locomo-data.js';

describe('normalizeEvidenceId', () => {
  it.each([
    ['D1:3', ['D1:3'], false, 0],
    ['D8:6; D9:17', ['D8:6', 'D9:17'], true, 0],
    ['D:11:26', ['D11:26'], true, 0],
    ['D30:05', ['D30:5'], true, 0],
    ['D', [], false, 1],
    ['D1:2 D1:3  D1:4', ['D1:2', 'D1:3', 'D1:4'], true, 0],
    ['D4:1,D4:2', ['D4:1', 'D4:2'], true, 0],
    ['', [], false, 0],
  ])('%j → %j', (raw, ids, repaired, dropped) => {
    expect(normalizeEvidenceId(raw)).toEqual({ ids, repaired, dropped });
  });

  it('deduplicates across entries and counts non-strings as dropped', () => {
    expect(normalizeEvidence(['D1:1', 'D01:1', 'D1:2; D1:1', 7])).toEqual({
      ids: ['D1:1', 'D1:2'],
      repaired: 2,
      dropped: 1,
    });
  });
});

describe('parseSessionDate', () => {
  it('reads the LoCoMo format as UTC, am and pm, 12 o’clock edge cases', () => {
    expect(parseSessionDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z');
    expect(parseSessionDate('12:04 am on 1 January, 2020')).toBe('2020-01-01T00:04:00.000Z');
    expect(parseSessionDate('12:30 pm on 29 February, 2024')).toBe('2024-02-29T12:30:00.000Z');
    expect(parseSessionDate('9:05 AM on 3 Mar 2021')).toBe('2021-03-03T09:05:00.000Z');
  });
  it('falls back to Date.parse, and null for text that is no date', () => {
    expect(parseSessionDate('2022-11-05T10:00:00Z')).toBe('2022-11-05T10:00:00.000Z');
    expect(parseSessionDate('sometime later')).toBeNull();
  });
});

describe('parseLocomo', () => {
  const data = parseLocomo(syntheticLocomo());

  it('orders sessions by number, not by key order, and keeps any speaker names', () => {
    const a = data.conversations[0];
    expect(a?.speakers).toEqual(['Ingrid', 'Tomasz']);
    expect(a?.sessions.map((s) => s.index)).toEqual([1, 2, 10]);
    expect(a?.sessions[2]?.at).toBe('2021-06-18T16:30:00.000Z'); // unreadable date: the day after session 2
    expect(a?.sessions[0]?.turns[2]?.imageCaption).toBe('a photo of a lighthouse on a rocky coast');
  });

  it('normalises evidence and skips questions left without any', () => {
    const qs = data.conversations[0]?.questions ?? [];
    expect(qs.map((q) => q.evidence)).toEqual([
      ['D1:1'],
      ['D2:1'],
      ['D1:1', 'D2:2'],
      ['D1:1'],
      ['D1:3', 'D1:2'],
      ['D10:1'],
    ]);
    expect(data.report).toEqual({
      conversations: 2,
      sessions: 4,
      turns: 9,
      questions: 8,
      skippedNoEvidence: 2,
      repairedIds: 4,
      droppedIds: 1,
      unknownIds: 0,
    });
  });

  it('keeps unknown categories and counts evidence naming no turn', () => {
    const doc = syntheticLocomo() as { qa: { evidence: string[] }[] }[];
    doc[1]?.qa[0]?.evidence.push('D9:9');
    const d = parseLocomo(doc);
    expect(d.report.unknownIds).toBe(1);
    expect(d.conversations[1]?.questions[1]?.category).toBe(7);
  });

  it.each([
    [{}, 'data'],
    [[], 'data'],
    [[{ conversation: {} }], 'data[0].conversation'],
    [[{ conversation: { session_1: 'x' } }], 'data[0].conversation.session_1'],
    [[{ conversation: { session_1: [{ speaker: 'A' }] } }], 'data[0].conversation.session_1[0].text'],
    [
      [{ conversation: { session_1: [] }, qa: [{ question: 'q', category: 'x', evidence: [] }] }],
      'data[0].qa[0].category',
    ],
    [
      [
        { sample_id: 's', conversation: { session_1: [] } },
        { sample_id: 's', conversation: { session_1: [] } },
      ],
      'data[1].sample_id',
    ],
  ])('rejects malformed input with a typed error naming the field (%#)', (doc, field) => {
    try {
      parseLocomo(doc);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as Error).message).toContain(field);
    }
  });
});

describe('sliceData', () => {
  it('keeps the first conversations and sessions and only questions answerable from them', () => {
    const s = sliceData(parseLocomo(syntheticLocomo()), { conversations: 1, sessions: 1 });
    expect(s.conversations).toHaveLength(1);
    expect(s.conversations[0]?.sessions).toHaveLength(1);
    expect(s.conversations[0]?.questions.map((q) => q.evidence)).toEqual([
      ['D1:1'],
      ['D1:1'],
      ['D1:3', 'D1:2'],
    ]);
    expect(s.report).toMatchObject({ conversations: 1, sessions: 1, turns: 3, questions: 3 });
  });

  it('keeps the first turns of a conversation (a session cut short) and its first questions', () => {
    const s = sliceData(parseLocomo(syntheticLocomo()), { conversations: 1, turns: 2 });
    expect(s.conversations[0]?.sessions.flatMap((x) => x.turns.map((t) => t.diaId))).toEqual([
      'D1:1',
      'D1:2',
    ]);
    expect(s.conversations[0]?.questions.map((q) => q.evidence)).toEqual([['D1:1'], ['D1:1']]);
    expect(s.report).toMatchObject({ sessions: 1, turns: 2, questions: 2 });
    const first = sliceData(parseLocomo(syntheticLocomo()), { conversations: 1, turns: 2, questions: 1 });
    expect(first.conversations[0]?.questions.map((q) => q.evidence)).toEqual([['D1:1']]);
  });
});

describe('LongMemEval-shaped data (the dev60 file)', () => {
  const data = parseLocomo(syntheticLongMemEval());

  it('reads its dates as UTC and rejects impossible ones', () => {
    expect(parseSessionDate('2023/05/20 (Sat) 02:21')).toBe('2023-05-20T02:21:00.000Z');
    expect(parseSessionDate('2023/1/3 09:05')).toBe('2023-01-03T09:05:00.000Z');
    expect(parseSessionDate('2023/02/30 (Thu) 10:00')).toBeNull();
  });

  it('keeps each turn’s real role, the question’s type and date, and names its own categories', () => {
    const a = data.conversations[0];
    expect(a?.realRoles).toBe(true);
    expect(a?.sessions[0]?.turns.map((t) => t.role)).toEqual(['user', 'assistant']);
    expect(a?.sessions[1]?.at).toBe('2023-06-02T18:05:00.000Z');
    expect(a?.questions[0]).toMatchObject({
      category: 4,
      evidence: ['D1:2'],
      questionType: 'single-session-assistant',
      questionDate: '2023-06-10T09:00:00.000Z',
    });
    expect(data.categories).toBe(LONGMEMEVAL_CATEGORIES);
    expect(data.categories.adversarial).toBeNull();
  });

  it('leaves LoCoMo’s people as the user’s (no real roles) and its categories LoCoMo’s', () => {
    const locomo = parseLocomo(syntheticLocomo());
    expect(locomo.conversations[0]?.realRoles).toBe(false);
    expect(locomo.conversations[0]?.sessions[0]?.turns[0]?.role).toBeNull();
    expect(locomo.categories).toBe(LOCOMO_CATEGORIES);
  });

  it('says which field is wrong: a third speaker, an unreadable question date, types on some questions only, an unknown category', () => {
    type Doc = {
      conversation: Record<string, Record<string, unknown>[]>;
      qa: Record<string, unknown>[];
    }[];
    const doc = () => syntheticLongMemEval() as Doc;
    const speaker = doc();
    speaker[0]!.conversation.session_2![1]!.speaker = 'narrator';
    expect(() => parseLocomo(speaker)).toThrow(/session_2\[1\]\.speaker: must be "user" or "assistant"/);
    const date = doc();
    date[1]!.qa[0]!.question_date = 'next Tuesday';
    expect(() => parseLocomo(date)).toThrow(/qa\[0\]\.question_date: is not a readable date/);
    const mixed = doc();
    delete mixed[1]!.qa[0]!.question_type;
    expect(() => parseLocomo(mixed)).toThrow(/1 of 2 questions have a question_type/);
    const category = doc();
    category[1]!.qa[0]!.category = 5;
    expect(() => parseLocomo(category)).toThrow(InvalidInputError);
  });

  it('slices by sample id, and names an id the file does not hold', () => {
    expect(sliceData(data, { ids: ['lme-b'] }).conversations.map((c) => c.sampleId)).toEqual(['lme-b']);
    expect(() => sliceData(data, { ids: ['lme-b', 'nope'] })).toThrow(/no conversation with sample id nope/);
  });
});
