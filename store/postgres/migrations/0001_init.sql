-- Schema version 1 of the PostgreSQL store: the same rows as sqlitestore's
-- schema 3 (runtime/storecodec lays them out for both). Timestamps are
-- Unix nanoseconds (BIGINT); states and statuses are the String() text of
-- codemode.ExecStatus / codemode.EntryState; JSON columns hold JSON text
-- (NULL when empty), kept byte for byte. ord is the insertion order that
-- breaks ties of created_at (SQLite's rowid).

CREATE TABLE executions (
	id         TEXT   PRIMARY KEY,
	ord        BIGINT GENERATED ALWAYS AS IDENTITY,
	code       TEXT   NOT NULL,
	status     TEXT   NOT NULL,
	result     TEXT,
	error      TEXT   NOT NULL DEFAULT '',
	logs       TEXT,
	connectors TEXT,
	clock      TEXT   NOT NULL,
	owner      TEXT   NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);

CREATE INDEX executions_created_at ON executions (created_at, ord);
CREATE INDEX executions_status ON executions (status, created_at, ord);

CREATE TABLE entries (
	execution_id TEXT    NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	connector    TEXT    NOT NULL,
	method       TEXT    NOT NULL,
	name         TEXT    NOT NULL DEFAULT '',
	args         TEXT,
	result       TEXT,
	error        TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL,
	reverts      INTEGER NOT NULL DEFAULT 0,
	created_at   BIGINT  NOT NULL,
	updated_at   BIGINT  NOT NULL,
	PRIMARY KEY (execution_id, seq)
);

CREATE TABLE snippets (
	name           TEXT   PRIMARY KEY,
	description    TEXT   NOT NULL DEFAULT '',
	code           TEXT   NOT NULL,
	input_schema   TEXT,
	connectors     TEXT,
	from_execution TEXT   NOT NULL DEFAULT '',
	created_at     BIGINT NOT NULL
);

CREATE TABLE owners (
	id            TEXT    PRIMARY KEY,
	host          TEXT    NOT NULL,
	pid           INTEGER NOT NULL,
	boot          TEXT    NOT NULL DEFAULT '',
	process_start TEXT    NOT NULL DEFAULT '',
	started_at    BIGINT  NOT NULL,
	heartbeat_at  BIGINT  NOT NULL,
	lease         BIGINT  NOT NULL
);

-- What native connectors keep (connectors.Records): the notes connector's
-- notes, as JSON values by kind and id.
CREATE TABLE records (
	kind       TEXT   NOT NULL,
	id         TEXT   NOT NULL,
	ord        BIGINT GENERATED ALWAYS AS IDENTITY,
	value      TEXT   NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (kind, id)
);

CREATE INDEX records_kind_created ON records (kind, created_at, ord);
