package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

const (
	insertEntrySQL = `INSERT INTO entries (` + sc.EntryColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	// A task id, once logged, stays: an update without one keeps it.
	updateEntrySQL = `UPDATE entries SET state = $1, result = $2, error = $3, task = coalesce(nullif($4, ''), task), updated_at = $5
		WHERE execution_id = $6 AND seq = $7 AND state = $8`
	// checkedUpdateSQL is updateEntrySQL failing (division by zero,
	// SQLSTATE 22012) when it matches no row, so that a batch it is part
	// of is undone.
	checkedUpdateSQL = `WITH u AS (` + updateEntrySQL + ` RETURNING 1) SELECT 1 / count(*) FROM u`
)

// querier is the pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Entries returns an execution's log in seq order; ErrNotFound if the
// execution does not exist.
func (s *Store) Entries(ctx context.Context, executionID string) ([]codemode.Entry, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sc.EntryColumns+` FROM entries WHERE execution_id = $1 ORDER BY seq`, executionID)
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
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM executions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return codemode.ErrNotFound
	}
	return err
}

// dialect is how PostgreSQL writes the clipped read of the log: left
// counts characters, and reads only the start of a value kept compressed
// or out of line (TOAST) as far as it can.
var dialect = sc.Dialect{
	Param:  func(n int) string { return "$" + strconv.Itoa(n) },
	Prefix: func(col, n string) string { return "left(" + col + ", " + n + ")" },
}

// ClippedEntries returns the part of an execution's log q selects, in seq
// order, values cut as q says; ErrNotFound if the execution does not
// exist.
func (s *Store) ClippedEntries(ctx context.Context, executionID string, q codemode.LogQuery) ([]codemode.ClippedEntry, error) {
	rows, err := s.pool.Query(ctx, sc.ClippedEntriesSQL(dialect, q.Preview), sc.ClippedEntriesArgs(executionID, q)...)
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

// InsertEntry adds a new entry (one round trip); ErrConflict if
// (execution, seq) exists, ErrNotFound if the execution does not.
func (s *Store) InsertEntry(ctx context.Context, e codemode.Entry) error {
	if err := sc.CheckInsert(e); err != nil {
		return err
	}
	return insertEntry(ctx, s.pool, e, sc.Now())
}

// UpdateEntry stores e's state, result, error and UpdatedAt (zero: now)
// if the stored state is still from, else ErrConflict (ErrNotFound if
// absent).
func (s *Store) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	if err := sc.CheckUpdate(e); err != nil {
		return err
	}
	return updateEntry(ctx, s.pool, e, from, sc.Now())
}

// WriteEntries makes the inserts in order, then the updates in order, all
// or nothing, with the errors of InsertEntry and UpdateEntry, in one round
// trip: a single insert or update is one statement; more are sent as one
// pipelined batch, which PostgreSQL runs as one implicit transaction (the
// messages up to a single Sync), so an error in any statement undoes
// them all. A conditional update that matches no row must undo them too,
// so in the batch each update is checkedUpdateSQL, which fails then.
func (s *Store) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) error {
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
	t := sc.Now()
	switch {
	case len(inserts)+len(updates) == 0:
		return nil
	case len(inserts) == 1 && len(updates) == 0:
		return insertEntry(ctx, s.pool, inserts[0], t)
	case len(inserts) == 0 && len(updates) == 1:
		return updateEntry(ctx, s.pool, updates[0].Entry, updates[0].From, t)
	}
	b := &pgx.Batch{}
	for _, e := range inserts {
		b.Queue(insertEntrySQL, sc.EntryValues(e, t)...)
	}
	for _, u := range updates {
		b.Queue(checkedUpdateSQL, updateValues(u.Entry, u.From, t)...)
	}
	br := s.pool.SendBatch(ctx, b)
	err := func() error {
		for _, e := range inserts {
			if _, err := br.Exec(); err != nil {
				return insertError(e, err)
			}
		}
		for _, u := range updates {
			if _, err := br.Exec(); err != nil {
				if pgCode(err) == "22012" { // no row matched (see checkedUpdateSQL)
					return entryMiss(ctx, s.pool, u.Entry, u.From)
				}
				return fmt.Errorf("update log entry %s#%d: %w", u.Entry.ExecutionID, u.Entry.Seq, err)
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write log entries: %w", cerr)
	}
	return err
}

// ignoreClosed drops the error of rolling back a transaction that is
// already over.
func ignoreClosed(err error) error {
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}

func insertEntry(ctx context.Context, q querier, e codemode.Entry, t time.Time) error {
	_, err := q.Exec(ctx, insertEntrySQL, sc.EntryValues(e, t)...)
	return insertError(e, err)
}

// insertError maps an insert's error to the Store's.
func insertError(e codemode.Entry, err error) error {
	switch {
	case err == nil:
		return nil
	case isUniqueViolation(err):
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, codemode.ErrConflict)
	case isForeignKeyViolation(err):
		return fmt.Errorf("insert log entry %s#%d: execution: %w", e.ExecutionID, e.Seq, codemode.ErrNotFound)
	}
	return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
}

func updateValues(e codemode.Entry, from codemode.EntryState, t time.Time) []any {
	return []any{e.State.String(), sc.RawText(e.Result), e.Error, e.Task, sc.Nanos(sc.UpdatedAt(e, t)), e.ExecutionID, e.Seq, from.String()}
}

func updateEntry(ctx context.Context, q querier, e codemode.Entry, from codemode.EntryState, t time.Time) error {
	tag, err := q.Exec(ctx, updateEntrySQL, updateValues(e, from, t)...)
	if err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	return entryMiss(ctx, q, e, from)
}

// entryMiss explains why a conditional update of e matched no row.
func entryMiss(ctx context.Context, q querier, e codemode.Entry, from codemode.EntryState) error {
	var cur string
	err := q.QueryRow(ctx, `SELECT state FROM entries WHERE execution_id = $1 AND seq = $2`, e.ExecutionID, e.Seq).Scan(&cur)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return fmt.Errorf("update log entry %s#%d: state is %s, not %s: %w", e.ExecutionID, e.Seq, cur, from, codemode.ErrConflict)
}
