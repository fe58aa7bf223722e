package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// statements are the store's hot statements, prepared once at Open.
// modernc.org/sqlite keeps no statement cache, so SQL text run through
// db.ExecContext is parsed again on every call; a *sql.Stmt is prepared once
// per pooled connection and reused. Inside a transaction use tx.StmtContext.
type statements struct {
	insertEntry     *sql.Stmt
	updateEntry     *sql.Stmt
	entryState      *sql.Stmt
	entries         *sql.Stmt
	executionExists *sql.Stmt

	createExecution *sql.Stmt
	getExecution    *sql.Stmt
	updateExecution *sql.Stmt
	executionStatus *sql.Stmt
	deleteExecution *sql.Stmt
	// listExecutions[tasks][byStatus][limited]: a bound LIMIT makes SQLite
	// re-prepare the statement on every run (the planner reads its value), so
	// the unlimited lists (the paused-TTL sweep) have their own statements.
	listExecutions [2][2][2]*sql.Stmt

	countTerminal *sql.Stmt
	pruneTerminal *sql.Stmt

	// all holds every prepared statement, for close.
	all []*sql.Stmt
}

// terminalIn is the SQL list of terminal statuses, e.g.
// ('completed', 'error', 'rejected', 'rolled_back'). The names are the
// runtime's own constants (lower case letters and '_'), checked by
// statusLiteral, so inlining them is safe; it lets the plan see the list.
func terminalIn() (string, error) {
	var lits []string
	for _, s := range sc.TerminalStatuses() {
		lit, err := statusLiteral(s.(string))
		if err != nil {
			return "", err
		}
		lits = append(lits, lit)
	}
	return "(" + strings.Join(lits, ", ") + ")", nil
}

// statusLiteral quotes a status name as an SQL string literal, refusing
// anything but lower case letters and '_'.
func statusLiteral(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty status name")
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return "", fmt.Errorf("status name %q: unexpected character %q", s, r)
		}
	}
	return "'" + s + "'", nil
}

// The log's statements, also prepared on the log connection (logConn).
const (
	insertEntrySQL = `INSERT INTO entries (` + sc.EntryColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// A task id, once logged, stays: an update without one keeps it.
	updateEntrySQL = `UPDATE entries SET state = ?, result = ?, error = ?, task = coalesce(nullif(?, ''), task), updated_at = ?
			WHERE execution_id = ? AND seq = ? AND state = ?`
	entryStateSQL = `SELECT state FROM entries WHERE execution_id = ? AND seq = ?`
)

// prepare prepares every statement on s.db. On failure it closes those
// already prepared.
func (s *Store) prepare(ctx context.Context) error {
	terminal, err := terminalIn()
	if err != nil {
		return fmt.Errorf("prepare statements: %w", err)
	}
	st := &s.stmts
	const listSQL = `SELECT ` + sc.ExecutionColumns + ` FROM executions`
	list := []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.insertEntry, insertEntrySQL},
		{&st.updateEntry, updateEntrySQL},
		{&st.entryState, entryStateSQL},
		{&st.entries, `SELECT ` + sc.EntryColumns + ` FROM entries WHERE execution_id = ? ORDER BY seq`},
		{&st.executionExists, `SELECT 1 FROM executions WHERE id = ?`},

		{&st.createExecution, `INSERT INTO executions (` + sc.ExecutionColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.getExecution, `SELECT ` + sc.ExecutionColumns + ` FROM executions WHERE id = ?`},
		{&st.updateExecution, `UPDATE executions SET status = ?, result = ?, error = ?, logs = ?, connectors = ?, clock = ?, owner = ?, updated_at = ?
			WHERE id = ? AND status = ?`},
		{&st.executionStatus, `SELECT status FROM executions WHERE id = ?`},
		{&st.deleteExecution, `DELETE FROM executions WHERE id = ?`},
		{&st.listExecutions[0][0][0], listSQL + ` ORDER BY created_at DESC, rowid DESC`},
		{&st.listExecutions[0][0][1], listSQL + ` ORDER BY created_at DESC, rowid DESC LIMIT ?`},
		{&st.listExecutions[0][1][0], listSQL + ` WHERE status = ? ORDER BY created_at DESC, rowid DESC`},
		{&st.listExecutions[0][1][1], listSQL + ` WHERE status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`},
		{&st.listExecutions[1][0][0], listSQL + ` WHERE task IS NOT NULL ORDER BY created_at DESC, rowid DESC`},
		{&st.listExecutions[1][0][1], listSQL + ` WHERE task IS NOT NULL ORDER BY created_at DESC, rowid DESC LIMIT ?`},
		{&st.listExecutions[1][1][0], listSQL + ` WHERE task IS NOT NULL AND status = ? ORDER BY created_at DESC, rowid DESC`},
		{&st.listExecutions[1][1][1], listSQL + ` WHERE task IS NOT NULL AND status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`},

		{&st.countTerminal, `SELECT count(*) FROM executions WHERE status IN ` + terminal},
		{&st.pruneTerminal, `DELETE FROM executions WHERE rowid IN (
			SELECT rowid FROM executions WHERE status IN ` + terminal + `
			ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`},
	}
	for _, p := range list {
		stmt, err := s.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return errors.Join(fmt.Errorf("prepare statement %q: %w", short.FirstLine(p.sql), err), s.stmts.close())
		}
		*p.dst = stmt
		st.all = append(st.all, stmt)
	}
	return nil
}

// close closes every prepared statement; closing twice is harmless.
func (st *statements) close() error {
	var errs []error
	for _, stmt := range st.all {
		errs = append(errs, stmt.Close())
	}
	return errors.Join(errs...)
}
