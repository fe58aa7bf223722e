package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// entryInsertColumns are what an entry nobody decided is inserted with
// (insertOf); decidedColumns who decided it and when (decidedValues),
// written only for an entry that names a decider, so that the write of
// every call binds no more than it did before people were recorded.
// scanEntry reads entryColumns, both.
const (
	entryInsertColumns = `execution_id, seq, kind, connector, method, name, args, result, error, state, reverts, task, created_at, updated_at`
	decidedColumns     = `decided_by, decided_by_name, decided_by_email, decided_at`
	entryColumns       = entryInsertColumns + `, ` + decidedColumns
)

var (
	insertEntrySQL        = `INSERT INTO entries (` + entryInsertColumns + `) VALUES ` + values(entryInsertColumns)
	insertDecidedEntrySQL = `INSERT INTO entries (` + entryColumns + `) VALUES ` + values(entryColumns)
)

// insertOf is the statement that inserts e: with its decider only when it
// names one. t stands in for a zero UpdatedAt, and UpdatedAt for a zero
// CreatedAt.
func insertOf(e codemode.Entry, t time.Time) Stmt {
	t = updatedAt(e, t)
	created := t
	if !e.CreatedAt.IsZero() {
		created = e.CreatedAt
	}
	args := []any{e.ExecutionID, e.Seq, e.Kind.String(), e.Connector, e.Method, e.Name,
		rawText(e.Args), rawText(e.Result), e.Error, e.State.String(), e.Reverts, e.Task, nanos(created), nanos(t)}
	if e.DecidedBy.IsZero() {
		return Stmt{SQL: insertEntrySQL, Args: args}
	}
	return Stmt{SQL: insertDecidedEntrySQL, Args: append(args, decidedValues(e)...)}
}

// decidedValues binds who decided e and when, as decidedColumns.
func decidedValues(e codemode.Entry) []any {
	at := int64(0)
	if !e.DecidedAt.IsZero() {
		at = nanos(e.DecidedAt)
	}
	return []any{e.DecidedBy.Subject, e.DecidedBy.Name, e.DecidedBy.Email, at}
}

// updatedAt is the time a write of e stores: e.UpdatedAt, or t when that
// is zero.
func updatedAt(e codemode.Entry, t time.Time) time.Time {
	if !e.UpdatedAt.IsZero() {
		return e.UpdatedAt
	}
	return t
}

// CheckInsert refuses an entry that could not be read back.
func CheckInsert(e codemode.Entry) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	switch e.Kind {
	case codemode.KindCall, codemode.KindStep, codemode.KindService:
	default:
		return fmt.Errorf("insert log entry %s#%d: invalid kind %d", e.ExecutionID, e.Seq, int(e.Kind))
	}
	return nil
}

// checkUpdate refuses a new state that could not be read back.
func checkUpdate(e codemode.Entry) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return nil
}

func checkState(st codemode.EntryState) error {
	if _, err := codemode.ParseEntryState(st.String()); err != nil {
		return fmt.Errorf("invalid log entry state %d", int(st))
	}
	return nil
}

// scanEntry reads entryColumns, then into more. An entry whose kind,
// state, numbers or times cannot be decoded is returned, as read, with an
// error that wraps codemode.ErrUnreadable, which no list leaves out (not
// unreadable's): a log is never read without one of its entries. (Its
// numbers and times are scanned as stored, as an execution's are: see
// intOf.)
func scanEntry(row Row, more ...any) (codemode.Entry, error) {
	var (
		e            codemode.Entry
		kind, state  string
		args, result []byte
		// (One struct, so that they take one allocation.)
		v struct{ seq, reverts, created, updated, decided any }
	)
	err := row.Scan(append([]any{&e.ExecutionID, &v.seq, &kind, &e.Connector, &e.Method, &e.Name,
		&args, &result, &e.Error, &state, &v.reverts, &e.Task, &v.created, &v.updated,
		&e.DecidedBy.Subject, &e.DecidedBy.Name, &e.DecidedBy.Email, &v.decided}, more...)...)
	if err == nil {
		var (
			errs    [7]error
			n, back int64
		)
		n, errs[0] = intOf(v.seq, "seq")
		back, errs[1] = intOf(v.reverts, "reverts")
		e.Seq, e.Reverts = int(n), int(back)
		errs[2], errs[3] = e.Kind.UnmarshalText([]byte(kind)), e.State.UnmarshalText([]byte(state))
		e.CreatedAt, errs[4] = nanosOf(v.created, "created_at")
		e.UpdatedAt, errs[5] = nanosOf(v.updated, "updated_at")
		if v.decided != int64(0) { // (none)
			e.DecidedAt, errs[6] = nanosOf(v.decided, "decided_at")
		}
		if err = errors.Join(errs[:]...); err != nil {
			err = fmt.Errorf("log entry #%d: %w: %w", e.Seq, codemode.ErrUnreadable, err)
		}
	}
	e.Args, e.Result = json.RawMessage(args), json.RawMessage(result)
	return e, err
}

// scanClippedEntry reads entryColumns, then the lengths in bytes of args,
// result and error. An entry that cannot be decoded is returned with its
// Error saying so and why, so that a reader sees the rest of the log and
// which entry is unreadable (Entries, which a replay reads, fails on it).
func scanClippedEntry(row Row) (codemode.ClippedEntry, error) {
	var c codemode.ClippedEntry
	e, err := scanEntry(row, &c.Sizes.Args, &c.Sizes.Result, &c.Sizes.Error)
	if errors.Is(err, codemode.ErrUnreadable) {
		e.Error, err = err.Error(), nil
		c.Sizes.Error = len(e.Error)
	}
	c.Entry = e
	return c, err
}

// A task id, once logged, stays: an update without one keeps it.
const updateEntrySQL = `UPDATE entries SET state = $1, result = $2, error = $3, task = coalesce(nullif($4, ''), task), updated_at = $5
	WHERE execution_id = $6 AND seq = $7 AND state = $8`

// So does a decider: an update that names one (the move out of pending
// or sign_in) sets it only where none is logged. (Each CASE reads the row
// as it was before the update.)
const updateDecidedEntrySQL = `UPDATE entries SET state = $1, result = $2, error = $3, task = coalesce(nullif($4, ''), task), updated_at = $5,
	decided_by = CASE WHEN decided_by = '' THEN $6 ELSE decided_by END,
	decided_by_name = CASE WHEN decided_by = '' THEN $7 ELSE decided_by_name END,
	decided_by_email = CASE WHEN decided_by = '' THEN $8 ELSE decided_by_email END,
	decided_at = CASE WHEN decided_by = '' THEN $9 ELSE decided_at END
	WHERE execution_id = $10 AND seq = $11 AND state = $12`

// Entries returns an execution's log in seq order (codemode.Store).
func (s *Store) Entries(ctx context.Context, executionID string) ([]codemode.Entry, error) {
	return logOf(ctx, s, executionID, `SELECT `+entryColumns+` FROM entries WHERE execution_id = $1 ORDER BY seq`,
		[]any{executionID}, func(row Row) (codemode.Entry, error) { return scanEntry(row) })
}

// ClippedEntries returns the part of an execution's log q selects
// (codemode.Store). The values are cut in SQL (clippedSQL): SQLite reads
// a value whole and cuts it before it is handed over, so the memory it
// takes is one value at a time. After and Preview are bound as 32-bit
// integers, what PostgreSQL's seq and substr take: a seq is one, and no
// value is longer than a preview of math.MaxInt32 characters (a text is
// at most 1 GB in both databases).
func (s *Store) ClippedEntries(ctx context.Context, executionID string, q codemode.LogQuery) ([]codemode.ClippedEntry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = math.MaxInt32
	}
	args := []any{executionID, min(max(q.After, math.MinInt32), math.MaxInt32), limit}
	if q.Preview > 0 {
		args = append(args, min(q.Preview, math.MaxInt32))
	}
	return logOf(ctx, s, executionID, clippedSQL(q.Preview), args, scanClippedEntry)
}

// clippedSQL selects entryColumns, the values cut as preview says
// (codemode.LogQuery.Preview), then their lengths in bytes (octet_length,
// which both databases compute without reading a value stored apart from
// its row). substr counts characters in both; PostgreSQL's reads only
// the start of a value kept compressed or out of line (TOAST) as far as
// it can (its left is the same function).
func clippedSQL(preview int) string {
	args, result, errText := "args", "result", "error"
	switch {
	case preview < 0:
		args, result, errText = "NULL", "NULL", "''"
	case preview > 0:
		args, result, errText = "substr(args, 1, $4)", "substr(result, 1, $4)", "substr(error, 1, $4)"
	}
	return `SELECT execution_id, seq, kind, connector, method, name, ` + args + `, ` + result + `, ` + errText +
		`, state, reverts, task, created_at, updated_at, decided_by, decided_by_name, decided_by_email, decided_at,
		coalesce(octet_length(args), 0), coalesce(octet_length(result), 0), octet_length(error)
		FROM entries WHERE execution_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`
}

// logOf reads rows of execution id's log; an empty log of an execution
// that does not exist is ErrNotFound.
func logOf[T any](ctx context.Context, s *Store, id, query string, args []any, scan func(Row) (T, error)) ([]T, error) {
	out, err := collect(ctx, s, "log of execution "+id, query, args, scan)
	if err == nil && len(out) == 0 {
		var one int
		if err = s.db.QueryRow(ctx, `SELECT 1 FROM executions WHERE id = $1`, id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			err = codemode.ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("log of execution %s: %w", id, err)
		}
	}
	return out, err
}

// InsertEntry adds a new entry (codemode.Store).
func (s *Store) InsertEntry(ctx context.Context, e codemode.Entry) error {
	if err := CheckInsert(e); err != nil {
		return err
	}
	st := insertOf(e, now())
	_, err := s.db.Exec(ctx, st.SQL, st.Args...)
	return s.insertError(e, err)
}

// UpdateEntry moves an entry if its state is still from (codemode.Store).
func (s *Store) UpdateEntry(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	if err := checkUpdate(e); err != nil {
		return err
	}
	st := updateOf(e, from, now())
	n, err := s.db.Exec(ctx, st.SQL, st.Args...)
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
		if err := CheckInsert(e); err != nil {
			return err
		}
	}
	for _, u := range updates {
		if err := checkUpdate(u.Entry); err != nil {
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
	t := now()
	stmts := make([]Stmt, 0, len(inserts)+len(updates))
	for _, e := range inserts {
		stmts = append(stmts, insertOf(e, t))
	}
	for _, u := range updates {
		st := updateOf(u.Entry, u.From, t)
		st.Guard = true
		stmts = append(stmts, st)
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

// updateOf is the statement that makes update e (from state from); t
// stands in for a zero UpdatedAt. It writes a decider only when e names
// one.
func updateOf(e codemode.Entry, from codemode.EntryState, t time.Time) Stmt {
	args := append(make([]any, 0, 8), e.State.String(), rawText(e.Result), e.Error, e.Task, nanos(updatedAt(e, t)))
	if e.DecidedBy.IsZero() {
		return Stmt{SQL: updateEntrySQL, Args: append(args, e.ExecutionID, e.Seq, from.String())}
	}
	args = append(args, decidedValues(e)...) // (grows: decisions are rare)
	return Stmt{SQL: updateDecidedEntrySQL, Args: append(args, e.ExecutionID, e.Seq, from.String())}
}

// entryMiss explains why a conditional update of e matched no row.
func (s *Store) entryMiss(ctx context.Context, e codemode.Entry, from codemode.EntryState) error {
	return s.explain(ctx, fmt.Sprintf("update log entry %s#%d", e.ExecutionID, e.Seq),
		`SELECT 'state is ' || state FROM entries WHERE execution_id = $1 AND seq = $2`, []any{e.ExecutionID, e.Seq}, from.String())
}
