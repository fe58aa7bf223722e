-- Schema version 2: owners and recovery.
-- A process that runs programs registers as an owner and claims the
-- executions it works on (running, rolling_back); the runs of an owner
-- that is gone are recovered. Calls a rollback makes to undo another call
-- record which one (reverts).

ALTER TABLE executions ADD COLUMN owner TEXT NOT NULL DEFAULT '';

ALTER TABLE entries ADD COLUMN reverts INTEGER NOT NULL DEFAULT 0;

CREATE TABLE owners (
	id            TEXT    PRIMARY KEY NOT NULL,
	host          TEXT    NOT NULL,
	pid           INTEGER NOT NULL,
	boot          TEXT    NOT NULL DEFAULT '',
	process_start TEXT    NOT NULL DEFAULT '',
	started_at    INTEGER NOT NULL,  -- Unix nanoseconds
	heartbeat_at  INTEGER NOT NULL,  -- Unix nanoseconds
	lease         INTEGER NOT NULL   -- nanoseconds
);
