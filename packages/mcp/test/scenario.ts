/**
 * The scenario every transport runs, as a user's clients would: one connection remembers, a second one recalls,
 * lists, corrects, reads the history and the resources, asks the prompt, and forgets.
 */
import { AUTHORITY_POLICY } from '@mem01/engine';
import { MEMORY_BLOCK_CLOSE, MEMORY_BLOCK_OPEN } from '@mem01/engine/binding-kit';
import type { TextResourceContents } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import {
  type BeliefOut,
  type Connected,
  call,
  ok,
  type RecallOut,
  type RememberOut,
  textOf,
} from './helpers.js';

export const USER = 'alice';

export async function rememberThenRecallAcrossConnections(
  connect: () => Promise<Connected>,
  profileUri: string,
): Promise<void> {
  // First connection: remember two things, the second waiting for extraction.
  const first = await connect();
  try {
    const tools = (await first.client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'add_memory',
        'delete_memory',
        'list_memories',
        'memory_history',
        'search_memory',
        'summarize_conversation',
        'update_memory',
        // The earlier names, served as deprecated aliases.
        'correct_memory',
        'forget_memory',
        'recall',
        'remember',
      ].sort(),
    );
    const recallTool = tools.find((t) => t.name === 'search_memory');
    expect(recallTool?.description).toContain(AUTHORITY_POLICY);
    for (const t of tools) expect(t.outputSchema?.type).toBe('object');
    for (const [old, now] of [
      ['remember', 'add_memory'],
      ['recall', 'search_memory'],
      ['correct_memory', 'update_memory'],
      ['forget_memory', 'delete_memory'],
    ] as const) {
      const alias = tools.find((t) => t.name === old);
      const tool = tools.find((t) => t.name === now);
      expect(alias?.description).toBe(
        `Deprecated: the earlier name of ${now}, with the same input and output. Call ${now}.`,
      );
      expect(alias?.inputSchema).toEqual(tool?.inputSchema);
      expect(alias?.outputSchema).toEqual(tool?.outputSchema);
    }

    const home = await ok<RememberOut>(first.client, 'add_memory', { text: 'I live in Lisbon.' });
    expect(home).toMatchObject({ accepted: true, duplicate: false });
    expect(home.sessionId.startsWith('mcp:')).toBe(true);
    expect(home.position).toBeLessThan(2 ** 31);
    const color = await ok<RememberOut>(first.client, 'add_memory', {
      text: 'My favorite color is teal.',
      wait: true,
    });
    expect(color.extracted?.map((b) => b.statement)).toEqual(["The user's favorite color is teal."]);
    expect(color.extractionError).toBeNull();
  } finally {
    await first.close();
  }

  // Second connection: what the first remembered is there.
  const second = await connect();
  try {
    const c = second.client;
    const recalled = await ok<RecallOut>(c, 'search_memory', { query: 'Where do I live?' });
    expect(recalled.block.startsWith(MEMORY_BLOCK_OPEN)).toBe(true);
    // The belief drawn from it, or what the user said (kept as an episode): one of them, not both.
    expect(recalled.block).toMatch(/\] The user lives in Lisbon\.|\[user said [\d-]+\] I live in Lisbon\./);
    const top = recalled.items[0];
    expect(top).toMatchObject({ inBlock: true, version: 1 });
    // recall, the deprecated name of search_memory, recalls the same items.
    const viaOldName = await ok<RecallOut>(c, 'recall', { query: 'Where do I live?' });
    expect(viaOldName.block).toMatch(/Lisbon/);
    expect(viaOldName.items.map((i) => i.id).sort()).toEqual(recalled.items.map((i) => i.id).sort());
    expect(top?.score).toBeGreaterThan(0);
    // Scores from 0 to 1, each item with its tier: the extracted belief, or the user's turn kept as an episode.
    for (const item of recalled.items) {
      expect(item.score).toBeGreaterThan(0);
      expect(item.score).toBeLessThanOrEqual(1);
      expect(item.tier).toBe(item.kind === 'episode' ? 'episode' : 'belief');
    }
    // minScore keeps the items scoring at least it; above the best, nothing is recalled.
    const atBest = await ok<RecallOut>(c, 'search_memory', {
      query: 'Where do I live?',
      minScore: top!.score,
    });
    expect(atBest.items.map((i) => [i.id, i.score])).toEqual(
      recalled.items.filter((i) => i.score >= top!.score).map((i) => [i.id, i.score]),
    );
    expect(top!.score).toBeLessThan(1);
    const above = await ok<RecallOut>(c, 'search_memory', {
      query: 'Where do I live?',
      minScore: Math.min(1, top!.score + 0.001),
    });
    expect(above.items).toEqual([]);
    expect(above.block).not.toMatch(/Lisbon/);
    const recallResult = await call(c, 'search_memory', { query: 'Where do I live?', explain: true });
    expect(textOf(recallResult)).toContain(`${top?.id} v1 score`);
    expect(textOf(recallResult)).toMatch(/lexical \d\.\d{3}/);

    const listed = await ok<{ items: BeliefOut[]; nextCursor: string | null }>(c, 'list_memories', {});
    expect(listed.items.map((b) => b.statement).sort()).toEqual([
      'I live in Lisbon.',
      'My favorite color is teal.',
      'The user lives in Lisbon.',
      "The user's favorite color is teal.",
    ]);
    const lisbon = listed.items.find((b) => b.statement === 'The user lives in Lisbon.');
    // Provenance: extracted from a turn this server accepted, under its mcp: session.
    for (const b of listed.items) {
      expect(b.source).toBe('extracted');
      expect(b.evidence[0]?.sessionId.startsWith('mcp:')).toBe(true);
    }

    // Correct with the version read; a stale version is refused and changes nothing.
    const id = lisbon?.id as string;
    const corrected = await ok<{ replaced: string; belief: BeliefOut }>(c, 'update_memory', {
      id,
      text: 'The user lives in Porto.',
      expectedVersion: 1,
    });
    expect(corrected.replaced).toBe(id);
    expect(corrected.belief).toMatchObject({ statement: 'The user lives in Porto.', source: 'correction' });
    const stale = await call(c, 'update_memory', {
      id,
      text: 'The user lives in Faro.',
      expectedVersion: 1,
    });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^(version_conflict|invalid_input): /);

    const history = await ok<{ chain: BeliefOut[] }>(c, 'memory_history', { id });
    expect(history.chain.map((b) => [b.statement, b.status])).toEqual([
      ['The user lives in Lisbon.', 'superseded'],
      ['The user lives in Porto.', 'active'],
    ]);
    const after = await ok<RecallOut>(c, 'search_memory', { query: 'Where do I live?' });
    expect(after.block).toContain('The user lives in Porto.');
    expect(after.block).not.toContain('Lisbon');

    // Resources: the profile as the block renders it, the user's budget usage, and one belief as JSON.
    const resources = (await c.listResources()).resources.map((r) => r.uri);
    expect(resources).toEqual([profileUri, profileUri.replace(/\/profile$/, '/usage')]);
    const profile = (await c.readResource({ uri: profileUri })).contents[0] as TextResourceContents;
    expect(profile.text.startsWith(MEMORY_BLOCK_OPEN)).toBe(true);
    expect(profile.text.endsWith(MEMORY_BLOCK_CLOSE)).toBe(true);
    expect(profile.text).toContain('The user lives in Porto.');
    expect(profile.text).toContain("The user's favorite color is teal.");
    const beliefUri = `${profileUri.replace(/\/profile$/, '')}/beliefs/${corrected.belief.id}`;
    const one = (await c.readResource({ uri: beliefUri })).contents[0] as TextResourceContents;
    expect(JSON.parse(one.text)).toMatchObject({ id: corrected.belief.id, status: 'active', version: 1 });

    // The prompt puts the recalled block, under the policy, before the question.
    const prompt = await c.getPrompt({ name: 'with-memory', arguments: { question: 'Where do I live?' } });
    const content = prompt.messages[0]?.content;
    const promptText = content?.type === 'text' ? content.text : '';
    expect(promptText.startsWith(AUTHORITY_POLICY)).toBe(true);
    expect(promptText).toContain(`${MEMORY_BLOCK_OPEN}\n`);
    expect(promptText).toContain('The user lives in Porto.');
    expect(promptText.endsWith('Where do I live?')).toBe(true);

    // Forget: the content leaves recall, the profile and the belief resource; a tombstone stays in the list.
    const forgotten = await ok<{ id: string; status: string }>(c, 'delete_memory', {
      id: corrected.belief.id,
      expectedVersion: 1,
    });
    expect(forgotten).toMatchObject({ id: corrected.belief.id, status: 'forgotten' });
    const gone = await ok<RecallOut>(c, 'search_memory', { query: 'Where do I live? Porto' });
    expect(gone.block).not.toContain('Porto');
    const profileAfter = (await c.readResource({ uri: profileUri })).contents[0] as TextResourceContents;
    expect(profileAfter.text).not.toContain('Porto');
    // The belief resource is gone (as for an unknown id); the content-free tombstone is listed for audit.
    await expect(c.readResource({ uri: beliefUri })).rejects.toThrow(/not_found/);
    const tombstones = await ok<{ items: BeliefOut[] }>(c, 'list_memories', { status: 'forgotten' });
    expect(tombstones.items.map((b) => b.id)).toEqual([corrected.belief.id]);
  } finally {
    await second.close();
  }
}
