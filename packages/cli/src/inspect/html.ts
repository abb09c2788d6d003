/** Server-rendered pages of the inspector. Every piece of data goes through `esc`. */
import type { AuditEvent, Belief, ScoredBelief } from '@mem01/engine';
import type { ScopeSummary } from '@mem01/engine/binding-kit';
import { conversationDate } from '../format.js';
import { beliefTimeline, describeEvent } from '../timeline.js';

/** HTML-escapes text for element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A query string from parameters, each URI-encoded (then escaped when placed in an attribute). */
export function qs(params: Record<string, string | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v as string)}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

export interface PageScope {
  readonly userId: string;
  readonly namespace: string;
}

/**
 * A belief's kind and key for its row or card: `fact · user.home_city = Seattle`; a conversation summary (whose value
 * is its text) names its conversation and the conversation's date instead: `summary · conversation conv-05 ·
 * 2026-01-13`.
 */
function kindLine(b: Belief, withValue: boolean): string {
  const date = conversationDate(b);
  if (date !== null) {
    const session = b.evidence[0]?.sessionId;
    return `${esc(b.kind)} · conversation ${session === undefined ? esc(b.attribute) : `<code>${esc(session)}</code>`} · <time class="conv-date">${esc(date)}</time>`;
  }
  return `${esc(b.kind)} · ${esc(b.subject)}.${esc(b.attribute)}${withValue ? ` = ${esc(b.value)}` : ''}`;
}

/** What a search on a user's page looks in: the text, the key and the kind; a summary's conversation and date too. */
function searchable(b: Belief): string[] {
  const date = conversationDate(b);
  const parts = [b.statement, b.value, b.subject, b.attribute, b.kind];
  return date === null ? parts : [...parts, b.evidence[0]?.sessionId ?? '', date];
}

function scopeParams(s: PageScope): { u: string; ns: string | undefined } {
  return { u: s.userId, ns: s.namespace || undefined };
}

export function layout(title: string, body: string, flash?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · mem01 inspect</title><link rel="stylesheet" href="/app.css"></head>
<body><header><a class="brand" href="/">mem01 inspect</a><span class="where">${esc(title)}</span></header>
<main>${flash ? `<p class="flash" role="status">${esc(flash)}</p>` : ''}${body}</main>
<script src="/app.js"></script></body></html>`;
}

export function errorPage(status: number, message: string): string {
  return layout(
    `Error ${status}`,
    `<h1>Error ${status}</h1><p class="error">${esc(message)}</p><p><a href="/">Back to users</a></p>`,
  );
}

export function usersPage(scopes: readonly ScopeSummary[]): string {
  const rows = scopes
    .map((s) => {
      const p = { userId: s.scope.userId, namespace: s.scope.namespace ?? '' };
      const c = s.counts;
      return `<tr><td><a href="/user${esc(qs(scopeParams(p)))}">${esc(p.userId)}</a></td><td>${esc(p.namespace || '—')}</td>
<td class="n">${c.active}</td><td class="n">${c.pending ? `<strong>${c.pending}</strong>` : 0}</td><td class="n">${c.superseded}</td><td class="n">${c.retracted}</td><td class="n">${c.forgotten}</td></tr>`;
    })
    .join('\n');
  const body = scopes.length
    ? `<h1>Users</h1><table class="grid"><thead><tr><th>User</th><th>Namespace</th><th>Active</th><th>Pending</th><th>Superseded</th><th>Retracted</th><th>Forgotten</th></tr></thead><tbody>${rows}</tbody></table>`
    : '<h1>Users</h1><p class="muted">No beliefs stored yet.</p>';
  return layout('Users', body);
}

function nav(s: PageScope, current: 'beliefs' | 'recall'): string {
  const p = scopeParams(s);
  return `<nav class="tabs"><a href="/user${esc(qs(p))}"${current === 'beliefs' ? ' aria-current="page"' : ''}>Beliefs</a><a href="/recall${esc(qs(p))}"${current === 'recall' ? ' aria-current="page"' : ''}>Recall playground</a></nav>`;
}

function actionForm(action: string, s: PageScope, id: string, label: string, cls: string): string {
  return `<form method="post" action="/act/${action}" class="inline"><input type="hidden" name="u" value="${esc(s.userId)}"><input type="hidden" name="ns" value="${esc(s.namespace)}"><input type="hidden" name="id" value="${esc(id)}"><button type="submit" class="${cls}" data-action="${action}">${esc(label)}</button></form>`;
}

/** Rows rendered on a user's page; a search narrows the rest down on the server. */
export const MAX_ROWS = 500;

export function userPage(
  s: PageScope,
  active: readonly Belief[],
  pending: readonly Belief[],
  query: string,
  flash?: string,
  more = false,
): string {
  const q = query.trim().toLowerCase();
  const matches = (b: Belief) => !q || searchable(b).some((t) => t.toLowerCase().includes(q));
  const matched = active.filter(matches);
  const shown = matched.slice(0, MAX_ROWS);
  const row = (b: Belief, withReview: boolean) => {
    const link = `/belief${qs({ ...scopeParams(s), id: b.id })}`;
    const text = searchable(b).join(' ').toLowerCase();
    return `<tr data-id="${esc(b.id)}" data-text="${esc(text)}"><td><a class="statement" href="${esc(link)}">${esc(b.statement)}</a><div class="meta">${kindLine(b, true)}</div></td>
<td class="n">${b.confidence.toFixed(2)}</td><td class="when">${esc(b.storedAt.slice(0, 10))}</td><td class="acts">${
      withReview
        ? actionForm('approve', s, b.id, 'Approve', 'ok') + actionForm('reject', s, b.id, 'Reject', 'danger')
        : `<a class="btn" href="${esc(link)}">Timeline</a>${actionForm('forget', s, b.id, 'Forget', 'danger')}`
    }</td></tr>`;
  };
  const pendingHtml = pending.length
    ? `<section><h2>Pending review <span class="count">${pending.length}</span></h2><p class="muted">Low-confidence beliefs are not recalled until approved.</p><table class="grid" id="pending"><tbody>${pending.map((b) => row(b, true)).join('\n')}</tbody></table></section>`
    : '';
  const body = `<h1>${esc(s.userId)}${s.namespace ? ` <span class="ns">${esc(s.namespace)}</span>` : ''}</h1>${nav(s, 'beliefs')}
${pendingHtml}
<section><h2>Active beliefs <span class="count" id="shown">${shown.length}</span></h2>${
    matched.length > shown.length || more
      ? `<p class="muted">Showing the newest ${shown.length}${more ? '' : ` of ${matched.length}`}; search to narrow them down.</p>`
      : ''
  }
<form method="get" action="/user" class="search" role="search"><input type="hidden" name="u" value="${esc(s.userId)}"><input type="hidden" name="ns" value="${esc(s.namespace)}">
<input type="search" id="q" name="q" value="${esc(query)}" placeholder="Search beliefs…" autocomplete="off" aria-label="Search beliefs"><button type="submit">Search</button></form>
<table class="grid" id="beliefs"><thead><tr><th>Statement</th><th>Conf.</th><th>Stored</th><th></th></tr></thead><tbody>
${shown.map((b) => row(b, false)).join('\n')}</tbody></table>
${shown.length === 0 ? `<p class="muted" id="none">${q ? 'No active belief matches.' : 'No active beliefs.'}</p>` : '<p class="muted hidden" id="none">No active belief matches.</p>'}
</section>`;
  return layout(s.userId, body, flash);
}

export function beliefPage(
  s: PageScope,
  id: string,
  chain: readonly Belief[],
  audit: readonly AuditEvent[],
  flash?: string,
): string {
  const related = new Map(chain.map((b) => [b.id, b]));
  const current = related.get(id);
  const cards = chain
    .map((b) => {
      const events = beliefTimeline(b, related, audit)
        .map((e) => {
          let text = esc(describeEvent(e));
          if (e.type === 'superseded' || e.type === 'supersedes') {
            const target = e.type === 'superseded' ? e.by : e.id;
            const verb = e.type === 'superseded' ? 'superseded by' : 'replaced';
            text = `${verb} <a href="${esc(`/belief${qs({ ...scopeParams(s), id: target })}`)}">${esc(e.statement ?? target)}</a>`;
          } else if (e.type === 'evidence') {
            text = `${e.confirmation ? 'confirmed' : 'evidence'} in session <code>${esc(e.sessionId)}</code> #${e.position} (${esc(e.role)})${
              e.quote ? `<blockquote>${esc(e.quote)}</blockquote>` : ''
            }`;
          }
          return `<li class="ev ev-${esc(e.type)}"><time>${esc(e.at.replace('T', ' ').slice(0, 19))}</time><span>${text}</span></li>`;
        })
        .join('');
      const title = b.status === 'forgotten' ? '<em>forgotten: content removed</em>' : esc(b.statement);
      return `<article class="card${b.id === id ? ' current' : ''}" id="b-${esc(b.id)}"><h3>${title} <span class="badge st-${esc(b.status)}">${esc(b.status)}</span></h3>
<div class="meta"><code>${esc(b.id)}</code> · v${b.version} · ${kindLine(b, false)} · confidence ${b.confidence.toFixed(2)} · source ${esc(b.source)}</div>
<ol class="timeline">${events}</ol></article>`;
    })
    .join('\n');
  const editable = current && (current.status === 'active' || current.status === 'pending');
  const forms = editable
    ? `<section class="edit"><h2>Correct or forget</h2>
<form method="post" action="/act/correct" class="correct"><input type="hidden" name="u" value="${esc(s.userId)}"><input type="hidden" name="ns" value="${esc(s.namespace)}"><input type="hidden" name="id" value="${esc(id)}">
<label for="text">Corrected statement</label><input id="text" name="text" required maxlength="4000" value="${esc(current.statement)}"><button type="submit" data-action="correct">Correct</button></form>
${actionForm('forget', s, id, 'Forget this belief', 'danger')}</section>`
    : '';
  const body = `<p><a href="/user${esc(qs(scopeParams(s)))}">← ${esc(s.userId)}</a></p><h1>Timeline</h1>${
    chain.length ? cards : '<p class="muted">No such belief.</p>'
  }${forms}`;
  return layout(`${s.userId}: belief`, body, flash);
}

export function recallPage(
  s: PageScope,
  query: string,
  result: {
    recalled: readonly ScoredBelief[];
    text: string;
    bytes: number;
    beliefs: readonly Belief[];
  } | null,
): string {
  const num = (v: number | null | undefined, d = 3) => (v === null || v === undefined ? '—' : v.toFixed(d));
  let out = '';
  if (result) {
    const inBlock = new Set(result.beliefs.map((b) => b.id));
    out = `<table class="grid" id="ranked"><thead><tr><th>#</th><th>Statement</th><th>Total</th><th>Lexical</th><th>Vector</th><th>Recency</th><th>Confidence</th><th>Kind</th><th>In block</th></tr></thead><tbody>${result.recalled
      .map(
        (r, i) =>
          `<tr><td class="n">${i + 1}</td><td><a href="${esc(`/belief${qs({ ...scopeParams(s), id: r.belief.id })}`)}">${esc(r.belief.statement)}</a></td><td class="n"><strong>${num(r.score)}</strong></td><td class="n">${num(r.signals?.lexical)}</td><td class="n">${num(r.signals?.vector)}</td><td class="n">${num(r.signals?.recency)}</td><td class="n">${num(r.signals?.confidence, 2)}</td><td class="n">${num(r.signals?.kind, 2)}</td><td>${inBlock.has(r.belief.id) ? 'yes' : 'no'}</td></tr>`,
      )
      .join(
        '',
      )}</tbody></table>${result.recalled.length === 0 ? '<p class="muted">Nothing recalled for this query.</p>' : ''}
<h2>Injected block <span class="count">${result.bytes} bytes</span></h2><pre id="block">${esc(result.text)}</pre>`;
  }
  const body = `<h1>${esc(s.userId)}${s.namespace ? ` <span class="ns">${esc(s.namespace)}</span>` : ''}</h1>${nav(s, 'recall')}
<form method="get" action="/recall" class="search"><input type="hidden" name="u" value="${esc(s.userId)}"><input type="hidden" name="ns" value="${esc(s.namespace)}">
<input type="search" name="q" id="rq" value="${esc(query)}" placeholder="A user message, e.g. where do I live?" aria-label="Recall query"><button type="submit">Recall</button></form>${out}`;
  return layout(`${s.userId}: recall`, body);
}
