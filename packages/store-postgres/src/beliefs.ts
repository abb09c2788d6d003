/**
 * Beliefs of the PostgreSQL store: the atomic commit (one transaction, retried after a conflict or, once it is
 * known not to have been applied, after a lost connection), reads, history, embeddings and import. One active
 * belief per key is the partial unique index `beliefs_one_active_per_key`.
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
import { type RawBuilder, sql, type Transaction } from 'kysely';
import pgvector from 'pgvector';
import type { Method, PgConnection } from './connection.js';
import { constraintOf, detailOf, sqlState } from './errors.js';
import { recordOperation } from './governance.js';
import { INSERT_CHUNK } from './options.js';
import { pgText } from './text.js';

/** The belief columns, for `select`. */
export const COLUMNS = sql.raw(kit.beliefRow.columns.join(', '));
/** The belief columns of the alias `b`. */
export const COLUMNS_B = sql.raw(kit.beliefRow.columns.map((col) => `b.${col}`).join(', '));

export const commit: Method<'commit'> = async (c, valid) => {
  const { scope, inserts, updates, complete } = valid;
  const rows = insertRows(c, inserts, 'inserts');
  const patches = updates.map((u) => patchSql(u.set));
  const firstInsert = inserts[0]?.belief.id;
  await c.run(
    'commit',
    () =>
      c.tx(async (trx) => {
        if (complete && complete.entryIds.length > 0) {
          const held = await sql<{ id: string }>`
            select id from ${c.t('outbox')}
            where id = any(${complete.entryIds}::text[]) and claim_id = ${complete.claimId} and status = 'claimed'
              and user_id = ${scope.userId}
            for update`.execute(trx);
          if (held.rows.length !== complete.entryIds.length) throw new LeaseLostError();
        }
        // Retire before activating: the one-active-per-key index is checked per statement, so an update that
        // activates a belief runs after the updates that move another one out of `active`.
        const order = [...updates.keys()].sort(
          (a, b) => Number(updates[a]?.set.status === 'active') - Number(updates[b]?.set.status === 'active'),
        );
        for (const i of order) {
          const u = updates[i]!;
          let updated: { rows: unknown[] };
          try {
            updated = await sql`
              update ${c.t('beliefs')} set ${sql.join(patches[i] ?? [])}
              where id = ${u.id} and user_id = ${scope.userId} and namespace = ${scope.namespace} and version = ${u.expectedVersion}
              returning id`.execute(trx);
          } catch (err) {
            throw uniqueError(err);
          }
          if (updated.rows.length === 0) {
            const found = await sql<{ version: number }>`
              select version from ${c.t('beliefs')}
              where id = ${u.id} and user_id = ${scope.userId} and namespace = ${scope.namespace}`.execute(
              trx,
            );
            const row = found.rows[0];
            if (!row) throw new NotFoundError(`belief ${u.id}`);
            throw new VersionConflictError(u.id, u.expectedVersion, Number(row.version));
          }
        }
        await insertBeliefs(c, trx, inserts, rows);
        await insertAudit(c, trx, valid.audit);
        await recordOperation(c, trx, scope, valid.operation);
        if (complete && complete.entryIds.length > 0) {
          await sql`
            update ${c.t('outbox')} set status = 'done', text = '', claim_id = null, lease_until = null, lease_owner = null,
              retry_at = null
            where id = any(${complete.entryIds}::text[])`.execute(trx);
        }
      }),
    {
      idempotent: false,
      ...(firstInsert === undefined
        ? {}
        : {
            applied: async () => {
              const r = await sql`select 1 from ${c.t('beliefs')} where id = ${firstInsert}`.execute(c.db);
              return r.rows.length > 0;
            },
          }),
    },
  );
};

export async function insertAudit(
  c: PgConnection,
  trx: Transaction<unknown>,
  audit: readonly AuditEvent[],
): Promise<void> {
  if (audit.length === 0) return;
  const rows = audit.map((a) => sql`(${sql.join(kit.auditRow.values(a))})`);
  await sql`insert into ${c.t('audit')} (${sql.raw(kit.auditRow.columns.join(', '))}) values ${sql.join(rows)}`.execute(
    trx,
  );
}

export const get: Method<'get'> = async (c, s, id) => {
  return c.run(
    'get',
    async () => {
      const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
        where id = ${id} and user_id = ${s.userId} and namespace = ${s.namespace}`.execute(c.db);
      const row = r.rows[0];
      return row ? kit.beliefRow.read(row) : null;
    },
    { idempotent: true },
  );
};

export const getActiveByKeys: Method<'getActiveByKeys'> = async (c, s, valid) => {
  if (valid.length === 0) return [];
  const subjects = valid.map((k) => pgText(k.subject));
  const attributes = valid.map((k) => pgText(k.attribute));
  return c.run(
    'getActiveByKeys',
    async () => {
      const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
        where user_id = ${s.userId} and namespace = ${s.namespace} and status = 'active'
          and (subject, attribute) in (select * from unnest(${subjects}::text[], ${attributes}::text[]))
        order by id desc`.execute(c.db);
      return r.rows.map(kit.beliefRow.read);
    },
    { idempotent: true },
  );
};

/** `and` the beliefs whose grant is not among `excludeGrants` (nothing when it is empty), for a query's where. */
export function grantFilter(excludeGrants: readonly string[], alias?: string) {
  if (excludeGrants.length === 0) return sql``;
  const col = alias === undefined ? sql.ref('grant_id') : sql.ref(`${alias}.grant_id`);
  return sql`and (${col} is null or ${col} <> all(${excludeGrants}::text[]))`;
}

export const list: Method<'list'> = async (
  c,
  s,
  { statuses, limit, before, excludeGrants, kinds, sessionId },
) => {
  return c.run(
    'list',
    async () => {
      const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
        where user_id = ${s.userId} and namespace = ${s.namespace} and status = any(${statuses}::text[])
          ${before === null ? sql`` : sql`and id < ${before}`} ${grantFilter(excludeGrants)}
          ${kinds === null ? sql`` : sql`and kind = any(${kinds}::text[])`}
          ${
            sessionId === null
              ? sql``
              : sql`and exists (select 1 from jsonb_array_elements(evidence::jsonb) e where e->>'sessionId' = ${sessionId})`
          }
        order by id desc limit ${limit + 1}`.execute(c.db);
      return kit.listPage(r.rows.map(kit.beliefRow.read), limit);
    },
    { idempotent: true },
  );
};

export const history: Method<'history'> = async (c, s, id) => {
  return c.run(
    'history',
    async () => {
      if (id === null) {
        const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
          where user_id = ${s.userId} and namespace = ${s.namespace} order by stored_at, id`.execute(c.db);
        return r.rows.map(kit.beliefRow.read);
      }
      const found = new Map<string, Belief>();
      const queried = new Set<string>();
      let frontier = [id];
      while (frontier.length > 0) {
        for (const x of frontier) queried.add(x);
        const r = await sql<Row>`select ${COLUMNS} from ${c.t('beliefs')}
          where user_id = ${s.userId} and namespace = ${s.namespace}
            and (id = any(${frontier}::text[]) or supersedes = any(${frontier}::text[]) or superseded_by = any(${frontier}::text[]))`.execute(
          c.db,
        );
        const next = new Set<string>();
        for (const row of r.rows) {
          const b = kit.beliefRow.read(row);
          found.set(b.id, b);
          for (const link of [b.id, b.supersedes, b.supersededBy])
            if (link && !queried.has(link)) next.add(link);
        }
        if (found.size === 0) return [];
        frontier = [...next];
      }
      return [...found.values()].sort(kit.historyOrder);
    },
    { idempotent: true },
  );
};

export const getEmbeddings: Method<'getEmbeddings'> = async (c, s, valid) => {
  const state = c.state();
  if (valid.length === 0) return new Map();
  return c.run(
    'getEmbeddings',
    async () => {
      // pgvector's text form is parsed by the pgvector package; real[] arrives as numbers from node-pg.
      const r = await sql<{ id: string; e: string | number[] }>`
        select id, ${state.mode === 'pgvector' ? sql`embedding::text` : sql`embedding`} as e from ${c.t('beliefs')}
        where user_id = ${s.userId} and namespace = ${s.namespace} and id = any(${valid}::text[])
          and status <> 'forgotten' and embedding is not null`.execute(c.db);
      const out = new Map<string, Float32Array>();
      for (const row of r.rows) {
        const values = typeof row.e === 'string' ? (pgvector.fromSql(row.e) as number[]) : row.e;
        out.set(row.id, Float32Array.from(values));
      }
      return out;
    },
    { idempotent: true },
  );
};

export const importBeliefs: Method<'importBeliefs'> = async (c, valid, given) => {
  const rows = insertRows(c, valid, 'records');
  if (valid.length === 0) return { inserted: 0, skipped: given };
  return c.run(
    'importBeliefs',
    () =>
      c.tx(async (trx) => {
        const existing = new Set<string>();
        for (let i = 0; i < valid.length; i += 10_000) {
          const ids = valid.slice(i, i + 10_000).map((r) => r.belief.id);
          const r = await sql<{ id: string }>`select id from ${c.t('beliefs')}
            where id = any(${ids}::text[])`.execute(trx);
          for (const row of r.rows) existing.add(row.id);
        }
        const fresh = valid.flatMap((r, i) => (existing.has(r.belief.id) ? [] : [{ r, row: rows[i]! }]));
        await insertBeliefs(
          c,
          trx,
          fresh.map((f) => f.r),
          fresh.map((f) => f.row),
        );
        return { inserted: fresh.length, skipped: given - fresh.length };
      }),
    // Re-running converges: ids already present are skipped.
    { idempotent: true },
  );
};

/** The `values` row of each checked belief (text without NUL, see `text.ts`), with its embedding. */
/** A checked belief record to insert, with its embedding. */
type ValidInsert = Checked<'importBeliefs'>[0][number];

function insertRows(c: PgConnection, inserts: readonly ValidInsert[], field: string): RawBuilder<unknown>[] {
  return inserts.map(({ belief, embedding }, i) => {
    const values = kit.beliefRow.values(belief).map((v) => (typeof v === 'string' ? pgText(v) : v));
    return sql`(${sql.join(values)}, ${embeddingSql(c, embedding, `${field}[${i}].embedding`)})`;
  });
}

async function insertBeliefs(
  c: PgConnection,
  trx: Transaction<unknown>,
  inserts: readonly ValidInsert[],
  rows: readonly RawBuilder<unknown>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    try {
      await sql`insert into ${c.t('beliefs')} (${COLUMNS}, embedding)
        values ${sql.join(rows.slice(i, i + INSERT_CHUNK))}`.execute(trx);
    } catch (err) {
      throw uniqueError(err, inserts.slice(i, i + INSERT_CHUNK));
    }
  }
}

/** An embedding as a SQL value of the store's vector mode (`DimensionMismatchError` for a wrong length). */
function embeddingSql(c: PgConnection, vector: Float32Array | null, where: string): RawBuilder<unknown> {
  const state = c.state();
  if (vector === null) return sql`null`;
  if (vector.length !== state.dimensions)
    throw new DimensionMismatchError(state.dimensions, vector.length, where);
  if (state.mode === 'pgvector') {
    return sql`${pgvector.toSql(Array.from(vector))}::${sql.id(state.extensionSchema ?? 'public')}.vector`;
  }
  // Stored unit-length, so a dot product is the cosine similarity.
  return sql`${Array.from(kit.normalizeVector(vector))}::real[]`;
}

/** Maps a unique violation to the typed error the contract names. */
function uniqueError(err: unknown, inserts: readonly ValidInsert[] = []): unknown {
  if (sqlState(err) !== '23505') return err;
  const constraint = constraintOf(err);
  if (constraint === 'beliefs_one_active_per_key') {
    const detail = detailOf(err);
    const match = /=\((.*)\) already exists/s.exec(detail)?.[1] ?? '';
    for (const { belief: b } of inserts) {
      const s = kit.normalizeScope(b.scope);
      if (match === `${s.userId}, ${s.namespace}, ${pgText(b.subject)}, ${pgText(b.attribute)}`) {
        return new DuplicateActiveBeliefError(b.subject, b.attribute, { cause: err });
      }
    }
    const parts = match.split(', ');
    const attribute = parts.at(-1) ?? 'unknown';
    const subject = parts.at(-2) ?? 'unknown';
    return new DuplicateActiveBeliefError(subject, attribute, { cause: err });
  }
  if (constraint === 'beliefs_pkey')
    return new StoreError('postgres: a belief with this id already exists', { cause: err });
  return err;
}

function patchSql(set: kit.BeliefPatch): RawBuilder<unknown>[] {
  return [
    ...kit.beliefRow.patchColumns(set).map(([column, value]) => sql`${sql.raw(column)} = ${value}`),
    sql`version = version + 1`,
  ];
}
