/** createMemoryTools, memoryInstructions, getMemoryContext, searchMemories and saveTurn through the real Runner. */

import { DEFAULT_CONFIG, InvalidInputError, renderContextBlock } from '@mem01/engine';
import { WordHashEmbedder } from '@mem01/engine/testing';
import { createMemoryStore } from '@mem01/store-memory';
import { Agent } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeSharedRuntimes,
  createMemoryTools,
  getMemoryContext,
  memoryInstructions,
  memSession,
  savedTurnsSessionId,
  saveTurn,
  searchMemories,
} from '../src/index.js';
import { withFaults } from '../src/testing/index.js';
import { echoModel, RecordingExtractor, runner } from './harness.js';

afterEach(() => closeSharedRuntimes());

function runtimeOptions() {
  return {
    store: createMemoryStore(),
    extractor: new RecordingExtractor(),
    embedder: new WordHashEmbedder(),
  };
}

const outputs = (model: ScriptedModel) =>
  ((model.lastCall?.request.input ?? []) as unknown[])
    .filter((i) => (i as { type?: string }).type === 'function_call_result')
    .map((i) => JSON.stringify((i as { output?: unknown }).output));

describe('createMemoryTools', () => {
  it('lets an agent add, search, list, update and delete memories; failures come back as strings', async () => {
    const opts = { ...runtimeOptions(), userId: 'tool-user' };
    const tools = await createMemoryTools(opts);
    expect(tools.map((t) => t.name)).toEqual([
      'add_memory',
      'search_memory',
      'search_memories',
      'list_memories',
      'update_memory',
      'delete_memory',
    ]);
    const model = new ScriptedModel([
      [
        functionCall(
          'add_memory',
          { kind: 'fact', attribute: 'Home City', value: 'Oslo', statement: 'The user lives in Oslo.' },
          { callId: 'a1' },
        ),
      ],
      [functionCall('search_memories', { query: 'where does the user live', limit: null }, { callId: 's1' })],
      [functionCall('update_memory', { id: 'not-a-real-id', text: 'x' }, { callId: 'u1' })],
      [assistantMessage('done')],
    ]);
    const agent = new Agent({ name: 'a', instructions: 'x', model, tools });
    await runner().run(agent, 'remember where I live');
    const out = outputs(model);
    expect(out[0]).toMatch(/remembered /);
    expect(out[1]).toMatch(/The user lives in Oslo\./);
    expect(out[2]).toMatch(/memory error: .*not found/);

    const [hit] = await searchMemories({ ...opts, query: 'Oslo' });
    expect(hit?.belief.attribute).toBe('home_city');
    const model2 = new ScriptedModel([
      [functionCall('update_memory', { id: hit!.belief.id, text: 'Bergen' }, { callId: 'u2' })],
      [functionCall('list_memories', { limit: null }, { callId: 'l1' })],
      [assistantMessage('ok')],
    ]);
    await runner().run(
      new Agent({ name: 'a', instructions: 'x', model: model2, tools }),
      'I moved to Bergen',
    );
    const out2 = outputs(model2);
    expect(out2[0]).toMatch(/updated: /);
    expect(out2[1]).toMatch(/Bergen/);
    expect(out2[1]).not.toMatch(/Oslo/);
    const [current] = await searchMemories({ ...opts, query: 'Bergen' });
    const model3 = new ScriptedModel([
      [functionCall('delete_memory', { id: current!.belief.id }, { callId: 'd1' })],
      [functionCall('list_memories', { limit: 5 }, { callId: 'l2' })],
      [assistantMessage('ok')],
    ]);
    await runner().run(new Agent({ name: 'a', instructions: 'x', model: model3, tools }), 'forget it');
    expect(outputs(model3)).toEqual([
      expect.stringMatching(/forgotten /),
      expect.stringMatching(/no memories/),
    ]);
  });

  it('readOnly offers only search and list; a failing store gives a short string, not a throw', async () => {
    const { store, faults } = withFaults(createMemoryStore());
    const tools = await createMemoryTools({ ...runtimeOptions(), store, userId: 'ro', readOnly: true });
    expect(tools.map((t) => t.name)).toEqual(['search_memory', 'search_memories', 'list_memories']);
    // The earlier name is described as deprecated, as the MCP server describes its earlier names.
    expect(tools.find((t) => t.name === 'search_memories')?.description).toBe(
      'Deprecated: the earlier name of search_memory, with the same input and output. Call search_memory.',
    );
    faults.fail('list');
    const model = new ScriptedModel([
      [functionCall('list_memories', { limit: null }, { callId: 'l1' })],
      [assistantMessage('ok')],
    ]);
    const result = await runner().run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'list');
    expect(result.finalOutput).toBe('ok');
    expect(outputs(model)[0]).toMatch(/memory error: StoreError \[store\]: injected failure in list/);
    await expect(createMemoryTools({ ...runtimeOptions(), userId: '' })).rejects.toThrow(/userId/);
  });
});

describe('memoryInstructions', () => {
  it('adds profile, query or both to the base instructions; recall failure degrades to base', async () => {
    const base = runtimeOptions();
    const { store, faults } = withFaults(base.store);
    const opts = { ...base, store, userId: 'mi' };
    await saveTurn({ ...opts, sessionId: 'mi-1', user: 'home_city=Tokyo; diet=vegan', assistant: 'noted' });
    await saveTurn({ ...opts, sessionId: 'mi-1', user: 'employer=Acme' });
    const run = async (mode: 'profile' | 'query' | 'full', input: string) => {
      const model = echoModel();
      const agent = new Agent({
        name: 'a',
        model,
        instructions: memoryInstructions('Base.', { ...opts, mode, query: () => input }),
      });
      await runner().run(agent, input);
      return model.calls[0]!.request.systemInstructions ?? '';
    };
    const profile = await run('profile', 'unrelated words');
    expect(profile).toMatch(/^Base\.\n\n<mem01-memory/);
    expect(profile).toMatch(/Tokyo/);
    expect(profile).toMatch(/Acme/);
    expect(profile).toMatch(/Memory policy/);
    const query = await run('query', 'what is my diet');
    // query mode: the most relevant belief comes first (the profile would put the newest, Acme, first)
    expect(query.split('\n').find((l) => l.startsWith('['))).toMatch(/vegan/);
    expect(profile.split('\n').find((l) => l.startsWith('['))).toMatch(/Acme/);
    const full = await run('full', 'what is my diet');
    expect(full).toMatch(/vegan/);
    expect(full).toMatch(/Acme/);
    faults.fail('searchLexical');
    faults.fail('list');
    expect(await run('full', 'what is my diet')).toBe('Base.');
  });
});

describe('getMemoryContext, searchMemories, saveTurn', () => {
  it('saves a turn into the transcript and the outbox, then recalls it as the bounded block', async () => {
    const opts = { ...runtimeOptions(), userId: 'h1' };
    const saved = await saveTurn({ ...opts, sessionId: 'h-conv', user: 'pet=parrot', assistant: 'Nice!' });
    expect(saved).toEqual({ sessionId: 'h-conv', positions: [0, 1], accepted: 2 });
    expect(await opts.store.getItems({ userId: 'h1' }, 'h-conv')).toHaveLength(2);
    const ctx = await getMemoryContext({ ...opts, query: 'what pet do I have', blockBytes: 400 });
    expect(ctx.text).toMatch(/parrot/);
    expect(ctx.bytes).toBeLessThanOrEqual(400);
    // `budgetBytes`, the deprecated name of `blockBytes`, gives the same block; both, differing, are refused.
    expect(await getMemoryContext({ ...opts, query: 'what pet do I have', budgetBytes: 400 })).toEqual(ctx);
    await expect(
      getMemoryContext({ ...opts, query: 'what pet do I have', blockBytes: 400, budgetBytes: 500 }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect(opts.extractor.texts).toContain('pet=parrot');
    const hits = await searchMemories({ ...opts, query: 'parrot', limit: 1 });
    expect(hits).toHaveLength(1);
    expect(await searchMemories({ ...opts, userId: 'someone-else', query: 'parrot' })).toEqual([]);
    await expect(saveTurn({ ...opts, sessionId: 'h-conv' })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('saveTurn without a sessionId, as the specification calls it', () => {
  it('saves into one conversation per user and namespace, recalled like any other turn', async () => {
    const opts = runtimeOptions();
    const first = await saveTurn({ ...opts, userId: 'st-a', user: 'pet=parrot', assistant: 'Nice!' });
    const again = await saveTurn({ ...opts, userId: 'st-a', user: 'drink=tea' });
    expect(first.sessionId).toBe(savedTurnsSessionId({ userId: 'st-a' }));
    expect(again).toMatchObject({ sessionId: first.sessionId, positions: [2], accepted: 1 });
    // Another user, or another namespace of the same user, gets a conversation of their own (ids are store-wide).
    const other = await saveTurn({ ...opts, userId: 'st-b', user: 'pet=cat' });
    const work = await saveTurn({ ...opts, userId: 'st-a', namespace: 'work', user: 'pet=dog' });
    expect(new Set([first.sessionId, other.sessionId, work.sessionId]).size).toBe(3);
    expect(await opts.store.getItems({ userId: 'st-a' }, first.sessionId)).toHaveLength(3);
    const ctx = await getMemoryContext({ ...opts, userId: 'st-a', query: 'what pet do I have' });
    expect(ctx.text).toMatch(/parrot/);
    expect(ctx.text).not.toMatch(/cat|dog/);
  });

  it('with a session, the turn goes to that session’s conversation', async () => {
    const opts = runtimeOptions();
    const session = memSession('st-conv', { ...opts, userId: 'st-c' });
    const saved = await saveTurn({ session, user: 'city=Oslo' });
    expect(saved.sessionId).toBe('st-conv');
    expect(await session.getItems()).toEqual([{ role: 'user', content: 'city=Oslo' }]);
    await session.close();
  });
});

describe('search_memory (the specification’s name) beside search_memories', () => {
  it('both names search the same memory through the Runner', async () => {
    const opts = { ...runtimeOptions(), userId: 'sm-user' };
    await saveTurn({ ...opts, user: 'home_city=Lima' });
    const model = new ScriptedModel([
      [functionCall('search_memory', { query: 'home city', limit: null }, { callId: 's1' })],
      [functionCall('search_memories', { query: 'home city', limit: null }, { callId: 's2' })],
      [assistantMessage('done')],
    ]);
    const tools = await createMemoryTools({ ...opts, readOnly: true });
    await runner().run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'where do I live?');
    const [viaNew, viaOld] = outputs(model);
    expect(viaNew).toMatch(/Lima/);
    expect(viaOld).toBe(viaNew);
  });
});

describe('search_memory without a limit', () => {
  it('returns as many notes as searchMemories and the engine recall by default (its recallLimit)', async () => {
    const opts = { ...runtimeOptions(), userId: 'limit-user' };
    for (const plant of [
      'tomatoes',
      'basil',
      'roses',
      'tulips',
      'mint',
      'peppers',
      'lettuce',
      'beans',
      'kale',
    ]) {
      await saveTurn({ ...opts, user: `In my garden I grow ${plant} this year.` });
    }
    const model = new ScriptedModel([
      [functionCall('search_memory', { query: 'what grows in my garden', limit: null }, { callId: 's1' })],
      [assistantMessage('done')],
    ]);
    const tools = await createMemoryTools({ ...opts, readOnly: true });
    await runner().run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'what grows in my garden?');
    const [out] = outputs(model);
    const byDefault = await searchMemories({ ...opts, query: 'what grows in my garden' });
    expect(byDefault).toHaveLength(DEFAULT_CONFIG.recallLimit);
    // The tool's output, JSON-encoded: one note per line.
    expect(out!.split('\\n')).toHaveLength(byDefault.length);
  });
});

describe('the search contract in the helpers and tools: minScore, scores in 0..1, tiers', () => {
  it('searchMemories gives each result a score in 0..1 and its tier, and minScore cuts the tail', async () => {
    const opts = { ...runtimeOptions(), userId: 'ms-user' };
    await saveTurn({ ...opts, user: 'home_city=Lima; diet=vegan' });
    await saveTurn({ ...opts, user: 'my home is near the city park' });
    const all = await searchMemories({ ...opts, query: 'home city', limit: 20 });
    expect(all.length).toBeGreaterThan(1);
    for (const h of all) {
      expect(h.score).toBeGreaterThan(0);
      expect(h.score).toBeLessThanOrEqual(1);
      expect(h.tier).toBe(h.belief.kind === 'episode' ? 'episode' : 'belief');
    }
    expect(new Set(all.map((h) => h.tier))).toEqual(new Set(['belief', 'episode']));
    const best = all[0]!.score;
    const kept = await searchMemories({ ...opts, query: 'home city', limit: 20, minScore: best });
    expect(kept).toEqual(all.filter((h) => h.score >= best));
    expect(kept.length).toBeLessThan(all.length);
    await expect(searchMemories({ ...opts, query: 'home city', minScore: 1.5 })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/minScore/),
    });
  });

  it('search_memory and search_memories take minScore through the Runner; calls without it still work', async () => {
    const opts = { ...runtimeOptions(), userId: 'ms-tool' };
    await saveTurn({ ...opts, user: 'home_city=Lima' });
    const [top] = await searchMemories({ ...opts, query: 'home city' });
    expect(top!.score).toBeLessThan(1);
    const above = Math.min(1, top!.score + 0.01);
    const model = new ScriptedModel([
      [functionCall('search_memory', { query: 'home city', limit: null, minScore: null }, { callId: 's1' })],
      [functionCall('search_memory', { query: 'home city', limit: null, minScore: above }, { callId: 's2' })],
      [
        functionCall(
          'search_memories',
          { query: 'home city', limit: null, minScore: top!.score },
          { callId: 's3' },
        ),
      ],
      [functionCall('search_memories', { query: 'home city', limit: null }, { callId: 's4' })],
      [functionCall('search_memory', { query: 'home city', limit: null, minScore: 2 }, { callId: 's5' })],
      [assistantMessage('done')],
    ]);
    const tools = await createMemoryTools({ ...opts, readOnly: true });
    await runner().run(new Agent({ name: 'a', instructions: 'x', model, tools }), 'where do I live?');
    const [all, none, kept, old, bad] = outputs(model);
    expect(all).toMatch(/Lima/);
    expect(none).toMatch(/no matching memories/);
    expect(kept).toMatch(/Lima/);
    expect(old).toBe(all);
    // Out of range: the SDK refuses the arguments before the tool runs.
    expect(bad).not.toMatch(/Lima/);
    expect(bad).toMatch(/error/i);
    // The schema the model is given requires the field, nullable (strict mode), with its range.
    const search = tools.find((t) => t.name === 'search_memory')!;
    expect(search.parameters).toMatchObject({
      required: ['query', 'limit', 'minScore'],
      properties: { minScore: { anyOf: [{ type: 'number', minimum: 0, maximum: 1 }, { type: 'null' }] } },
    });
  });
});

describe('host-selected context ids', () => {
  async function memory(userId: string) {
    const opts = { ...runtimeOptions(), userId };
    await saveTurn({ ...opts, user: 'home_city=Tokyo; diet=vegan' });
    await saveTurn({ ...opts, user: 'employer=Acme' });
    const find = async (query: string, attribute: string) =>
      (await searchMemories({ ...opts, query, limit: 20 })).find((h) => h.belief.attribute === attribute)!
        .belief;
    const diet = await find('diet vegan', 'diet');
    const employer = await find('employer Acme', 'employer');
    await saveTurn({ ...opts, userId: 'someone-else', user: 'pet=cat' });
    const cat = (await searchMemories({ ...opts, userId: 'someone-else', query: 'pet cat' }))[0]!.belief;
    return { opts, diet, employer, cat };
  }

  it('getMemoryContext({ ids }) renders the chosen beliefs in the order given, as the block; others are skipped', async () => {
    const { opts, diet, employer, cat } = await memory('sel-ctx');
    const ctx = await getMemoryContext({ ...opts, ids: [employer.id, cat.id, diet.id, employer.id] });
    expect(ctx.beliefs.map((b) => b.id)).toEqual([employer.id, diet.id]);
    // Another user's belief looks unknown; a repeated id is left out once.
    expect(ctx.skipped).toEqual([
      { id: cat.id, reason: 'not_found' },
      { id: employer.id, reason: 'duplicate' },
    ]);
    // The block of the engine, in the format recall's block has.
    expect(ctx.text).toBe(renderContextBlock([employer, diet], 800).text);
    expect(ctx.text).not.toMatch(/Tokyo|cat/);
    // A belief superseded since it was selected is left out as not active.
    await saveTurn({ ...opts, user: 'employer=Globex' });
    expect((await getMemoryContext({ ...opts, ids: [employer.id, diet.id] })).skipped).toEqual([
      { id: employer.id, reason: 'not_active' },
    ]);
    expect((await getMemoryContext({ ...opts, query: 'diet' })).skipped).toEqual([]);
    await expect(getMemoryContext({ ...opts, query: 'diet', ids: [diet.id] })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(
      getMemoryContext({ ...opts, ids: 'not-a-list' as unknown as string[] }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('memoryInstructions({ ids }) puts the chosen beliefs in the instructions, fixed or chosen per run', async () => {
    const { opts, diet, employer, cat } = await memory('sel-mi');
    type Pinned = { pinned?: string[] };
    const instructionsOf = async (
      instructions: ReturnType<typeof memoryInstructions<Pinned>>,
      context: Pinned = {},
    ) => {
      const model = echoModel();
      await runner().run(
        new Agent<Pinned>({ name: 'a', model, instructions }),
        'what do you know about me?',
        {
          context,
        },
      );
      return model.calls[0]!.request.systemInstructions ?? '';
    };
    const fixed = await instructionsOf(
      memoryInstructions<Pinned>('Base.', { ...opts, ids: [diet.id, employer.id, cat.id] }),
    );
    expect(fixed).toMatch(/^Base\.\n\n<mem01-memory/);
    expect(fixed).toMatch(/Memory policy/);
    // In the order given (two of the same kind and day share a line); the inactive one is left out.
    const notes = fixed
      .split('\n')
      .filter((l) => l.startsWith('['))
      .join('\n');
    expect(notes).toMatch(/vegan[\s\S]*Acme/);
    expect(fixed).not.toMatch(/Tokyo|cat/);

    const errors: Error[] = [];
    const perRun = memoryInstructions<Pinned>('Base.', {
      ...opts,
      ids: (ctx) => (ctx.context as Pinned).pinned,
      onError: (e) => errors.push(e),
    });
    const pinned = await instructionsOf(perRun, { pinned: [employer.id] });
    expect(pinned).toMatch(/Acme/);
    expect(pinned).not.toMatch(/vegan/);
    // Nothing selected, or nothing of this user: the base instructions alone.
    expect(await instructionsOf(perRun, {})).toBe('Base.');
    expect(await instructionsOf(perRun, { pinned: [cat.id] })).toBe('Base.');
    expect(errors).toEqual([]);
    // A malformed id chosen at run time degrades to the base, reported to onError.
    expect(await instructionsOf(perRun, { pinned: [''] })).toBe('Base.');
    expect(errors.map((e) => (e as InvalidInputError).code)).toEqual(['invalid_input']);
    // Fixed ids are checked when the instructions are made; `ids` replaces a recall, so `mode` or `query` with it fails.
    expect(() => memoryInstructions('Base.', { ...opts, ids: [''] })).toThrow(InvalidInputError);
    expect(() => memoryInstructions('Base.', { ...opts, ids: [diet.id], mode: 'query' })).toThrow(/ids/);
    expect(() => memoryInstructions('Base.', { ...opts, ids: [diet.id], query: () => 'x' })).toThrow(/ids/);
  });
});
