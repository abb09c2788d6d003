/** Read-only commands: users, beliefs, recall, history, doctor, usage. */
import {
  BELIEF_KINDS,
  type Belief,
  type BeliefKind,
  type BeliefStatus,
  type BudgetUsage,
  type Scope,
} from '@mem01/engine';
import { BELIEF_STATUSES } from '@mem01/engine/binding-kit';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { beliefKey, clip, listedStatement, num, signalCells, table } from '../format.js';
import { writeOut } from '../io.js';
import { beliefTimeline, describeEvent, type TimelineEvent } from '../timeline.js';

function out(ctx: CliContext, text: string): Promise<void> {
  return writeOut(ctx.io.stdout, text);
}

function json(ctx: CliContext, value: unknown): Promise<void> {
  return out(ctx, `${JSON.stringify(value, null, 2)}\n`);
}

/** `--status active,pending` (repeatable), or `all`. */
export function parseStatuses(values: readonly string[] | undefined): BeliefStatus[] {
  if (!values || values.length === 0) return ['active'];
  const parts = values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (parts.includes('all')) return [...BELIEF_STATUSES];
  for (const p of parts) {
    if (!(BELIEF_STATUSES as readonly string[]).includes(p)) {
      throw new UsageError(`--status ${JSON.stringify(p)} is not one of ${BELIEF_STATUSES.join(', ')}, all`);
    }
  }
  return [...new Set(parts)] as BeliefStatus[];
}

/** `--kind summary episode` or `--kind fact,goal` (repeatable); empty: every kind. */
export function parseKinds(values: readonly string[] | undefined): BeliefKind[] {
  const parts = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const p of parts) {
    if (!(BELIEF_KINDS as readonly string[]).includes(p)) {
      throw new UsageError(`--kind ${JSON.stringify(p)} is not one of ${BELIEF_KINDS.join(', ')}`);
    }
  }
  return [...new Set(parts)] as BeliefKind[];
}

/** What `beliefs` narrows the list down to besides the statuses: kinds, one conversation. */
export interface ListFilter {
  readonly kinds?: readonly BeliefKind[] | undefined;
  readonly sessionId?: string | undefined;
}

/** Every belief of a scope with these statuses (and kinds, and conversation), newest first, following the pages. */
export async function listAll(
  ctx: CliContext,
  scope: Scope,
  statuses: readonly BeliefStatus[],
  filter: ListFilter = {},
): Promise<Belief[]> {
  const all: Belief[] = [];
  let cursor: string | null = null;
  const kinds = filter.kinds && filter.kinds.length > 0 ? filter.kinds : undefined;
  do {
    const page = await ctx.engine.list(scope, {
      statuses,
      limit: 1000,
      cursor,
      ...(kinds === undefined ? {} : { kinds }),
      ...(filter.sessionId === undefined ? {} : { sessionId: filter.sessionId }),
    });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

export async function usersCommand(ctx: CliContext): Promise<void> {
  const scopes = await ctx.store.listScopes();
  const shown =
    ctx.namespace === undefined ? scopes : scopes.filter((s) => (s.scope.namespace ?? '') === ctx.namespace);
  if (ctx.json) {
    await json(
      ctx,
      shown.map((s) => ({ userId: s.scope.userId, namespace: s.scope.namespace ?? '', counts: s.counts })),
    );
    return;
  }
  if (shown.length === 0) {
    await out(ctx, `no users in ${ctx.where}\n`);
    return;
  }
  await out(
    ctx,
    table(
      ['USER', 'NAMESPACE', ...BELIEF_STATUSES.map((s) => s.toUpperCase())],
      shown.map((s) => [
        s.scope.userId,
        s.scope.namespace || '-',
        ...BELIEF_STATUSES.map((st) => String(s.counts[st] ?? 0)),
      ]),
    ),
  );
}

/** `--session <id>`: a conversation id, not blank. */
export function parseSession(value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '')
    throw new UsageError('--session needs a conversation (session) id');
  return value;
}

/** `mem01 beliefs`: statuses, kinds and conversation already checked ({@link parseStatuses}, {@link parseKinds}). */
export async function beliefsCommand(
  ctx: CliContext,
  userId: string,
  statuses: readonly BeliefStatus[],
  filter: { readonly kinds: readonly BeliefKind[]; readonly session: string | undefined },
): Promise<void> {
  const { kinds, session } = filter;
  const beliefs = await listAll(ctx, ctx.scope(userId), statuses, { kinds, sessionId: session });
  if (ctx.json) {
    await json(ctx, beliefs);
    return;
  }
  if (beliefs.length === 0) {
    const what = kinds.length > 0 ? `${statuses.join('/')} ${kinds.join('/')}` : statuses.join('/');
    const where = session === undefined ? '' : ` in conversation ${session}`;
    await out(ctx, `no ${what} beliefs${where} for user ${userId}\n`);
    return;
  }
  await out(
    ctx,
    table(
      ['ID', 'STATUS', 'KIND', 'KEY', 'CONF', 'STORED', 'STATEMENT'],
      beliefs.map((b) => [
        b.id,
        b.status,
        b.kind,
        clip(beliefKey(b), 32),
        b.confidence.toFixed(2),
        b.storedAt.slice(0, 19).replace('T', ' '),
        b.status === 'forgotten' ? '(forgotten)' : clip(listedStatement(b), 80),
      ]),
    ),
  );
}

export async function recallCommand(
  ctx: CliContext,
  userId: string,
  query: string,
  opts: { explain?: boolean; limit?: number; blockBytes?: number; budget?: number },
): Promise<void> {
  if (opts.blockBytes !== undefined && opts.budget !== undefined && opts.blockBytes !== opts.budget) {
    throw new UsageError('--block-bytes and --budget (its deprecated name) differ: give --block-bytes only');
  }
  const block = await ctx.engine.context(ctx.scope(userId), query, {
    explain: true,
    limit: opts.limit,
    blockBytes: opts.blockBytes ?? opts.budget,
  });
  if (ctx.json) {
    await json(ctx, {
      query,
      results: block.recalled.map((r, i) => ({
        rank: i + 1,
        score: r.score,
        signals: opts.explain ? r.signals : undefined,
        injected: block.beliefs.includes(r.belief),
        belief: r.belief,
      })),
      block: { text: block.text, bytes: block.bytes, omitted: block.omitted },
    });
    return;
  }
  const inBlock = new Set(block.beliefs.map((b) => b.id));
  let text = '';
  if (block.recalled.length === 0) text += `no beliefs of ${userId} match ${JSON.stringify(query)}\n`;
  else {
    const head = [
      '#',
      'SCORE',
      ...(opts.explain ? ['LEXICAL', 'VECTOR', 'RECENCY', 'CONF', 'KIND'] : []),
      'ID',
      'STATEMENT',
    ];
    text += table(
      head,
      block.recalled.map((r, i) => [
        `${i + 1}${inBlock.has(r.belief.id) ? '' : '*'}`,
        num(r.score),
        ...(opts.explain ? signalCells(r.signals) : []),
        r.belief.id,
        clip(r.belief.statement, 80),
      ]),
    );
    if (block.omitted > 0)
      text += `* left out of the block to stay within its byte budget (${block.omitted})\n`;
  }
  text += `\ninjected block (${block.bytes} bytes):\n${block.text}\n`;
  await out(ctx, text);
}

export async function historyCommand(ctx: CliContext, userId: string, id: string | undefined): Promise<void> {
  const scope = ctx.scope(userId);
  const beliefs = await ctx.engine.history(scope, { id });
  if (id !== undefined && beliefs.length === 0) {
    throw new UsageError(
      `no belief ${id} for user ${userId}${ctx.namespace ? ` in namespace ${ctx.namespace}` : ''}`,
    );
  }
  const audit = await ctx.store.auditLog(scope);
  const related = new Map(beliefs.map((b) => [b.id, b]));
  const entries = beliefs.map((b) => ({ belief: b, timeline: beliefTimeline(b, related, audit) }));
  if (ctx.json) {
    await json(ctx, entries);
    return;
  }
  if (entries.length === 0) {
    await out(ctx, `no history for user ${userId}\n`);
    return;
  }
  await out(ctx, entries.map((e) => renderHistoryEntry(e.belief, e.timeline)).join('\n'));
}

function renderHistoryEntry(b: Belief, timeline: readonly TimelineEvent[]): string {
  const title =
    b.status === 'forgotten'
      ? '(forgotten: content removed)'
      : `${beliefKey(b)} = ${JSON.stringify(b.value)}`;
  const lines = [`${b.id}  ${b.status}  v${b.version}  ${b.kind}  ${title}`];
  if (b.status !== 'forgotten') lines.push(`  "${b.statement}"  (confidence ${b.confidence.toFixed(2)})`);
  for (const e of timeline) lines.push(`  ${e.at}  ${describeEvent(e)}`);
  return `${lines.join('\n')}\n`;
}

export async function doctorCommand(ctx: CliContext, supportedSchema: number | null): Promise<void> {
  const info = await ctx.store.info();
  const warnings: string[] = [];
  if (info.outbox.staleLeases > 0) {
    warnings.push(
      `${info.outbox.staleLeases} outbox lease(s) expired: a worker died or stalled; run a worker to resume`,
    );
  }
  if (info.outbox.dead > 0)
    warnings.push(`${info.outbox.dead} outbox entries are dead (gave up after retries)`);
  if (ctx.embedder && info.dimensions !== null && info.dimensions !== ctx.embedder.dimensions) {
    warnings.push(
      `the store's embeddings have ${info.dimensions} dimensions but the ${ctx.description.embedder} embedder has ${ctx.embedder.dimensions}: recall needs the embedder the data was written with`,
    );
  }
  // The settings recall runs with here, from the same environment as the agent's (MEM01_* variables).
  const config = ctx.engine.config;
  const settings = {
    blockBytes: config.blockBytes,
    /** @deprecated The earlier name of `blockBytes`, kept in the JSON for scripts that read it. */
    budgetBytes: config.blockBytes,
    recallLimit: config.recallLimit,
    pendingBelow: config.pendingBelow,
    episodic: config.episodic,
  };
  if (supportedSchema !== null && info.schemaVersion < supportedSchema) {
    warnings.push(`schema version ${info.schemaVersion} is older than ${supportedSchema}: run mem01 migrate`);
  }
  const report = {
    store: ctx.where,
    name: info.name,
    schemaVersion: info.schemaVersion,
    supportedSchemaVersion: supportedSchema,
    capabilities: info.capabilities,
    dimensions: info.dimensions,
    extractor: ctx.description.extractor,
    embedder: ctx.embedder
      ? { name: ctx.description.embedder, model: ctx.embedder.model, dimensions: ctx.embedder.dimensions }
      : null,
    settings,
    outbox: info.outbox,
    warnings,
  };
  if (ctx.json) {
    await json(ctx, report);
    return;
  }
  const c = info.capabilities;
  const rows: [string, string][] = [
    ['store', ctx.where],
    [
      'schema version',
      `${info.schemaVersion}${supportedSchema !== null ? ` (this mem01 supports ${supportedSchema})` : ''}`,
    ],
    ['vector search', `${c.vectorSearch} (${c.vectorIndex})`],
    ['lexical index', c.lexicalIndex],
    ['durable outbox', c.durableOutbox ? 'yes' : 'no'],
    ['multi-process', c.multiProcess ? 'yes' : 'no'],
    ['dimensions', info.dimensions === null ? 'not fixed yet' : String(info.dimensions)],
    ['extractor', `${ctx.description.extractor} (the agent's; the CLI never extracts)`],
    [
      'embedder',
      ctx.embedder
        ? `${ctx.description.embedder} (${ctx.embedder.dimensions}-d)`
        : 'none (lexical recall only)',
    ],
    [
      'recall',
      `${settings.blockBytes}-byte block, up to ${settings.recallLimit} memories, episodes ${settings.episodic ? 'on' : 'off'}; pending below confidence ${settings.pendingBelow}`,
    ],
    [
      'outbox',
      `${info.outbox.queued} queued, ${info.outbox.claimed} claimed, ${info.outbox.dead} dead, ${info.outbox.staleLeases} stale lease(s)`,
    ],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  let text = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
  text +=
    warnings.length === 0
      ? '\n\nok: no problems found\n'
      : `\n\n${warnings.map((w) => `warning: ${w}`).join('\n')}\n`;
  await out(ctx, text);
}

export { json as printJson, out as print };

/**
 * `mem01 usage --user <id>`: what the user used of each budget in the current window, as counted in the store by
 * the agents sharing it, against the limits the environment sets (the same `MEM01_*` variables the agent reads).
 */
export async function usageCommand(ctx: CliContext, userId: string): Promise<void> {
  const u = await ctx.engine.usage(ctx.scope(userId));
  if (ctx.json) {
    await json(ctx, u);
    return;
  }
  const lines: [string, BudgetUsage['llmCalls']][] = [
    ['llm calls', u.llmCalls],
    ['input tokens', u.inputTokens],
    ['output tokens', u.outputTokens],
    ['embedding calls', u.embeddingCalls],
    ['embedding tokens', u.embeddingTokens],
    ['active beliefs', u.activeBeliefs],
    ['active tokens (estimated)', u.activeTokens],
  ];
  const spent = (l: BudgetUsage['llmCalls']) => l.limit !== null && l.used >= l.limit;
  let text = `budgets of ${userId}, window ${u.windowStart} to ${u.windowEnd}\n\n`;
  text += table(
    ['BUDGET', 'USED', 'LIMIT', ''],
    lines.map(([name, l]) => [
      name,
      String(l.used),
      l.limit === null ? '-' : String(l.limit),
      spent(l) ? (name === 'active beliefs' ? 'full' : 'spent') : '',
    ]),
  );
  if (lines.every(([, l]) => l.limit === null)) {
    text +=
      '\nno budget is set here (MEM01_LLM_CALLS_PER_USER, MEM01_EMBEDDING_CALLS_PER_USER, …): set the variables the agent runs with to see its limits\n';
  }
  await out(ctx, text);
}
