import { type Kysely, sql } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';

/** The schema version this code writes and understands. */
export const POSTGRES_SCHEMA_VERSION = 4;

/** How embeddings are stored: a pgvector `vector(dims)` column with HNSW, or `real[]` with exact cosine. */
export type VectorMode = 'pgvector' | 'exact';

export interface MigrationContext {
  readonly schema: string;
  readonly dimensions: number;
  readonly mode: VectorMode;
  /** Schema holding the `vector` extension's type and operators (pgvector mode). */
  readonly extensionSchema: string | null;
}

/**
 * The in-code migrations, applied by kysely's Migrator (which holds a Postgres advisory lock while migrating), in name
 * order. Released migrations never change: tests build a schema at each earlier version and open it with this code.
 * `upTo` (tests) stops after that version.
 */
export function migrationProvider(ctx: MigrationContext, upTo = POSTGRES_SCHEMA_VERSION): MigrationProvider {
  const all: [number, string, Migration][] = [
    [1, '0001_initial', { up: (db) => initial(db, ctx) }],
    [2, '0002_governance', { up: (db) => governance(db, ctx) }],
    [3, '0003_lease_owner', { up: (db) => leaseOwner(db, ctx) }],
    [4, '0004_grant_binding', { up: (db) => grantBinding(db, ctx) }],
  ];
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return Object.fromEntries(all.filter(([v]) => v <= upTo).map(([, name, m]) => [name, m]));
    },
  };
}

/**
 * Version 4: captures bound to their capture grant (the grant id of beliefs and outbox entries, null for what was
 * captured before), and grant keys (unique per scope) and host ids (null for grants recorded before).
 */
async function grantBinding(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  const t = (name: string) => sql.id(ctx.schema, name);
  const statements = [
    sql`alter table ${t('beliefs')} add column grant_id text`,
    sql`alter table ${t('outbox')} add column grant_id text`,
    sql`alter table ${t('capture_grants')}
      add column key text,
      add column policy_id text,
      add column principal_id text,
      add column decision_id text`,
    sql`create unique index ${sql.id('capture_grants_key')} on ${t('capture_grants')} (user_id, namespace, key) where key is not null`,
    sql`update ${t('meta')} set value = '4' where key = 'schema_version'`,
  ];
  await sql.raw(statements.map((st) => st.compile(db).sql).join(';\n')).execute(db);
}

/**
 * Version 3: the process holding each outbox claim (null for claims made before: they run until their lease expires),
 * indexed for the liveness check of live claims.
 */
async function leaseOwner(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  const t = (name: string) => sql.id(ctx.schema, name);
  const statements = [
    sql`alter table ${t('outbox')} add column lease_owner text`,
    sql`create index ${sql.id('outbox_claimed_owner')} on ${t('outbox')} (lease_owner) where status = 'claimed'`,
    sql`update ${t('meta')} set value = '3' where key = 'schema_version'`,
  ];
  await sql.raw(statements.map((st) => st.compile(db).sql).join(';\n')).execute(db);
}

/**
 * Version 2: host metadata, origins and access counts of beliefs; policy decisions in the audit log; operation keys;
 * capture grants; budget counters. Added columns are null (or 0) for the rows already there. Kysely's Migrator runs
 * each migration in a transaction with its bookkeeping, so it is applied once or not at all.
 */
async function governance(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  const t = (name: string) => sql.id(ctx.schema, name);
  const statements = [
    sql`alter table ${t('beliefs')}
      add column metadata text,
      add column origin text,
      add column access_count integer not null default 0,
      add column last_accessed_at text`,
    sql`alter table ${t('audit')} add column policy_revision text, add column policy_decision text`,
    sql`create table ${t('operations')} (
      user_id text not null,
      namespace text not null,
      key text not null,
      fingerprint text not null,
      action text not null,
      belief_ids text not null,
      outcome text not null,
      at text not null,
      primary key (user_id, namespace, key)
    )`,
    sql`create table ${t('capture_grants')} (
      id text primary key,
      user_id text not null,
      namespace text not null,
      intent_digest text not null,
      granted_at text not null,
      expires_at text,
      revoked_at text
    )`,
    sql`create index ${sql.id('capture_grants_scope')} on ${t('capture_grants')} (user_id, namespace, granted_at, id)`,
    sql`create table ${t('budget_usage')} (
      user_id text not null,
      window_start text not null,
      name text not null,
      used bigint not null,
      primary key (user_id, window_start, name)
    )`,
    sql`update ${t('meta')} set value = '2' where key = 'schema_version'`,
  ];
  await sql.raw(statements.map((st) => st.compile(db).sql).join(';\n')).execute(db);
}

async function initial(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  const t = (name: string) => sql.id(ctx.schema, name);
  const dims = sql.raw(String(ctx.dimensions));
  const embeddingType =
    ctx.mode === 'pgvector' ? sql`${sql.id(ctx.extensionSchema ?? 'public')}.vector(${dims})` : sql`real[]`;
  const statements = [
    sql`create table ${t('meta')} (key text primary key, value text not null)`,
    sql`create table ${t('beliefs')} (
      id text primary key,
      user_id text not null,
      namespace text not null default '',
      kind text not null,
      subject text not null,
      attribute text not null,
      value text not null,
      statement text not null,
      confidence double precision not null,
      status text not null,
      supersedes text,
      superseded_by text,
      version integer not null,
      valid_from text,
      valid_to text,
      stored_at text not null,
      updated_at text not null,
      invalidated_at text,
      evidence text not null default '[]',
      source text not null,
      embedding ${embeddingType},
      tsv tsvector generated always as (
        to_tsvector('english'::regconfig, statement || ' ' || value || ' ' || replace(subject, '_', ' ') || ' ' || replace(attribute, '_', ' '))
      ) stored
    )`,
    sql`create index ${sql.id('beliefs_scope_status_id')} on ${t('beliefs')} (user_id, namespace, status, id desc)`,
    sql`create unique index ${sql.id('beliefs_one_active_per_key')} on ${t('beliefs')} (user_id, namespace, subject, attribute) where status = 'active'`,
    sql`create index ${sql.id('beliefs_tsv_gin')} on ${t('beliefs')} using gin (tsv)`,
    sql`create index ${sql.id('beliefs_scope_stored')} on ${t('beliefs')} (user_id, namespace, stored_at, id)`,
    sql`create table ${t('audit')} (
      seq bigserial primary key,
      at text not null,
      user_id text not null,
      namespace text not null,
      belief_id text,
      action text not null,
      actor text not null
    )`,
    sql`create index ${sql.id('audit_scope_seq')} on ${t('audit')} (user_id, namespace, seq)`,
    sql`create table ${t('outbox')} (
      seq bigserial primary key,
      id text not null unique,
      user_id text not null,
      namespace text not null,
      session_id text not null,
      position integer not null,
      role text not null,
      text text not null,
      at text not null,
      ref text,
      idem_key text not null unique,
      accepted_at text not null,
      attempts integer not null default 0,
      status text not null default 'queued',
      last_error text,
      claim_id text,
      worker text,
      lease_until timestamptz,
      retry_at timestamptz
    )`,
    sql`create index ${sql.id('outbox_pending_user_seq')} on ${t('outbox')} (user_id, seq) where status in ('queued', 'claimed')`,
    sql`create index ${sql.id('outbox_pending_seq')} on ${t('outbox')} (seq) where status in ('queued', 'claimed')`,
    sql`create index ${sql.id('outbox_claim')} on ${t('outbox')} (claim_id) where claim_id is not null`,
    sql`create table ${t('transcript_sessions')} (
      session_id text primary key,
      user_id text,
      namespace text
    )`,
    sql`create index ${sql.id('transcript_sessions_user')} on ${t('transcript_sessions')} (user_id)`,
    sql`create table ${t('transcript_items')} (
      session_id text not null,
      position integer not null,
      item text not null,
      primary key (session_id, position)
    )`,
    sql`create table ${t('transcript_operations')} (
      session_id text not null,
      operation_id text not null,
      fingerprint text,
      positions text not null,
      primary key (session_id, operation_id)
    )`,
  ];
  if (ctx.mode === 'pgvector') {
    const ext = sql.id(ctx.extensionSchema ?? 'public');
    statements.push(
      sql`create index ${sql.id('beliefs_embedding_hnsw')} on ${t('beliefs')} using hnsw (embedding ${ext}.vector_cosine_ops)`,
    );
  }
  // The DDL has no bound values: compiled (identifiers quoted by kysely) and sent as one simple-protocol
  // batch, one round trip instead of twenty.
  const ddl = statements.map((st) => st.compile(db).sql).join(';\n');
  await sql.raw(ddl).execute(db);
  await sql`insert into ${t('meta')} (key, value) values
      ('schema_version', '1'),
      ('dimensions', ${String(ctx.dimensions)}),
      ('vector_mode', ${ctx.mode})`.execute(db);
}
