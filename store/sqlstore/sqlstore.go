// Package sqlstore is codemode.Store and connectors.Records written once
// for both SQL stores (store/sqlite, store/postgres): every query, the
// checks, the mapping of errors to the contract's, the conditional moves,
// recovery, snippets, owners and the records' compare-and-swap. What the
// two databases do differently is a DB (how a statement runs: SQLite's
// prepared statements on a pool and a connection of its own, PostgreSQL's
// pool and pipelined batches) and a Dialect (a word of SQL, and how
// errors are told apart); each keeps its own migrations, which Migrate
// runs.
//
// The SQL is written with numbered parameters ($1, $2, …), which both
// drivers bind by number. Rows are laid out once for both databases, each
// type's beside its queries: timestamps as Unix nanoseconds, JSON as text
// (NULL when empty), states and statuses as their String form, and checks
// that refuse a value that could not be read back.
//
// Every conditional move (an entry's or a run's state, a recovery, a
// record's swap) is one statement whose WHERE names the state it moves
// from: in PostgreSQL under READ COMMITTED a second racing UPDATE waits for
// the first and re-reads the row, in SQLite writers take the file's lock in
// turn, so of racing writers exactly one matches and the others are told
// ErrConflict.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// A DB runs the store's statements on one database. Its methods must be
// safe for concurrent use. A query that finds no row for QueryRow reports
// an error that errors.Is sql.ErrNoRows (pgx.ErrNoRows is one).
type DB interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// QueryRow runs a query of at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Query runs a query and calls row with each of its rows in order
	// until row returns an error, which Query returns.
	Query(ctx context.Context, query string, args []any, row func(Row) error) error
	// Batch runs stmts in order as one transaction: all or nothing. On a
	// failure it returns the index of the statement that failed (-1 when
	// the transaction itself did) and its error, ErrNoRow for a Guard
	// statement that changed no row.
	Batch(ctx context.Context, stmts []Stmt) (int, error)
}

// A Row is a row to scan: *sql.Row, *sql.Rows, pgx.Row and pgx.Rows all
// are.
type Row interface {
	Scan(dest ...any) error
}

// A Stmt is one statement of a batch.
type Stmt struct {
	SQL  string
	Args []any
	// Guard: the batch fails with ErrNoRow, undone, if this statement
	// changes no row (a conditional move that lost).
	Guard bool
}

// ErrNoRow is a Batch's error for a Guard statement that changed no row.
var ErrNoRow = errors.New("the statement changed no row")

// A Dialect is what differs between the databases in the store's SQL.
type Dialect struct {
	// Order is the column that breaks ties of created_at in insertion
	// order (SQLite's rowid, PostgreSQL's identity column ord); a list
	// read by page compares (created_at, Order) as a row value.
	Order string
	// Unique and ForeignKey tell a unique (or primary key) violation and a
	// foreign key violation from other errors.
	Unique, ForeignKey func(error) bool
}

// Store is codemode.Store, but for Close (its backend's), and
// connectors.Records on a DB. It is safe for concurrent use, and any number
// of Stores (in this or other processes) may share the database.
type Store struct {
	db     DB
	d      Dialect
	logger *slog.Logger
	// warned holds the names of the unreadable rows lists logged
	// (leftOut), so that recovery's lists at every heartbeat log each
	// once per process; it is emptied when it holds maxWarned, bounding
	// it.
	warnedMu sync.Mutex
	warned   map[string]bool
	// The statements that name d.Order, written once. pruneTerminal keeps
	// the newest with NOT IN … LIMIT rather than skipping them with OFFSET:
	// SQLite takes OFFSET only after a LIMIT (-1 for none), which
	// PostgreSQL refuses; this is one text for both. Both prune statements
	// count only the runs whose created_at is an integer (timed).
	listOrder, countTerminal, pruneTerminal, scanRecords string
}

var _ connectors.Records = (*Store)(nil)

// New returns the Store that runs its statements on db in dialect d;
// logger receives what housekeeping did.
func New(db DB, d Dialect, logger *slog.Logger) *Store {
	return &Store{db: db, d: d, logger: logger,
		listOrder:     ` ORDER BY created_at DESC, ` + d.Order + ` DESC`,
		countTerminal: `SELECT count(*) FROM executions WHERE status IN ` + terminalIn + ` AND ` + timed("created_at"),
		pruneTerminal: `DELETE FROM executions WHERE status IN ` + terminalIn + ` AND ` + timed("created_at") + ` AND id NOT IN (
			SELECT id FROM executions WHERE status IN ` + terminalIn + ` AND ` + timed("created_at") + `
			ORDER BY created_at DESC, ` + d.Order + ` DESC LIMIT $1)`,
		scanRecords: `SELECT id, value, created_at FROM records WHERE kind = $1 ORDER BY created_at DESC, ` + d.Order + ` DESC`,
	}
}

// timed is the SQL condition that column, a time, holds an integer, as
// every row the store writes does. SQLite keeps whatever a hand edit or
// another program wrote (a text, a real: an unreadable row), and compares
// it with no conversion to the integer of its cast, which it differs
// from; in PostgreSQL's BIGINT it always holds. Prune goes by time, and
// leaves a row of no readable time alone, out of its count: its age is
// unknown, so it is neither the oldest to delete nor one of the newest to
// keep (SQLite sorts a text after every number: it would take a keep
// slot), and it stays for the operator, told by the lists that leave it
// out (leftOut), to fix or delete.
func timed(column string) string { return column + ` = CAST(` + column + ` AS BIGINT)` }

// values is the VALUES list of an INSERT of columns: ($1, $2, …).
func values(columns string) string {
	ps := make([]string, strings.Count(columns, ",")+1)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(i+1)
	}
	return "(" + strings.Join(ps, ", ") + ")"
}

// bind appends v to a query's args and returns its parameter ($n), for a
// query whose conditions vary.
func bind(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}

// inserted maps an insert's error: a unique violation is exists, the
// contract's error for a key that is taken.
func (s *Store) inserted(err error, what string, exists error) error {
	switch {
	case err == nil:
		return nil
	case s.d.Unique(err):
		return fmt.Errorf("%s: %w", what, exists)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// explain tells why a conditional move of what changed no row:
// ErrNotFound when query, of where the row is, finds none, else
// ErrConflict naming where it is and where it was expected (want).
func (s *Store) explain(ctx context.Context, what, query string, args []any, want string) error {
	var cur string
	err := s.db.QueryRow(ctx, query, args...).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s: %w", what, codemode.ErrNotFound)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %s, not %s: %w", what, cur, want, codemode.ErrConflict)
}

// oneRow turns a statement that changed no row into ErrNotFound.
func oneRow(n int64, err error, what string) error {
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case n == 0:
		return fmt.Errorf("%s: %w", what, codemode.ErrNotFound)
	}
	return nil
}

// collect runs query and scans each of its rows with scan; its error is
// told as what's. A row scan cannot read (unreadable) is left out
// (leftOut).
func collect[T any](ctx context.Context, s *Store, what, query string, args []any, scan func(Row) (T, error)) ([]T, error) {
	var out []T
	err := s.db.Query(ctx, query, args, func(r Row) error {
		v, err := scan(r)
		if s.leftOut(ctx, err) {
			return nil
		}
		out = append(out, v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// A badRow is a row that cannot be read (codemode.ErrUnreadable), for
// why: a value of a type, or a text, that this release does not read, as
// another release or a hand edit may leave. row names it.
type badRow struct {
	row string
	why error
}

func (b *badRow) Error() string {
	return b.row + ": " + codemode.ErrUnreadable.Error() + ": " + b.why.Error()
}
func (b *badRow) Unwrap() []error { return []error{codemode.ErrUnreadable, b.why} }

// unreadable is the error of row, which cannot be read for why.
func unreadable(row string, why error) error {
	return &badRow{row: short.Clip(row, 128), why: why}
}

// leftOut reports whether err is a row's that cannot be read (unreadable),
// which a list leaves out rather than fail: one bad row must hide neither
// the others nor what is wrong with it, so it is logged, naming it, the
// first time this Store meets it (recovery lists runs and owners at every
// heartbeat).
func (s *Store) leftOut(ctx context.Context, err error) bool {
	var bad *badRow
	if !errors.As(err, &bad) {
		return false
	}
	if s.firstWarning(bad.row) {
		s.logger.WarnContext(ctx, "a row of the store cannot be read; it is left out (fix or delete it in the store)", "row", bad.row, "err", bad.why)
	}
	return true
}

// maxWarned bounds Store.warned.
const maxWarned = 1024

// firstWarning reports whether the unreadable row (its name, clipped) is
// to be logged: the first time this Store meets it (or since warned was
// last emptied).
func (s *Store) firstWarning(id string) bool {
	s.warnedMu.Lock()
	defer s.warnedMu.Unlock()
	if s.warned[id] {
		return false
	}
	if s.warned == nil || len(s.warned) >= maxWarned {
		s.warned = map[string]bool{}
	}
	s.warned[id] = true
	return true
}

// nanos is t as stored: Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

// fromNanos is the inverse of nanos, in UTC.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// intOf reads an integer column scanned as it is stored (into an any):
// zero and an error naming the column for any other value. SQLite keeps
// whatever a hand edit or another program wrote in a column (text, a
// real), which must make that row unreadable, not fail a list;
// PostgreSQL's INTEGER (pgx reads an int32) and BIGINT columns hold
// nothing else.
func intOf(v any, column string) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	}
	return 0, fmt.Errorf("column %s holds %T %s, not an integer", column, v, short.Quote(fmt.Sprintf("%v", v)))
}

// nanosOf reads a timestamp column scanned as it is stored (intOf): Unix
// nanoseconds; the zero time and an error for any other value.
func nanosOf(v any, column string) (time.Time, error) {
	n, err := intOf(v, column)
	if err != nil {
		return time.Time{}, err
	}
	return fromNanos(n), nil
}

// now is the store's clock, as a column keeps it. A store only uses it
// for a timestamp its caller left zero: the runtime stamps what it writes
// with its own (injectable) clock.
func now() time.Time { return time.Now().Round(0).UTC() }

// stamp returns t, or now when t is zero, as a column keeps it.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return fromNanos(nanos(t))
}

// rawText binds raw JSON as text, or NULL when empty.
func rawText(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// jsonText marshals v to text, or NULL when empty reports true; what
// names the column in an error.
func jsonText(v any, empty bool, what string) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return string(b), nil
}

// jsonDecode unmarshals a nullable JSON column into v; NULL leaves v alone.
func jsonDecode(b []byte, v any, column string) error {
	if b == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode column %s: %w", column, err)
	}
	return nil
}
