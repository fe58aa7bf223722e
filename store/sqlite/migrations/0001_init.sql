-- Schema version 1: executions, their call logs, and saved snippets.
-- Timestamps are Unix nanoseconds (INTEGER); states and statuses are the
-- String() text of runtime.ExecStatus / runtime.EntryState; JSON columns hold
-- JSON text (NULL when empty).

CREATE TABLE executions (
	id         TEXT    PRIMARY KEY NOT NULL,
	code       TEXT    NOT NULL,
	status     TEXT    NOT NULL,
	result     TEXT,               -- JSON
	error      TEXT    NOT NULL DEFAULT '',
	logs       TEXT,               -- JSON array of strings
	connectors TEXT,               -- JSON object: connector name -> fingerprint
	clock      TEXT    NOT NULL,   -- JSON sandbox.Clock
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);

CREATE INDEX executions_created_at ON executions (created_at);
CREATE INDEX executions_status ON executions (status, created_at);

CREATE TABLE entries (
	execution_id TEXT    NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,  -- call | step
	connector    TEXT    NOT NULL,
	method       TEXT    NOT NULL,
	name         TEXT    NOT NULL DEFAULT '',
	args         TEXT,              -- JSON
	result       TEXT,              -- JSON
	error        TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	PRIMARY KEY (execution_id, seq)
);

CREATE TABLE snippets (
	name           TEXT    PRIMARY KEY NOT NULL,
	description    TEXT    NOT NULL DEFAULT '',
	code           TEXT    NOT NULL,
	input_schema   TEXT,            -- JSON Schema
	connectors     TEXT,            -- JSON array of connector names
	from_execution TEXT    NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL
);
