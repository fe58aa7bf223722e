-- Schema version 2 of the PostgreSQL store: runs started as MCP tasks, as
-- sqlitestore's schema 4. task is the JSON of codemode.Task (its TTL) for
-- such a run, NULL for every other.

ALTER TABLE executions ADD COLUMN task TEXT;

CREATE INDEX executions_tasks ON executions (created_at, ord) WHERE task IS NOT NULL;
