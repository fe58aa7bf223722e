-- Schema version 3: what native connectors keep (connectors.Records), as
-- JSON values by kind and id, in a table of the store's own, so that the
-- same connector works on every store. The notes connector kept its notes
-- in a table of its own (notes); they move here, in their order.

CREATE TABLE records (
	kind       TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	value      TEXT    NOT NULL,  -- JSON
	created_at INTEGER NOT NULL,  -- Unix nanoseconds
	PRIMARY KEY (kind, id)
);

CREATE INDEX records_kind_created ON records (kind, created_at);

CREATE TABLE IF NOT EXISTS notes (
	id         TEXT    PRIMARY KEY NOT NULL,
	text       TEXT    NOT NULL,
	tags       TEXT    NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL
);

INSERT INTO records (kind, id, value, created_at)
	SELECT 'notes', id, json_object('text', text, 'tags', json(tags)), created_at
	FROM notes ORDER BY created_at, rowid;

DROP TABLE notes;
