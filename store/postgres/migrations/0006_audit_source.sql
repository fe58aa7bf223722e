-- Schema version 6 of the PostgreSQL store: the surface an audit
-- record's action came through, as sqlitestore's schema 8.

ALTER TABLE audit ADD COLUMN source TEXT NOT NULL DEFAULT '';
