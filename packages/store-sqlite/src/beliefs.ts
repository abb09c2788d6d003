/**
 * Beliefs of the SQLite store: the atomic commit (one `BEGIN IMMEDIATE` transaction), reads, history and import.
 * The one-active-per-key rule is a partial unique index (`beliefs_one_active`); the FTS index follows the rows
 * through triggers.
 */

import {
  type AuditEvent,
  type Belief,
  DimensionMismatchError,
  DuplicateActiveBeliefError,
  LeaseLostError,
  NotFoundError,
  StoreError,
  VersionConflictError,
} from '@mem01/engine';
import type { Checked, Row } from '@mem01/engine/store-kit';
import * as kit from '@mem01/engine/store-kit';
import type { AsyncMethod, Connection, Method } from './connection.js';
import { sqliteCode } from './errors.js';
import { recordOperation } from './governance.js';
import { placeholders, scopeFilter } from './read-batch.js';
import { writeEmbedding } from './vector-search.js';

type CanonicalScope = { readonly userId: string; readonly namespace: string };

export const commit: AsyncMethod<'commit'> = async (c, valid) => {
  checkEmbeddingLengths(c, valid.inserts, 'inserts');
  const { scope, complete } = valid;
  c.tx('commit', () => {
    // SQLite checks the one-active-per-key index per statement, not at commit: retire before activating.
    const ordered = [...valid.updates].sort(
      (a, b) => Number(a.set.status === 'active') - Number(b.set.status === 'active'),
    );
    for (const u of ordered) {
      const row = beliefRow(c, scope, u.id);
      if (!row) throw new NotFoundError(`belief ${u.id}`);
      const version = Number(row.version);
      if (version !== u.expectedVersion) throw new VersionConflictError(u.id, u.expectedVersion, version);
      applyPatch(c, row, u.set);
    }
    for (const ins of valid.inserts) insertBelief(c, ins);
    for (const a of valid.audit) insertAudit(c, a);
    recordOperation(c, scope, valid.operation);
    if (complete) {
      for (const id of complete.entryIds) {
        const held = c.get(
          "SELECT 1 AS x FROM outbox WHERE id = ? AND claim_id = ? AND status = 'claimed'",
          id,
          complete.claimId,
        );
        if (!held) throw new LeaseLostError();
      }
      for (const id of complete.entryIds) {
        c.run(
          `UPDATE outbox SET status = 'done', text = '', claim_id = NULL, worker = NULL, lease_until = NULL,
             lease_owner = NULL, last_error = NULL WHERE id = ?`,
          id,
        );
      }
    }
  });
};

export const get: Method<'get'> = (c, s, id) => {
  return c.op('get', () => {
    const row = beliefRow(c, s, id);
    return row ? kit.beliefRow.read(row) : null;
  });
};

/** Ids per statement of `getEmbeddings`. */
const EMBEDDING_CHUNK = 500;

export const getEmbeddings: Method<'getEmbeddings'> = (c, s, valid) => {
  return c.op('getEmbeddings', () => {
    const out = new Map<string, Float32Array>();
    // One statement per chunk, not one per id: recall re-scores hundreds of candidates with these.
    for (let i = 0; i < valid.length; i += EMBEDDING_CHUNK) {
      const rows = c.all(
        `SELECT b.id AS id, e.embedding AS embedding FROM belief_embeddings e JOIN beliefs b ON b.seq = e.belief_seq
          WHERE b.id IN (SELECT value FROM json_each(?)) AND b.user_id = ? AND b.namespace = ?
            AND b.status <> 'forgotten'`,
        JSON.stringify(valid.slice(i, i + EMBEDDING_CHUNK)),
        s.userId,
        s.namespace,
      );
      for (const row of rows) out.set(String(row.id), kit.bytesToVector(row.embedding as Uint8Array));
    }
    return out;
  });
};

export const getActiveByKeys: Method<'getActiveByKeys'> = (c, s, valid) => {
  return c.op('getActiveByKeys', () => {
    const out = new Map<string, Belief>();
    for (const k of valid) {
      const row = c.get(
        `SELECT * FROM beliefs WHERE user_id = ? AND namespace = ? AND subject = ? AND attribute = ? AND status = 'active'`,
        s.userId,
        s.namespace,
        k.subject,
        k.attribute,
      );
      if (row && !out.has(String(row.id))) out.set(String(row.id), kit.beliefRow.read(row));
    }
    return [...out.values()];
  });
};

export const list: Method<'list'> = (c, s, { statuses, limit, before, excludeGrants, kinds, sessionId }) => {
  return c.op('list', () => {
    const filter = scopeFilter({ ...s, statuses, excludeGrants }, 'b');
    const kindSql = kinds ? ` AND b.kind IN (${kinds.map(() => '?').join(', ')})` : '';
    const sessionSql =
      sessionId === null
        ? ''
        : " AND EXISTS (SELECT 1 FROM json_each(b.evidence) e WHERE json_extract(e.value, '$.sessionId') = ?)";
    const rows = c.all(
      `SELECT * FROM beliefs b WHERE ${filter.sql}${kindSql}${sessionSql} AND (? IS NULL OR b.id < ?) ORDER BY b.id DESC LIMIT ?`,
      ...filter.params,
      ...(kinds ?? []),
      ...(sessionId === null ? [] : [sessionId]),
      before,
      before,
      limit + 1,
    );
    return kit.listPage(rows.map(kit.beliefRow.read), limit);
  });
};

export const history: Method<'history'> = (c, s, start) => {
  return c.op('history', () => {
    if (start === null) {
      return c
        .all(
          'SELECT * FROM beliefs WHERE user_id = ? AND namespace = ? ORDER BY stored_at, id',
          s.userId,
          s.namespace,
        )
        .map(kit.beliefRow.read);
    }
    const chain = new Map<string, Belief>();
    const pending = [start];
    while (pending.length > 0) {
      const id = pending.pop()!;
      if (chain.has(id)) continue;
      const row = beliefRow(c, s, id);
      if (!row) continue;
      const b = kit.beliefRow.read(row);
      chain.set(id, b);
      if (b.supersedes) pending.push(b.supersedes);
      if (b.supersededBy) pending.push(b.supersededBy);
      for (const r of c.all(
        'SELECT id FROM beliefs WHERE supersedes = ? AND user_id = ? AND namespace = ?',
        id,
        s.userId,
        s.namespace,
      )) {
        pending.push(String(r.id));
      }
    }
    return [...chain.values()].sort(kit.historyOrder);
  });
};

export const importBeliefs: Method<'importBeliefs'> = (c, valid, given) => {
  checkEmbeddingLengths(c, valid, 'records');
  return c.tx('importBeliefs', () => {
    let inserted = 0;
    for (const r of valid) {
      if (c.get('SELECT 1 AS x FROM beliefs WHERE id = ?', r.belief.id)) continue;
      insertBelief(c, r);
      inserted++;
    }
    return { inserted, skipped: given - inserted };
  });
};

/** The belief row with this id in this scope. */
export function beliefRow(c: Connection, scope: CanonicalScope, id: string): Row | undefined {
  return c.get(
    'SELECT * FROM beliefs WHERE id = ? AND user_id = ? AND namespace = ?',
    id,
    scope.userId,
    scope.namespace,
  );
}

export function insertAudit(c: Connection, a: AuditEvent): void {
  c.run(
    `INSERT INTO audit (${kit.auditRow.columns.join(', ')}) VALUES (${placeholders(kit.auditRow.columns.length)})`,
    ...kit.auditRow.values(a),
  );
}

/** Refuses, before the transaction, embeddings whose length differs from a dimension the store already has. */
/** A checked belief record to insert, with its embedding. */
type ValidInsert = Checked<'importBeliefs'>[0][number];

function checkEmbeddingLengths(c: Connection, records: readonly ValidInsert[], field: string): void {
  records.forEach((r, i) => {
    if (r.embedding !== null && c.dimensions !== null && r.embedding.length !== c.dimensions) {
      throw new DimensionMismatchError(c.dimensions, r.embedding.length, `${field}[${i}].embedding`);
    }
  });
}

/** Inserts a checked belief and its embedding. */
function insertBelief(c: Connection, insert: ValidInsert): void {
  const b = insert.belief;
  const scopeId = c.ensureScopeId(kit.normalizeScope(b.scope));
  let seq: number;
  try {
    const result = c
      .stmt(
        `INSERT INTO beliefs (scope_id, ${kit.beliefRow.columns.join(', ')})
         VALUES (?, ${placeholders(kit.beliefRow.columns.length)})`,
      )
      .run(scopeId, ...kit.beliefRow.values(b));
    seq = Number(result.lastInsertRowid);
  } catch (err) {
    throw uniqueError(err, b.id, b.subject, b.attribute);
  }
  if (insert.embedding && b.status !== 'forgotten') writeEmbedding(c, seq, scopeId, insert.embedding);
}

function applyPatch(c: Connection, row: Row, set: kit.BeliefPatch): void {
  const cols = kit.beliefRow.patchColumns(set);
  try {
    c.db
      .prepare(
        `UPDATE beliefs SET ${cols.map(([column]) => `${column} = ?`).join(', ')}, version = version + 1 WHERE seq = ?`,
      )
      .run(...cols.map(([, value]) => value), Number(row.seq));
  } catch (err) {
    throw uniqueError(err, String(row.id), String(row.subject), String(row.attribute));
  }
}

function uniqueError(err: unknown, id: string, subject: string, attribute: string): unknown {
  const message = err instanceof Error ? err.message : '';
  if (sqliteCode(err) === 2067 || /UNIQUE constraint failed/.test(message)) {
    if (message.includes('beliefs.id')) return new StoreError(`belief ${id} already exists`, { cause: err });
    if (message.includes('beliefs.subject'))
      return new DuplicateActiveBeliefError(subject, attribute, { cause: err });
  }
  return err;
}
