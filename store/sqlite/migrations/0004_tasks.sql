-- Schema version 4: runs started as MCP tasks. task is the JSON of
-- codemode.Task (its TTL) for such a run, NULL for every other; tasks/list
-- reads the newest tasks through the partial index.

ALTER TABLE executions ADD COLUMN task TEXT;

CREATE INDEX executions_tasks ON executions (created_at) WHERE task IS NOT NULL;
