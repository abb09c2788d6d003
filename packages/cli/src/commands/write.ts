/** Mutating commands: correct, forget, approve, reject, summarize, erase. Each prints a receipt. */
import type { Belief, ClearAllReceipt } from '@mem01/engine';
import type { CliContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { conversationDate } from '../format.js';
import { ask } from '../io.js';
import { print, printJson } from './read.js';

function summary(b: Belief): string {
  return b.status === 'forgotten' ? '(content removed)' : JSON.stringify(b.statement);
}

export async function correctCommand(
  ctx: CliContext,
  userId: string,
  id: string,
  text: string,
): Promise<void> {
  const scope = ctx.scope(userId);
  const before = await ctx.engine.get(scope, id);
  const replacement = await ctx.engine.correct(scope, id, text);
  if (ctx.json) {
    await printJson(ctx, { action: 'correct', superseded: before, belief: replacement });
    return;
  }
  await print(
    ctx,
    [
      `corrected belief ${id}`,
      `  superseded: ${before ? summary(before) : id} (kept in history)`,
      `  new belief: ${replacement.id} ${JSON.stringify(replacement.statement)} (source correction, confidence 1)`,
      '',
    ].join('\n'),
  );
}

export async function forgetCommand(ctx: CliContext, userId: string, id: string): Promise<void> {
  const scope = ctx.scope(userId);
  const before = await ctx.engine.get(scope, id);
  const tomb = await ctx.engine.forget(scope, id);
  if (ctx.json) {
    await printJson(ctx, {
      action: 'forget',
      id,
      removed:
        before && before.status !== 'forgotten'
          ? { statement: before.statement, evidence: before.evidence.length }
          : null,
      tombstone: tomb,
    });
    return;
  }
  const lines =
    before && before.status !== 'forgotten'
      ? [
          `forgot belief ${id}`,
          `  removed: ${JSON.stringify(before.statement)}, its value, ${before.evidence.length} evidence quote(s) and its embedding`,
          `  kept: a content-free tombstone (status forgotten, version ${tomb.version})`,
        ]
      : [`belief ${id} was already forgotten; nothing removed`];
  await print(ctx, `${lines.join('\n')}\n`);
}

export async function reviewCommand(
  ctx: CliContext,
  action: 'approve' | 'reject',
  userId: string,
  id: string,
): Promise<void> {
  const scope = ctx.scope(userId);
  const result =
    action === 'approve' ? await ctx.engine.approve(scope, id) : await ctx.engine.reject(scope, id);
  if (ctx.json) {
    await printJson(ctx, { action, belief: result });
    return;
  }
  const line =
    action === 'approve'
      ? `approved belief ${id}: now active ${summary(result)}`
      : `rejected belief ${id}: retracted ${summary(result)}`;
  await print(ctx, `${line}\n`);
}

/**
 * `mem01 summarize --user <id> <session>`: writes the summary of one conversation through the engine's `summarize`
 * (its summarizer: the offline extractive one unless the runtime gives another) and prints it: a new summary, the
 * same one confirmed, or a new one superseding the last (kept in history). A conversation with nothing left to
 * summarize (no remembered turn of this user, or only questions) is an error `[nothing_to_summarize]`, exit code 1;
 * its last summary, if any, has then been retracted, and the message says so.
 */
export async function summarizeCommand(ctx: CliContext, userId: string, sessionId: string): Promise<void> {
  const scope = ctx.scope(userId);
  const [before] = (
    await ctx.engine.list(scope, { kinds: ['summary'], sessionId, statuses: ['active'], limit: 1 })
  ).items;
  const summary = await ctx.engine.summarize(scope, sessionId);
  const where = `conversation ${sessionId} of user ${userId}${ctx.namespace ? ` in namespace ${ctx.namespace}` : ''}`;
  if (summary === null) {
    throw new CliError(
      'nothing_to_summarize',
      `${where} has nothing left to summarize (no remembered turn, or only questions)${
        before ? `; its earlier summary ${before.id} was retracted` : ''
      }`,
    );
  }
  const outcome = before === undefined ? 'added' : before.id === summary.id ? 'unchanged' : 'superseded';
  if (ctx.json) {
    await printJson(ctx, {
      action: 'summarize',
      sessionId,
      outcome,
      ...(outcome === 'superseded' ? { superseded: before?.id } : {}),
      summary,
    });
    return;
  }
  const turns = new Set(summary.evidence.map((e) => `${e.sessionId}#${e.position}`));
  const lines = [
    outcome === 'added'
      ? `summarized ${where}: new summary ${summary.id}`
      : outcome === 'unchanged'
        ? `summarized ${where}: unchanged, summary ${summary.id} confirmed`
        : `summarized ${where}: new summary ${summary.id} supersedes ${before?.id} (kept in history)`,
    `  kind: summary, conversation date ${conversationDate(summary)}, drawn from ${turns.size} turn(s)`,
    `  [conversation ${conversationDate(summary)}] ${summary.statement.replace(/[\u0000-\u001f\u007f]+/g, ' ')}`,
    '',
  ];
  await print(ctx, lines.join('\n'));
}

/**
 * Hard delete of everything of a user. On a terminal it asks for the user id to be typed; without a terminal it
 * refuses unless `--yes` is given.
 */
export type EraseTarget = { readonly userId: string } | { readonly all: true };

export async function eraseCommand(ctx: CliContext, target: EraseTarget, yes: boolean): Promise<void> {
  const all = 'all' in target;
  if (!yes) {
    if (!ctx.io.stdin.isTTY) {
      throw new UsageError(
        `erase deletes ${all ? 'every user' : 'everything of a user'} for good; pass --yes to confirm when not on a terminal`,
      );
    }
    const expected = all ? 'erase all' : target.userId;
    const answer = await ask(
      ctx.io,
      all
        ? `This permanently deletes every belief, transcript, outbox entry, audit record, operation key, capture grant and budget counter of EVERY user in ${ctx.where}.\nType "erase all" to confirm: `
        : `This permanently deletes every belief, transcript, outbox entry and audit record of user "${target.userId}" (all namespaces) in ${ctx.where}.\nType the user id to confirm: `,
    );
    if (answer !== expected) throw new CliError('aborted', 'erase cancelled: the confirmation did not match');
  }
  const receipt: Omit<ClearAllReceipt, 'users'> & { readonly users?: number } = all
    ? await ctx.engine.clearAll()
    : await ctx.store.eraseUser(target.userId);
  if (ctx.json) {
    await printJson(ctx, {
      action: 'erase',
      ...(all ? { all: true } : { userId: target.userId }),
      removed: receipt,
    });
    return;
  }
  await print(
    ctx,
    [
      all ? `erased every user (${receipt.users})` : `erased user ${target.userId} (all namespaces)`,
      `  beliefs:          ${receipt.beliefs}`,
      `  transcript items: ${receipt.transcriptItems}`,
      `  outbox entries:   ${receipt.outboxEntries}`,
      `  audit records:    ${receipt.auditEvents}`,
      '',
    ].join('\n'),
  );
}
