package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/codec"
)

var insertEntrySQL = `INSERT INTO entries (` + codec.EntryColumns + `) VALUES ` + values(codec.EntryColumns)

// A task id, once logged, stays: an update without one keeps it.
const updateEntrySQL = `UPDATE entries SET state = $1, result = $2, error = $3, task = coalesce(nullif($4, ''), task), updated_at = $5
	WHERE execution_id = $6 AND seq = $7 AND state = $8`

// Entries returns an execution's log in seq order (codemode.Store).
func (s *Store) Entries(ctx context.Context, executionID string) ([]codemode.Entry, error) {
	return logOf(ctx, s, executionID, `SELECT `+codec.EntryColumns+` FROM entries WHERE execution_id = $1 ORDER BY seq`,
		[]any{executionID}, codec.ScanEntry)
}

// ClippedEntries returns the part of an execution's log q selects
// (codemode.Store). The values are cut in SQL: on PostgreSQL only the
// start of a value kept compressed or out of line (TOAST) is read as far
// as it can be; SQLite reads a value whole and cuts it before it is
// handed over, so the memory it takes is one value at a time.
func (s *Store) ClippedEntries(ctx context.Context, executionID string, q codemode.LogQuery) ([]codemode.ClippedEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = math.MaxInt32
	}
	args := []any{executionID, q.After, limit}
	if q.Preview > 0 {
		args = append(args, q.Preview)
	}
	return logOf(ctx, s, executionID, s.clippedSQL(q.Preview), args, codec.ScanClippedEntry)
}

// clippedSQL selects EntryColumns, the values cut as preview says
// (codemode.LogQuery.Preview), then their lengths in bytes (octet_length,
// which both databases compute without reading a value stored apart from
// its row).
func (s *Store) clippedSQL(preview int) string {
	args, result, errText := "args", "result", "error"
	switch {
	case preview < 0:
		args, result, errText = "NULL", "NULL", "''"
	case preview > 0:
		args, result, errText = s.d.Prefix("args", "$4"), s.d.Prefix("result", "$4"), s.d.Prefix("error", "$4")
	}
	return `SELECT execution_id, seq, kind, connector, method, name, ` + args + `, ` + result + `, ` + errText +
		`, state, reverts, task, created_at, updated_at,
		coalesce(octet_length(args), 0), coalesce(octet_length(result), 0), octet_length(error)
		FROM entries WHERE execution_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`
}

// logOf reads rows of execution id's log; an empty log of an execution
// that does not exist is ErrNotFound.
func logOf[T any](ctx context.Context, s *Store, id, query string, args []any, scan func(codec.Scanner) (T, error)) ([]T, error) {
	out, err := collect(ctx, s.db, query, args, scan)
	if err == nil && len(out) == 0 {
		var one int
		if err = s.db.QueryRow(ctx, `SELECT 1 FROM executions WHERE id = $1`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			err = codemode.ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", id, err)
	}
	return out, nil
}

// InsertEntry adds a new entry (codemode.Store).
func (s *Store) InsertEntry(ctx context.Context, e codemode.Entry) error {
	if err := codec.CheckInsert(e); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, insertEntrySQL, codec.EntryValues(e, codec.Now())...)
	return s.insertError(e, err)
}

// UpdateEntry moves an entry if its state is still from (codemode.Store).
func (s *Store) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	if err := codec.CheckUpdate(e); err != nil {
		return err
	}
	n, err := s.db.Exec(ctx, updateEntrySQL, updateValues(e, from, codec.Now())...)
	switch {
	case err != nil:
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	case n == 0:
		return s.entryMiss(ctx, e, from)
	}
	return nil
}

// WriteEntries makes the inserts, then the updates, all or nothing
// (codemode.Store). A single insert or update is one statement, committed
// on its own; more are one DB.Batch, each update guarded so that one that
// finds its entry moved undoes them all.
func (s *Store) WriteEntries(ctx context.Context, inserts []codemode.Entry, updates []codemode.EntryUpdate) error {
	for _, e := range inserts {
		if err := codec.CheckInsert(e); err != nil {
			return err
		}
	}
	for _, u := range updates {
		if err := codec.CheckUpdate(u.Entry); err != nil {
			return err
		}
	}
	switch {
	case len(inserts)+len(updates) == 0:
		return nil
	case len(inserts) == 1 && len(updates) == 0:
		return s.InsertEntry(ctx, inserts[0])
	case len(inserts) == 0 && len(updates) == 1:
		return s.UpdateEntry(ctx, updates[0].Entry, updates[0].From)
	}
	t := codec.Now()
	stmts := make([]Stmt, 0, len(inserts)+len(updates))
	for _, e := range inserts {
		stmts = append(stmts, Stmt{SQL: insertEntrySQL, Args: codec.EntryValues(e, t)})
	}
	for _, u := range updates {
		stmts = append(stmts, Stmt{SQL: updateEntrySQL, Args: updateValues(u.Entry, u.From, t), Guard: true})
	}
	i, err := s.db.Batch(ctx, stmts)
	switch {
	case err == nil:
		return nil
	case i < 0:
		return fmt.Errorf("write log entries: %w", err)
	case i < len(inserts):
		return s.insertError(inserts[i], err)
	}
	u := updates[i-len(inserts)]
	if errors.Is(err, ErrNoRow) {
		return s.entryMiss(ctx, u.Entry, u.From)
	}
	return fmt.Errorf("update log entry %s#%d: %w", u.Entry.ExecutionID, u.Entry.Seq, err)
}

// insertError maps an insert's error to the Store's.
func (s *Store) insertError(e codemode.Entry, err error) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("insert log entry %s#%d", e.ExecutionID, e.Seq)
	if s.d.ForeignKey(err) {
		return fmt.Errorf("%s: execution: %w", what, codemode.ErrNotFound)
	}
	return s.inserted(err, what, codemode.ErrConflict)
}

// updateValues are updateEntrySQL's arguments; t stands in for a zero
// UpdatedAt.
func updateValues(e codemode.Entry, from codemode.EntryState, t time.Time) []any {
	return []any{e.State.String(), codec.RawText(e.Result), e.Error, e.Task, codec.Nanos(codec.UpdatedAt(e, t)), e.ExecutionID, e.Seq, from.String()}
}

// entryMiss explains why a conditional update of e matched no row.
func (s *Store) entryMiss(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	return s.explain(ctx, fmt.Sprintf("update log entry %s#%d", e.ExecutionID, e.Seq),
		`SELECT 'state is ' || state FROM entries WHERE execution_id = $1 AND seq = $2`, []any{e.ExecutionID, e.Seq}, from.String())
}
