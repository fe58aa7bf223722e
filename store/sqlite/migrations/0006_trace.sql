-- Schema version 6: the W3C traceparent of the span of a run's first
-- pass (codemode.Execution.Trace), written once when the run is created
-- with tracing on, so that its later passes link to it; '' for every
-- other run.

ALTER TABLE executions ADD COLUMN trace TEXT NOT NULL DEFAULT '';
