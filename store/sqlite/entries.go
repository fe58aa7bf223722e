package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// Entries returns an execution's log in seq order; ErrNotFound if the
// execution does not exist (an existing execution with no calls yet has an
// empty log).
func (s *Store) Entries(ctx context.Context, executionID string) ([]codemode.Entry, error) {
	rows, err := s.stmts.entries.QueryContext(ctx, executionID)
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanEntry)
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	if len(out) == 0 {
		if err := s.executionExists(ctx, executionID); err != nil {
			return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
		}
	}
	return out, nil
}

// executionExists returns ErrNotFound if there is no execution id: an
// empty log is told from a missing execution.
func (s *Store) executionExists(ctx context.Context, id string) error {
	var one int
	err := s.stmts.executionExists.QueryRowContext(ctx, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return codemode.ErrNotFound
	}
	return err
}

// dialect is how SQLite writes the clipped read of the log: substr counts
// characters in text.
var dialect = sc.Dialect{
	Param:  func(n int) string { return "?" + strconv.Itoa(n) },
	Prefix: func(col, n string) string { return "substr(" + col + ", 1, " + n + ")" },
}

// ClippedEntries returns the part of an execution's log q selects, in seq
// order, values cut as q says; ErrNotFound if the execution does not
// exist. A cut value is read whole by SQLite and cut before it is handed
// over, so the memory it takes is one value at a time.
func (s *Store) ClippedEntries(ctx context.Context, executionID string, q codemode.LogQuery) ([]codemode.ClippedEntry, error) {
	rows, err := s.db.QueryContext(ctx, sc.ClippedEntriesSQL(dialect, q.Preview), sc.ClippedEntriesArgs(executionID, q)...)
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanClippedEntry)
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	if len(out) == 0 {
		if err := s.executionExists(ctx, executionID); err != nil {
			return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
		}
	}
	return out, nil
}

// InsertEntry adds a new entry; ErrConflict if (execution, seq) exists,
// ErrNotFound if the execution does not. A zero UpdatedAt is set to now, a
// zero CreatedAt to UpdatedAt.
func (s *Store) InsertEntry(ctx context.Context, e codemode.Entry) error {
	if err := sc.CheckInsert(e); err != nil {
		return err
	}
	return insertEntry(ctx, s.stmts.insertEntry, e, sc.Now())
}

// UpdateEntry stores e's state, result, error, task (when set: a logged
// task id stays) and UpdatedAt (zero: now) if the stored state is still from, else ErrConflict (ErrNotFound if absent). Whether the move is
// legal is the runtime's business (runtime.Transition).
func (s *Store) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	if err := sc.CheckUpdate(e); err != nil {
		return err
	}
	return updateEntry(ctx, s.stmts.updateEntry, func() *sql.Stmt { return s.stmts.entryState }, e, from, sc.Now())
}

// WriteEntries makes the inserts in order, then the updates in order, in
// one IMMEDIATE transaction: all or nothing, with the errors of InsertEntry
// and UpdateEntry. A single insert or a single update is one statement,
// which SQLite commits on its own, so no explicit transaction is opened
// for it.
func (s *Store) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) (err error) {
	for _, e := range inserts {
		if err := sc.CheckInsert(e); err != nil {
			return err
		}
	}
	for _, u := range updates {
		if err := sc.CheckUpdate(u.Entry); err != nil {
			return err
		}
	}
	switch {
	case len(inserts)+len(updates) == 0:
		return nil
	case len(inserts) == 1 && len(updates) == 0:
		return insertEntry(ctx, s.stmts.insertEntry, inserts[0], sc.Now())
	case len(inserts) == 0 && len(updates) == 1:
		return updateEntry(ctx, s.stmts.updateEntry, func() *sql.Stmt { return s.stmts.entryState }, updates[0].Entry, updates[0].From, sc.Now())
	}
	return s.log.tx(ctx, func(insert, update *sql.Stmt, state func() *sql.Stmt) error {
		t := sc.Now()
		for _, e := range inserts {
			if err := insertEntry(ctx, insert, e, t); err != nil {
				return err
			}
		}
		for _, u := range updates {
			if err := updateEntry(ctx, update, state, u.Entry, u.From, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertEntry runs the insert statement (of the store or of a transaction)
// for e, checked by sc.CheckInsert; t stands in for a zero UpdatedAt.
func insertEntry(ctx context.Context, insert *sql.Stmt, e codemode.Entry, t time.Time) error {
	_, err := insert.ExecContext(ctx, sc.EntryValues(e, t)...)
	switch {
	case isPrimaryKeyViolation(err):
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, codemode.ErrConflict)
	case isForeignKeyViolation(err):
		return fmt.Errorf("insert log entry %s#%d: execution: %w", e.ExecutionID, e.Seq, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return nil
}

// updateEntry runs the conditional update statement (of the store or of a
// transaction) for e, checked by sc.CheckUpdate; t stands in for a zero
// UpdatedAt. When no row matches, the statement returned by state (only
// prepared then) tells ErrNotFound from ErrConflict.
func updateEntry(ctx context.Context, update *sql.Stmt, state func() *sql.Stmt, e codemode.Entry, from codemode.EntryState, t time.Time) error {
	res, err := update.ExecContext(ctx,
		e.State.String(), sc.RawText(e.Result), e.Error, e.Task, sc.Nanos(sc.UpdatedAt(e, t)), e.ExecutionID, e.Seq, from.String())
	if err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	if n > 0 {
		return nil
	}
	var cur string
	err = state().QueryRowContext(ctx, e.ExecutionID, e.Seq).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return fmt.Errorf("update log entry %s#%d: state is %s, not %s: %w", e.ExecutionID, e.Seq, cur, from, codemode.ErrConflict)
}
