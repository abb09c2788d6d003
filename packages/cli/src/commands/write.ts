/** Mutating commands: correct, forget, approve, reject, erase. Each prints a receipt. */
import type { Belief } from '@mem01/engine';
import type { CliContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
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
 * Hard delete of everything of a user. On a terminal it asks for the user id to be typed; without a terminal it
 * refuses unless `--yes` is given.
 */
export async function eraseCommand(ctx: CliContext, userId: string, yes: boolean): Promise<void> {
  if (!yes) {
    if (!ctx.io.stdin.isTTY) {
      throw new UsageError(
        'erase deletes everything of a user for good; pass --yes to confirm when not on a terminal',
      );
    }
    const answer = await ask(
      ctx.io,
      `This permanently deletes every belief, transcript, outbox entry and audit record of user "${userId}" (all namespaces) in ${ctx.where}.\nType the user id to confirm: `,
    );
    if (answer !== userId) throw new CliError('aborted', 'erase cancelled: the confirmation did not match');
  }
  const receipt = await ctx.store.eraseUser(userId);
  if (ctx.json) {
    await printJson(ctx, { action: 'erase', userId, removed: receipt });
    return;
  }
  await print(
    ctx,
    [
      `erased user ${userId} (all namespaces)`,
      `  beliefs:          ${receipt.beliefs}`,
      `  transcript items: ${receipt.transcriptItems}`,
      `  outbox entries:   ${receipt.outboxEntries}`,
      `  audit records:    ${receipt.auditEvents}`,
      '',
    ].join('\n'),
  );
}
