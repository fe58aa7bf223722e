-- Schema version 5 of the PostgreSQL store: people, as sqlitestore's
-- schema 7. started_by* name who started a run; decided_by* and
-- decided_at who approved or rejected a pending call and when (0:
-- nobody). The audit is append-only, outlives the runs it names (no
-- foreign key) and is pruned only by store.audit_retention.

ALTER TABLE executions ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN started_by_name TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN started_by_email TEXT NOT NULL DEFAULT '';

CREATE INDEX executions_started_by ON executions (started_by, created_at, ord);

ALTER TABLE entries ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN decided_by_name TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN decided_by_email TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN decided_at BIGINT NOT NULL DEFAULT 0;

CREATE TABLE audit (
	id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at           BIGINT  NOT NULL,
	subject      TEXT    NOT NULL,
	name         TEXT    NOT NULL DEFAULT '',
	email        TEXT    NOT NULL DEFAULT '',
	action       TEXT    NOT NULL,
	execution_id TEXT    NOT NULL DEFAULT '',
	seq          INTEGER NOT NULL DEFAULT 0,
	target       TEXT    NOT NULL DEFAULT '',
	outcome      TEXT    NOT NULL DEFAULT ''
);

CREATE INDEX audit_at ON audit (at, id);
