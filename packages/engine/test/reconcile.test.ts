import { describe, expect, it } from 'vitest';
import { ExtractionError } from '../src/errors.js';
import { groundQuote } from '../src/grounding.js';
import type { AddOperation, ExtractionOperation } from '../src/ports.js';
import {
  beliefKey,
  combineConfidence,
  type ReconcileOptions,
  reconcile,
  validateOperations,
} from '../src/reconcile.js';
import type { Belief } from '../src/types.js';
import { belief, scope, T1, turn } from './helpers.js';

const opts: ReconcileOptions = {
  scope,
  now: T1,
  pendingBelow: 0.5,
  source: 'extracted',
  actor: 'test',
  maxTextBytes: 4096,
  requireGrounding: true,
};

// As the engine reads it: by id only what operations name by id; active beliefs by key.
function state(...beliefs: Belief[]) {
  return {
    byId: new Map(beliefs.filter((b) => b.status !== 'active').map((b) => [b.id, b])),
    activeByKey: new Map(
      beliefs.filter((b) => b.status === 'active').map((b) => [beliefKey(b.subject, b.attribute), b]),
    ),
  };
}

const add = (attribute: string, value: string, quote: string, confidence = 0.9): AddOperation => ({
  op: 'add',
  kind: 'fact',
  subject: 'user',
  attribute,
  value,
  statement: `The user's ${attribute} is ${value}.`,
  confidence,
  evidence: [{ turnId: 't1', quote }],
});

describe('reconcile: the lifecycle table', () => {
  const nyc = belief('home_city', 'NYC');
  const cases: Array<{
    name: string;
    ops: ExtractionOperation[];
    text: string;
    existing: Belief[];
    expect: {
      inserts: Array<Partial<Belief>>;
      updates: Array<{ id: string; status?: string }>;
      dropped: number;
    };
  }> = [
    {
      name: 'a new key adds an active belief',
      ops: [add('home_city', 'NYC', 'I live in NYC')],
      text: 'I live in NYC',
      existing: [],
      expect: {
        inserts: [{ attribute: 'home_city', value: 'NYC', status: 'active', supersedes: null }],
        updates: [],
        dropped: 0,
      },
    },
    {
      name: 'a different value supersedes the active belief',
      ops: [add('home_city', 'SF', 'I moved to SF')],
      text: 'I moved to SF',
      existing: [nyc],
      expect: {
        inserts: [{ value: 'SF', status: 'active', supersedes: nyc.id }],
        updates: [{ id: nyc.id, status: 'superseded' }],
        dropped: 0,
      },
    },
    {
      name: 'the same value (any case, trailing dot) confirms without a duplicate',
      ops: [add('home_city', 'nyc.', 'I live in NYC')],
      text: 'I live in NYC',
      existing: [nyc],
      expect: { inserts: [], updates: [{ id: nyc.id, status: 'active' }], dropped: 0 },
    },
    {
      name: 'low confidence becomes pending and retires nothing',
      ops: [add('home_city', 'LA', 'maybe LA', 0.3)],
      text: 'I might move, maybe LA',
      existing: [nyc],
      expect: { inserts: [{ value: 'LA', status: 'pending', supersedes: null }], updates: [], dropped: 0 },
    },
    {
      name: 'an ungrounded quote is dropped',
      ops: [add('home_city', 'Paris', 'I live in Paris')],
      text: 'I live in NYC',
      existing: [nyc],
      expect: { inserts: [], updates: [], dropped: 1 },
    },
    {
      name: 'retract ends the belief without a replacement',
      ops: [{ op: 'retract', id: nyc.id, evidence: [{ turnId: 't1', quote: 'not in NYC anymore' }] }],
      text: 'I am not in NYC anymore',
      existing: [nyc],
      expect: { inserts: [], updates: [{ id: nyc.id, status: 'retracted' }], dropped: 0 },
    },
    {
      name: 'supersede by id replaces on the same key',
      ops: [
        {
          op: 'supersede',
          id: nyc.id,
          value: 'Boston',
          statement: 'The user lives in Boston.',
          confidence: 0.9,
          evidence: [{ turnId: 't1', quote: 'Boston now' }],
        },
      ],
      text: 'Boston now',
      existing: [nyc],
      expect: {
        inserts: [{ value: 'Boston', attribute: 'home_city', supersedes: nyc.id, status: 'active' }],
        updates: [{ id: nyc.id, status: 'superseded' }],
        dropped: 0,
      },
    },
    {
      name: 'two adds on one key in one batch: the later supersedes the earlier, one update per record',
      ops: [add('home_city', 'LA', 'LA'), add('home_city', 'SF', 'SF')],
      text: 'LA then SF',
      existing: [nyc],
      expect: {
        inserts: [
          { value: 'LA', status: 'superseded' },
          { value: 'SF', status: 'active' },
        ],
        updates: [{ id: nyc.id, status: 'superseded' }],
        dropped: 0,
      },
    },
    {
      name: 'confirm of a belief that is no longer active is dropped',
      ops: [{ op: 'confirm', id: nyc.id, evidence: [{ turnId: 't1', quote: 'NYC' }] }],
      text: 'NYC',
      existing: [{ ...nyc, status: 'superseded' }],
      expect: { inserts: [], updates: [], dropped: 1 },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const plan = reconcile(c.ops, [turn('t1', c.text)], state(...c.existing), opts);
      expect(plan.inserts.map((b) => b)).toMatchObject(c.expect.inserts);
      expect(plan.updates.map((u) => ({ id: u.id, status: u.set.status }))).toEqual(
        c.expect.updates.map((u) => ({ id: u.id, status: u.status })),
      );
      expect(plan.dropped).toHaveLength(c.expect.dropped);
      for (const u of plan.updates) {
        expect(u.expectedVersion).toBe(c.existing.find((b) => b.id === u.id)?.version);
      }
    });
  }

  it('links both ways and stamps invalidatedAt on supersede', () => {
    const plan = reconcile([add('home_city', 'SF', 'SF')], [turn('t1', 'SF')], state(nyc), opts);
    const sf = plan.inserts[0]!;
    const upd = plan.updates[0]!;
    expect(sf.supersedes).toBe(nyc.id);
    expect(upd.set.supersededBy).toBe(sf.id);
    expect(upd.set.invalidatedAt).toBe(T1);
    expect(plan.audit.map((a) => a.action)).toEqual(['supersede']);
    expect(JSON.stringify(plan.audit)).not.toContain('SF');
  });

  it('a confirm merges evidence once per turn and raises confidence', () => {
    const plan = reconcile(
      [add('home_city', 'NYC', 'NYC'), add('home_city', 'NYC', 'live in NYC')],
      [turn('t1', 'I live in NYC')],
      state(nyc),
      opts,
    );
    const upd = plan.updates[0]!;
    expect(upd.set.evidence).toHaveLength(1);
    expect(upd.set.confidence).toBeGreaterThan(nyc.confidence);
  });

  it('assistant turns are never evidence', () => {
    const plan = reconcile(
      [
        {
          ...add('home_city', 'SF', 'You live in SF'),
          evidence: [{ turnId: 'a1', quote: 'You live in SF' }],
        },
      ],
      [turn('a1', 'You live in SF', 'assistant')],
      state(),
      opts,
    );
    expect(plan.inserts).toHaveLength(0);
    expect(plan.dropped[0]?.reason).toBe('ungrounded');
  });

  it('a correction source supersedes with confidence 1 and needs no quote', () => {
    const plan = reconcile(
      [{ ...add('home_city', 'Oakland', ''), evidence: [], confidence: 0.2 }],
      [],
      state(nyc),
      { ...opts, source: 'correction', requireGrounding: false },
    );
    expect(plan.inserts[0]).toMatchObject({
      value: 'Oakland',
      confidence: 1,
      status: 'active',
      source: 'correction',
    });
    expect(plan.updates[0]?.set.status).toBe('superseded');
  });
});

describe('validateOperations', () => {
  const ids = new Set(['b1']);
  const bad: Array<[string, unknown]> = [
    ['unknown op', { op: 'delete', id: 'b1' }],
    ['unknown kind', { ...add('a', 'b', 'q'), kind: 'secret' }],
    ['NaN confidence', { ...add('a', 'b', 'q'), confidence: Number.NaN }],
    ['confidence above 1', { ...add('a', 'b', 'q'), confidence: 1.5 }],
    ['empty value', { ...add('a', '', 'q') }],
    ['id not among candidates', { op: 'confirm', id: 'b2', evidence: [] }],
    ['evidence not an array', { ...add('a', 'b', 'q'), evidence: 'q' }],
    ['not an object', 42],
  ];
  for (const [name, op] of bad) {
    it(`rejects ${name} with ExtractionError`, () => {
      expect(() => validateOperations([op], ids, 4096)).toThrow(ExtractionError);
    });
  }
  it('accepts well-formed operations', () => {
    expect(
      validateOperations([add('a', 'b', 'q'), { op: 'retract', id: 'b1', evidence: [] }], ids, 4096),
    ).toHaveLength(2);
  });
});

describe('helpers', () => {
  it('grounding (the one rule, groundQuote) ignores case, whitespace runs and quote styles only', () => {
    expect(groundQuote('so, i live in nyc!', 'I  live in\nNYC')).toBe('i live in nyc');
    expect(groundQuote('I live in NYC', 'I live in LA')).toBeNull();
    expect(groundQuote('anything', '')).toBeNull();
  });
  it('noisy-or confidence stays below 1 unless one is certain', () => {
    expect(combineConfidence(0.9, 0.9)).toBeCloseTo(0.99);
    expect(combineConfidence(0.5, 0.5)).toBeCloseTo(0.75);
    expect(combineConfidence(1, 0.1)).toBe(1);
  });
});

describe('reconcile: episodes share the lifecycle of the beliefs drawn from their turn', () => {
  const ev = (sessionId: string, position: number) => ({
    sessionId,
    position,
    role: 'user' as const,
    quote: 'x',
    at: '2026-01-01T00:00:00.000Z',
  });
  const episodeOf = (sessionId: string, position: number, text: string) =>
    belief(`episode:${sessionId}:${position}`, text, {
      kind: 'episode',
      evidence: [ev(sessionId, position)],
    });
  const nyc = belief('home_city', 'NYC', { evidence: [ev('s0', 0)] });
  const rent = belief('rent', '$2,400', { evidence: [ev('s0', 0)] });
  const said = episodeOf('s0', 0, 'I live in NYC and pay $2,400 rent');
  const other = episodeOf('s0', 1, 'I like tea');

  it('a superseded belief retires the episode of its turn, linked to the belief that replaced it', () => {
    const plan = reconcile(
      [add('home_city', 'SF', 'home_city=SF')],
      [{ ...turn('t1', 'home_city=SF'), sessionId: 's1' }],
      { ...state(nyc, rent), episodes: [said, other] },
      opts,
    );
    const sf = plan.inserts[0]!;
    expect(plan.updates.find((u) => u.id === nyc.id)?.set).toMatchObject({ status: 'superseded' });
    expect(plan.updates.find((u) => u.id === said.id)?.set).toMatchObject({
      status: 'superseded',
      supersededBy: sf.id,
    });
    // Another turn's episode, and the rent belief from the same turn, are untouched.
    expect(plan.updates.map((u) => u.id)).not.toContain(other.id);
    expect(plan.updates.map((u) => u.id)).not.toContain(rent.id);
  });

  it('a retracted belief retracts the episode of its turn', () => {
    const plan = reconcile(
      [{ op: 'retract', id: nyc.id, evidence: [{ turnId: 't1', quote: '!home_city' }] }],
      [turn('t1', '!home_city')],
      { byId: new Map([[nyc.id, nyc]]), activeByKey: new Map(), episodes: [said] },
      opts,
    );
    expect(plan.updates.find((u) => u.id === said.id)?.set).toMatchObject({
      status: 'retracted',
      supersededBy: null,
    });
  });

  it('a turn that is the source of the new value keeps its episode', () => {
    // The belief being replaced and its replacement both come from turn s0:0 (a user correcting themself mid-turn).
    const plan = reconcile(
      [add('home_city', 'SF', 'SF')],
      [{ ...turn('t1', 'I live in NYC, no, SF'), sessionId: 's0', position: 0 }],
      { ...state(nyc), episodes: [said] },
      opts,
    );
    expect(plan.updates.map((u) => u.id)).not.toContain(said.id);
  });

  it('without episodes in state nothing else changes', () => {
    const plan = reconcile(
      [add('home_city', 'SF', 'home_city=SF')],
      [turn('t1', 'home_city=SF')],
      state(nyc),
      opts,
    );
    expect(plan.updates.map((u) => u.id)).toEqual([nyc.id]);
  });
});

describe('reconcile: near repeats (state.nearRepeats)', () => {
  const lisbon = belief('home_city', 'Lisbon');
  const text = 'residence_town=Lisbon';

  it('an add on a free key that nearly repeats an active belief confirms it: nothing inserted', () => {
    const plan = reconcile(
      [add('residence_town', 'Lisbon', text)],
      [turn('t1', text)],
      {
        ...state(lisbon),
        nearRepeats: new Map([[0, { belief: lisbon }]]),
      },
      opts,
    );
    expect(plan.inserts).toEqual([]);
    expect(plan.updates).toHaveLength(1);
    expect(plan.updates[0]).toMatchObject({ id: lisbon.id, expectedVersion: lisbon.version });
    expect(plan.updates[0]?.set.evidence?.map((e) => e.quote)).toEqual([text]);
    expect(plan.updates[0]?.set.confidence).toBe(combineConfidence(0.8, 0.9));
    expect(plan.audit.map((a) => a.action)).toEqual(['confirm']);
    expect(plan.touched).toEqual([lisbon.id]);
  });

  it('the key rules come first: a new value on the key of an active belief supersedes it', () => {
    const porto = belief('home_city', 'Porto');
    const other = belief('residence_town', 'Lisbon');
    const plan = reconcile(
      [add('home_city', 'Porto', 'home_city=Porto')],
      [turn('t1', 'home_city=Porto')],
      {
        ...state(lisbon, other),
        nearRepeats: new Map([[0, { belief: other }]]),
      },
      opts,
    );
    expect(plan.inserts.map((b) => b.value)).toEqual([porto.value]);
    expect(plan.updates.map((u) => [u.id, u.set.status])).toEqual([[lisbon.id, 'superseded']]);
  });

  it('an add may repeat an earlier add of the batch: both land on one belief', () => {
    const both = 'home_city=Lisbon; residence_town=Lisbon';
    const plan = reconcile(
      [
        add('home_city', 'Lisbon', 'home_city=Lisbon'),
        add('residence_town', 'Lisbon', 'residence_town=Lisbon'),
      ],
      [turn('t1', both)],
      { ...state(), nearRepeats: new Map([[1, { op: 0 }]]) },
      opts,
    );
    expect(plan.inserts).toHaveLength(1);
    expect(plan.inserts[0]?.attribute).toBe('home_city');
    expect(plan.inserts[0]?.evidence.map((e) => e.quote)).toEqual(['home_city=Lisbon']);
    expect(plan.audit.map((a) => a.action)).toEqual(['add', 'confirm']);
  });

  it('a repeated belief no longer active as the plan leaves it is not confirmed: the add inserts', () => {
    const plan = reconcile(
      [
        { op: 'retract', id: lisbon.id, evidence: [{ turnId: 't1', quote: '!home_city' }] },
        add('residence_town', 'Lisbon', text),
      ],
      [turn('t1', `!home_city; ${text}`)],
      { ...state(lisbon), nearRepeats: new Map([[1, { belief: lisbon }]]) },
      opts,
    );
    expect(plan.inserts.map((b) => b.attribute)).toEqual(['residence_town']);
    expect(plan.updates.map((u) => [u.id, u.set.status])).toEqual([[lisbon.id, 'retracted']]);
  });
});

describe('reconcile: what an ended capture grant captured', () => {
  const hidden = belief('home_city', 'NYC', { grantId: 'g-ended' });
  const live = belief('pet', 'cat', { grantId: 'g-live' });
  const ended = (...beliefs: Belief[]) => ({ ...state(...beliefs), endedGrants: new Set(['g-ended']) });

  it('is never confirmed: the same value observed again is a new belief, under the new grant, superseding it', () => {
    const plan = reconcile([add('home_city', 'NYC', 'NYC')], [turn('t1', 'I live in NYC')], ended(hidden), {
      ...opts,
      grantId: 'g-new',
    });
    expect(plan.inserts.map((b) => [b.value, b.grantId, b.supersedes])).toEqual([
      ['NYC', 'g-new', hidden.id],
    ]);
    expect(plan.updates).toMatchObject([{ id: hidden.id, set: { status: 'superseded' } }]);
  });

  it('an extractor’s confirm of it is dropped; beliefs of a grant still in force are confirmed as before', () => {
    const plan = reconcile(
      [
        { op: 'confirm', id: hidden.id, evidence: [{ turnId: 't1', quote: 'NYC' }] },
        { op: 'confirm', id: live.id, evidence: [{ turnId: 't1', quote: 'cat' }] },
        add('pet', 'cat', 'cat'),
      ],
      [turn('t1', 'NYC, and my cat')],
      ended(hidden, live),
      opts,
    );
    expect(plan.dropped.map((d) => d.reason)).toEqual(['not_active']);
    expect(plan.inserts).toEqual([]);
    expect(plan.updates.map((u) => u.id)).toEqual([live.id]);
  });

  it('a plan without a grant inserts beliefs without one', () => {
    const plan = reconcile([add('diet', 'vegan', 'vegan')], [turn('t1', 'vegan')], state(), opts);
    expect(plan.inserts[0]).not.toHaveProperty('grantId');
  });
});
