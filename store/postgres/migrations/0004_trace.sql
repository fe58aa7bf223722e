-- Schema version 4 of the PostgreSQL store: the W3C traceparent of the
-- span of a run's first pass, as sqlitestore's schema 6. '' for a run
-- created with tracing off.

ALTER TABLE executions ADD COLUMN trace TEXT NOT NULL DEFAULT '';
