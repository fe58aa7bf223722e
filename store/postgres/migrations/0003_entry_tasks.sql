-- Schema version 3 of the PostgreSQL store: calls run as tasks of their
-- downstream server, as sqlitestore's schema 5. task is the downstream
-- task's id, logged before anything waits for it; '' for every other
-- entry.

ALTER TABLE entries ADD COLUMN task TEXT NOT NULL DEFAULT '';
