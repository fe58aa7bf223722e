package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// dialect is SQLite's: rowid keeps insertion order.
var dialect = sqlstore.Dialect{
	Order: "rowid",
	Unique: func(err error) bool {
		c := sqliteCode(err)
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	},
	ForeignKey: func(err error) bool { return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY },
}

// sqliteCode returns the extended SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// sqlDB runs the store's statements (sqlstore.DB) on SQLite.
//
// modernc.org/sqlite keeps no statement cache, so SQL text run through
// db.ExecContext is parsed again on every call: every statement is
// prepared once, on first use (a *sql.Stmt of the pool is prepared once
// per pooled connection), and reused.
//
// Batches run on a connection of the pool kept for them, under mu:
// database/sql starts a goroutine for every Tx (to roll it back when its
// context ends), which costs a thread wake-up per logged call; on a
// connection of our own, BEGIN IMMEDIATE, COMMIT and ROLLBACK are plain
// prepared statements. Every other write (Exec) runs there too, under mu,
// so this process's writers queue in Go: SQLite lets one writer at a time
// and, on a pool of connections, the others wait in its busy handler,
// whose growing sleeps let newcomers overtake a waiter until its busy
// timeout passes (SQLITE_BUSY, "database is locked", under load). Reads
// stay on the pool: WAL lets them run beside the writer.
type sqlDB struct {
	stmts // on the pool

	mu   sync.Mutex // held through a batch
	conn *sql.Conn
	log  stmts // prepared on conn
}

// openDB takes the batches' connection from db.
func openDB(ctx context.Context, db *sql.DB) (*sqlDB, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("log connection: %w", err)
	}
	return &sqlDB{stmts: stmts{prepare: db.PrepareContext}, conn: conn, log: stmts{prepare: conn.PrepareContext}}, nil
}

// close closes the statements and gives the connection back.
func (d *sqlDB) close() error {
	return errors.Join(d.stmts.close(), d.log.close(), d.conn.Close())
}

// Batch runs batch between BEGIN IMMEDIATE and COMMIT on the batches'
// connection; when one fails, the transaction is rolled back.
func (d *sqlDB) Batch(ctx context.Context, batch []sqlstore.Stmt) (failed int, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.log.Exec(ctx, `BEGIN IMMEDIATE`); err != nil {
		return -1, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err == nil {
			return
		}
		if _, rerr := d.log.Exec(context.WithoutCancel(ctx), `ROLLBACK`); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back: %w", rerr))
		}
	}()
	for i, st := range batch {
		n, err := d.log.Exec(ctx, st.SQL, st.Args...)
		if err == nil && st.Guard && n == 0 {
			err = sqlstore.ErrNoRow
		}
		if err != nil {
			return i, err
		}
	}
	if _, err := d.log.Exec(ctx, `COMMIT`); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	return -1, nil
}

// Exec runs a write on the batches' connection, under mu (see sqlDB).
func (d *sqlDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.Exec(ctx, query, args...)
}

// errRow is a row whose query could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// stmts prepares each statement text once, on first use, and runs it. The
// texts are the store's own, a set fixed by its code, so the cache stays
// small.
type stmts struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)
	mu      sync.Mutex // held while preparing
	m       sync.Map   // query → *sql.Stmt
}

func (c *stmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.prepare(ctx, anonymous(query))
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", short.FirstLine(query), err)
	}
	c.m.Store(query, st)
	return st, nil
}

// anonymous writes a statement's numbered parameters ($1, $2, …) as
// SQLite's anonymous ones (?) when they come in order, each once:
// modernc.org/sqlite binds a named or numbered parameter by its name, a
// string it makes for every parameter of every run (20 allocations per
// logged call), an anonymous one by its position. Any other statement is
// left as it is, which SQLite binds by number too.
func anonymous(query string) string {
	var b strings.Builder
	next := 1
	for i := 0; i < len(query); i++ {
		if query[i] != '$' {
			b.WriteByte(query[i])
			continue
		}
		j := i + 1
		for j < len(query) && '0' <= query[j] && query[j] <= '9' {
			j++
		}
		if query[i+1:j] != strconv.Itoa(next) {
			return query
		}
		b.WriteByte('?')
		next++
		i = j - 1
	}
	return b.String()
}

func (c *stmts) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := c.get(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c *stmts) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st, err := c.get(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

func (c *stmts) Query(ctx context.Context, query string, args []any, row func(sqlstore.Row) error) error {
	st, err := c.get(ctx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// close closes every prepared statement; closing twice is harmless.
func (c *stmts) close() error {
	var errs []error
	c.m.Range(func(q, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		c.m.Delete(q)
		return true
	})
	return errors.Join(errs...)
}
