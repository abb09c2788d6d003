/** A belief's lifecycle as dated events, for `mem01 history` and the inspector. */
import type { AuditEvent, Belief } from '@mem01/engine';

export type TimelineEvent =
  | {
      readonly type: 'added';
      readonly at: string;
      readonly source: Belief['source'];
      readonly status: Belief['status'];
    }
  | {
      readonly type: 'evidence';
      readonly at: string;
      /** First evidence is what the belief was added from; later ones confirmed it. */
      readonly confirmation: boolean;
      readonly sessionId: string;
      readonly position: number;
      readonly role: string;
      readonly quote: string;
      readonly ref: string | undefined;
    }
  | {
      readonly type: 'supersedes';
      readonly at: string;
      readonly id: string;
      readonly statement: string | null;
    }
  | {
      readonly type: 'superseded';
      readonly at: string;
      readonly by: string;
      readonly statement: string | null;
    }
  | {
      readonly type: 'ended';
      readonly at: string;
      readonly status: 'retracted' | 'forgotten';
    }
  | {
      readonly type: 'audit';
      readonly at: string;
      readonly action: AuditEvent['action'];
      readonly actor: string;
    };

const SHOWN_FROM_AUDIT: ReadonlySet<AuditEvent['action']> = new Set([
  'correct',
  'approve',
  'reject',
  'import',
]);

/**
 * The events of one belief, oldest first. `related` resolves the statements of the beliefs it supersedes or was
 * superseded by (from the same history chain); `audit` adds the content-free audit records of this belief.
 */
export function beliefTimeline(
  belief: Belief,
  related: ReadonlyMap<string, Belief>,
  audit: readonly AuditEvent[] = [],
): TimelineEvent[] {
  const out: TimelineEvent[] = [
    { type: 'added', at: belief.storedAt, source: belief.source, status: belief.status },
  ];
  belief.evidence.forEach((e, i) => {
    out.push({
      type: 'evidence',
      at: e.at,
      confirmation: i > 0,
      sessionId: e.sessionId,
      position: e.position,
      role: e.role,
      quote: e.quote,
      ref: e.ref,
    });
  });
  if (belief.supersedes) {
    out.push({
      type: 'supersedes',
      at: belief.storedAt,
      id: belief.supersedes,
      statement: related.get(belief.supersedes)?.statement ?? null,
    });
  }
  if (belief.supersededBy) {
    out.push({
      type: 'superseded',
      at: belief.invalidatedAt ?? belief.updatedAt,
      by: belief.supersededBy,
      statement: related.get(belief.supersededBy)?.statement ?? null,
    });
  }
  if (belief.status === 'retracted' || belief.status === 'forgotten') {
    out.push({ type: 'ended', at: belief.invalidatedAt ?? belief.updatedAt, status: belief.status });
  }
  for (const a of audit) {
    // Adds, supersessions, confirmations and endings are shown from the belief's own fields already.
    if (a.beliefId === belief.id && SHOWN_FROM_AUDIT.has(a.action))
      out.push({ type: 'audit', at: a.at, action: a.action, actor: a.actor });
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/** One event as a line of text. */
export function describeEvent(e: TimelineEvent): string {
  switch (e.type) {
    case 'added':
      return `added (${e.source})`;
    case 'evidence':
      return `${e.confirmation ? 'confirmed' : 'evidence'} by session ${e.sessionId} #${e.position} (${e.role})${
        e.quote ? `: "${e.quote}"` : ''
      }`;
    case 'supersedes':
      return `replaced ${e.id}${e.statement ? ` ("${e.statement}")` : ''}`;
    case 'superseded':
      return `superseded by ${e.by}${e.statement ? ` ("${e.statement}")` : ''}`;
    case 'ended':
      return e.status === 'forgotten' ? 'forgotten (content removed)' : 'retracted';
    case 'audit':
      return `${e.action} by ${e.actor}`;
  }
}
