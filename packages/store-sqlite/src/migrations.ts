/**
 * Versioned, forward-only schema migrations. Each step runs in its own `BEGIN IMMEDIATE` transaction together with
 * the bump of `meta.schema_version`, and is written to be idempotent (`IF NOT EXISTS`), so a step interrupted by a
 * crash or raced by a second process is simply applied (or skipped) again.
 *
 * The SQL of every released version stays here unchanged: tests build a file at each earlier version and open it
 * with the current code. Never edit a released step; add a new one.
 */

import type { DatabaseSync } from 'node:sqlite';
import { SchemaTooNewError } from '@mem01/engine';

/** One migration step: the SQL that takes a file from `version - 1` to `version`. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** Written into the file header (`PRAGMA application_id`) so a foreign SQLite file is told apart from ours. */
export const APPLICATION_ID = 0x6d656d31; // 'mem1'

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'beliefs, embeddings, FTS5 index, transcript, outbox',
    sql: `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS scopes (
  id INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  UNIQUE (user_id, namespace)
);

CREATE TABLE IF NOT EXISTS beliefs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  scope_id INTEGER NOT NULL REFERENCES scopes (id),
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  attribute TEXT NOT NULL,
  value TEXT NOT NULL,
  statement TEXT NOT NULL,
  confidence REAL NOT NULL,
  status TEXT NOT NULL,
  supersedes TEXT,
  superseded_by TEXT,
  version INTEGER NOT NULL,
  valid_from TEXT,
  valid_to TEXT,
  stored_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  invalidated_at TEXT,
  evidence TEXT NOT NULL,
  source TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS beliefs_one_active
  ON beliefs (user_id, namespace, subject, attribute) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS beliefs_scope_status_id ON beliefs (user_id, namespace, status, id);
CREATE INDEX IF NOT EXISTS beliefs_scope_stored ON beliefs (user_id, namespace, stored_at, id);
CREATE INDEX IF NOT EXISTS beliefs_supersedes ON beliefs (supersedes) WHERE supersedes IS NOT NULL;

CREATE TABLE IF NOT EXISTS belief_embeddings (
  belief_seq INTEGER PRIMARY KEY REFERENCES beliefs (seq) ON DELETE CASCADE,
  scope_id INTEGER NOT NULL,
  embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS belief_embeddings_scope ON belief_embeddings (scope_id);

CREATE VIRTUAL TABLE IF NOT EXISTS belief_fts USING fts5 (
  statement, value, subject, attribute,
  tokenize = 'porter unicode61'
);
-- A contentful table (not contentless_delete): only then does FTS5 secure-delete remove a deleted row's terms
-- from the index segments, which forgetting relies on.
INSERT INTO belief_fts (belief_fts, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER IF NOT EXISTS beliefs_fts_insert AFTER INSERT ON beliefs WHEN new.status <> 'forgotten' BEGIN
  INSERT INTO belief_fts (rowid, statement, value, subject, attribute)
  VALUES (new.seq, new.statement, new.value, new.subject, new.attribute);
END;
CREATE TRIGGER IF NOT EXISTS beliefs_fts_forget AFTER UPDATE OF status ON beliefs
  WHEN new.status = 'forgotten' AND old.status <> 'forgotten' BEGIN
  DELETE FROM belief_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER IF NOT EXISTS beliefs_fts_delete AFTER DELETE ON beliefs WHEN old.status <> 'forgotten' BEGIN
  DELETE FROM belief_fts WHERE rowid = old.seq;
END;

CREATE TABLE IF NOT EXISTS transcript_items (
  rid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  item TEXT NOT NULL,
  owner_user_id TEXT,
  owner_namespace TEXT,
  UNIQUE (session_id, position)
);
CREATE INDEX IF NOT EXISTS transcript_items_owner ON transcript_items (owner_user_id) WHERE owner_user_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  session_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  role TEXT NOT NULL,
  text TEXT NOT NULL,
  at TEXT NOT NULL,
  ref TEXT,
  idempotency_key TEXT NOT NULL UNIQUE,
  accepted_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'queued',
  last_error TEXT,
  claim_id TEXT,
  worker TEXT,
  lease_until TEXT,
  available_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (user_id, seq) WHERE status IN ('queued', 'claimed');
CREATE INDEX IF NOT EXISTS outbox_claim ON outbox (claim_id) WHERE claim_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS outbox_status ON outbox (status, user_id);
CREATE INDEX IF NOT EXISTS outbox_turn ON outbox (user_id, session_id, position);
`,
  },
  {
    version: 2,
    description: 'transcript operation ids and the content-free audit log',
    sql: `
CREATE TABLE IF NOT EXISTS transcript_operations (
  session_id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  positions TEXT NOT NULL,
  PRIMARY KEY (session_id, operation_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  belief_id TEXT,
  action TEXT NOT NULL,
  actor TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_scope ON audit (user_id, namespace, seq);
CREATE INDEX IF NOT EXISTS audit_belief ON audit (belief_id) WHERE belief_id IS NOT NULL;
`,
  },
  {
    version: 3,
    description: 'FTS5 index keyed by scope; the scopes held by the sqlite-vec index',
    sql: `
DROP TRIGGER IF EXISTS beliefs_fts_insert;
DROP TRIGGER IF EXISTS beliefs_fts_forget;
DROP TRIGGER IF EXISTS beliefs_fts_delete;
DROP TABLE IF EXISTS belief_fts;

-- 'scope' holds one token per row ('s' || scope id). Queries restrict their words to the text columns and, when
-- the scope is a small part of the index, AND the scope token, so FTS5 ranks only that scope's rows.
CREATE VIRTUAL TABLE belief_fts USING fts5 (
  statement, value, subject, attribute, scope,
  tokenize = 'porter unicode61'
);
INSERT INTO belief_fts (belief_fts, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER beliefs_fts_insert AFTER INSERT ON beliefs WHEN new.status <> 'forgotten' BEGIN
  INSERT INTO belief_fts (rowid, statement, value, subject, attribute, scope)
  VALUES (new.seq, new.statement, new.value, new.subject, new.attribute, 's' || new.scope_id);
END;
CREATE TRIGGER beliefs_fts_forget AFTER UPDATE OF status ON beliefs
  WHEN new.status = 'forgotten' AND old.status <> 'forgotten' BEGIN
  DELETE FROM belief_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER beliefs_fts_delete AFTER DELETE ON beliefs WHEN old.status <> 'forgotten' BEGIN
  DELETE FROM belief_fts WHERE rowid = old.seq;
END;

INSERT INTO belief_fts (rowid, statement, value, subject, attribute, scope)
  SELECT seq, statement, value, subject, attribute, 's' || scope_id FROM beliefs WHERE status <> 'forgotten';

-- The scopes whose embeddings are in the sqlite-vec index (the others are small and searched exactly).
CREATE TABLE IF NOT EXISTS vec_scopes (
  scope_id INTEGER PRIMARY KEY
);
`,
  },
  {
    version: 4,
    description: 'transcript sessions with their owner scope',
    sql: `
-- A session belongs to the scope of its first owned append, also once it is emptied or cleared. The owner columns
-- of transcript_items are no longer written: this table is where the owner is.
CREATE TABLE IF NOT EXISTS transcript_sessions (
  session_id TEXT PRIMARY KEY,
  owner_user_id TEXT,
  owner_namespace TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS transcript_sessions_owner
  ON transcript_sessions (owner_user_id) WHERE owner_user_id IS NOT NULL;

-- Sessions written before: owned by the scope of their first owned item; with none, no owner (NULL), which leaves
-- the session open to every scope until an append records one.
INSERT OR IGNORE INTO transcript_sessions (session_id, owner_user_id, owner_namespace)
  SELECT s.session_id, o.owner_user_id,
    CASE WHEN o.owner_user_id IS NULL THEN NULL ELSE coalesce(o.owner_namespace, '') END
  FROM (SELECT DISTINCT session_id FROM transcript_items) s
  LEFT JOIN transcript_items o ON o.rid = (
    SELECT min(x.rid) FROM transcript_items x WHERE x.session_id = s.session_id AND x.owner_user_id IS NOT NULL);
`,
  },
  {
    version: 5,
    description:
      'host metadata, origins and access counts of beliefs; policy decisions in the audit log; operation keys; capture grants; budget counters',
    sql: `
-- Added columns are NULL (or 0) for the rows already there: no metadata, no origin, never recalled. ALTER TABLE is not
-- idempotent, but the step runs in one transaction with the version bump, so it is applied once or not at all.
ALTER TABLE beliefs ADD COLUMN metadata TEXT;
ALTER TABLE beliefs ADD COLUMN origin TEXT;
ALTER TABLE beliefs ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE beliefs ADD COLUMN last_accessed_at TEXT;
ALTER TABLE audit ADD COLUMN policy_revision TEXT;
ALTER TABLE audit ADD COLUMN policy_decision TEXT;

-- One row per operation key of a scope: content-free (ids, a digest, an outcome word).
CREATE TABLE IF NOT EXISTS operations (
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  action TEXT NOT NULL,
  belief_ids TEXT NOT NULL,
  outcome TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (user_id, namespace, key)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS capture_grants (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  intent_digest TEXT NOT NULL,
  granted_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS capture_grants_scope ON capture_grants (user_id, namespace, granted_at, id);

-- Budget counters of each user's current window (earlier windows are deleted as a new one starts).
CREATE TABLE IF NOT EXISTS budget_usage (
  user_id TEXT NOT NULL,
  window_start TEXT NOT NULL,
  name TEXT NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (user_id, window_start, name)
) WITHOUT ROWID;
`,
  },
  {
    version: 6,
    description: 'the process holding each outbox claim',
    sql: `
-- NULL for claims made before: they run until their lease expires. Applied once, with the version bump.
ALTER TABLE outbox ADD COLUMN lease_owner TEXT;
`,
  },
  {
    version: 7,
    description: 'captures bound to their capture grant; grant keys and host ids',
    sql: `
-- NULL for what was captured before: bound to no grant, as before. Grants recorded before have no key or host ids.
-- Applied once, with the version bump.
ALTER TABLE beliefs ADD COLUMN grant_id TEXT;
ALTER TABLE outbox ADD COLUMN grant_id TEXT;
ALTER TABLE capture_grants ADD COLUMN key TEXT;
ALTER TABLE capture_grants ADD COLUMN policy_id TEXT;
ALTER TABLE capture_grants ADD COLUMN principal_id TEXT;
ALTER TABLE capture_grants ADD COLUMN decision_id TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS capture_grants_key
  ON capture_grants (user_id, namespace, key) WHERE key IS NOT NULL;
`,
  },
];

/** The schema version this code writes. */
export const SQLITE_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Applies every pending migration step, each in its own write transaction. */
export function migrate(db: DatabaseSync, path: string, upTo: number = SQLITE_SCHEMA_VERSION): void {
  for (const step of MIGRATIONS) {
    if (step.version > upTo) break;
    db.exec('BEGIN IMMEDIATE');
    try {
      const current = readSchemaVersion(db);
      if (current > SQLITE_SCHEMA_VERSION) throw new SchemaTooNewError(path, current, SQLITE_SCHEMA_VERSION);
      if (current < step.version) {
        db.exec(step.sql);
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)").run(
          String(step.version),
        );
        db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw err;
    }
  }
}

export function readSchemaVersion(db: DatabaseSync): number {
  const hasMeta = db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return 0;
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
    | { value?: unknown }
    | undefined;
  return row ? Number(row.value) : 0;
}
