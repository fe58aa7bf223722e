-- Schema version 8: the surface an audit record's action came through
-- (codemode.AuditRecord.Source: "console" for the approval console; ''
-- for the MCP tools, tasks, the command line, and records written
-- before).

ALTER TABLE audit ADD COLUMN source TEXT NOT NULL DEFAULT '';
