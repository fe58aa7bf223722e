-- Schema version 5: calls run as tasks of their downstream server. task is
-- the downstream task's id, logged before anything waits for it; '' for
-- every other entry.

ALTER TABLE entries ADD COLUMN task TEXT NOT NULL DEFAULT '';
