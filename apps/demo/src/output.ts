/** What a person reads: a compact table and the lifecycle as a timeline. Colour only on a TTY. */
import { styleText } from 'node:util';
import type { ScalingResult, Strategy } from './scaling.js';
import { CHECKPOINTS } from './scaling.js';
import type { StoryStep } from './story.js';

type Style = Parameters<typeof styleText>[0];
export function paint(stream: NodeJS.WriteStream, style: Style, text: string): string {
  // styleText checks the stream: colour on a TTY only, and NO_COLOR / FORCE_COLOR are honoured.
  return styleText(style, text, { stream });
}

const LABEL: Record<Strategy, string> = {
  fresh_stock: 'fresh stock MemorySession per conversation',
  reused_stock: 'one reused stock MemorySession',
  memsession: 'memSession per conversation, one user',
};

export function scalingTable(result: ScalingResult, out: NodeJS.WriteStream): string {
  const head = ['strategy', ...CHECKPOINTS.map((k) => `after ${k}`)];
  const rows = result.results.map((r) => [
    LABEL[r.strategy],
    ...CHECKPOINTS.map((k) => `${r.items[k - 1]} items / ${(r.bytes[k - 1] ?? 0).toLocaleString('en-US')} B`),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  const mem = result.results.find((r) => r.strategy === 'memsession');
  const maxMem = mem ? Math.max(...mem.memoryBytes) : 0;
  return [
    paint(
      out,
      'bold',
      `Prepared model input over ${result.conversations} conversations (${result.runs} Runner runs, offline model)`,
    ),
    paint(out, 'dim', line(head)),
    ...rows.map(line),
    '',
    `The memory item never exceeded ${maxMem} of its 800-byte budget. Bytes are UTF-8 of the prepared JSON input plus`,
    'instructions: an upper bound on text sent, not billed tokens.',
  ].join('\n');
}

export function storyTimeline(steps: readonly StoryStep[], out: NodeJS.WriteStream): string {
  const lines: string[] = [
    paint(out, 'bold', 'The lifecycle story (offline extractor, SQLite in a temporary folder)'),
  ];
  for (const s of steps) {
    lines.push('', paint(out, 'cyan', `${s.step}. [${s.conversationId}] user: "${s.user}"`));
    lines.push(
      s.recalled.length > 0
        ? `   recalled: ${s.recalled.map((r) => paint(out, 'green', r)).join(' | ')}`
        : `   recalled: ${paint(out, 'yellow', 'nothing')}`,
    );
    lines.push(`   answer:   ${s.answer}`);
    lines.push('   beliefs:');
    const byId = new Map(s.beliefs.map((b) => [b.id, b]));
    for (const b of s.beliefs) {
      const mark =
        b.status === 'active'
          ? paint(out, 'green', '● active    ')
          : paint(out, 'dim', `○ ${b.status.padEnd(10)}`);
      lines.push(`     ${mark} ${b.statement}`);
      lines.push(paint(out, 'dim', `                  stored ${b.storedAt}`));
      if (b.invalidatedAt) {
        const by = b.supersededBy ? byId.get(b.supersededBy) : undefined;
        lines.push(
          paint(
            out,
            'dim',
            `                  ${b.status} ${b.invalidatedAt}${by ? ` by "${by.statement}"` : ''}`,
          ),
        );
      }
    }
  }
  return lines.join('\n');
}
