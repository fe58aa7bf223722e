package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/codemode-mcp/codemode-mcp/internal/short"
)

// logConn is a connection of the pool kept for WriteEntries' transactions.
// database/sql starts a goroutine for every Tx (to roll it back when its
// context ends), which costs a thread wake-up per logged call; on a
// connection of our own, BEGIN IMMEDIATE, COMMIT and ROLLBACK are plain
// prepared statements, run under mu so transactions do not interleave.
type logConn struct {
	mu       sync.Mutex
	conn     *sql.Conn
	begin    *sql.Stmt
	commit   *sql.Stmt
	rollback *sql.Stmt
	insert   *sql.Stmt
	update   *sql.Stmt
	state    *sql.Stmt
	all      []*sql.Stmt
}

// openLogConn takes a connection from db and prepares the statements of a
// log transaction on it.
func openLogConn(ctx context.Context, db *sql.DB) (*logConn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("log connection: %w", err)
	}
	l := &logConn{conn: conn}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&l.begin, `BEGIN IMMEDIATE`},
		{&l.commit, `COMMIT`},
		{&l.rollback, `ROLLBACK`},
		{&l.insert, insertEntrySQL},
		{&l.update, updateEntrySQL},
		{&l.state, entryStateSQL},
	} {
		stmt, err := conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("log connection: prepare %q: %w", short.FirstLine(p.sql), err), l.close())
		}
		*p.dst = stmt
		l.all = append(l.all, stmt)
	}
	return l, nil
}

// tx runs f between BEGIN IMMEDIATE and COMMIT; when f or the commit
// fails, the transaction is rolled back and nothing is written.
func (l *logConn) tx(ctx context.Context, f func(insert, update *sql.Stmt, state func() *sql.Stmt) error) (err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("write log entries: begin: %w", err)
	}
	defer func() {
		if err == nil {
			return
		}
		if _, rerr := l.rollback.ExecContext(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, fmt.Errorf("write log entries: roll back: %w", rerr))
		}
	}()
	if err := f(l.insert, l.update, func() *sql.Stmt { return l.state }); err != nil {
		return err
	}
	if _, err := l.commit.ExecContext(ctx); err != nil {
		return fmt.Errorf("write log entries: commit: %w", err)
	}
	return nil
}

// close closes the statements and gives the connection back.
func (l *logConn) close() error {
	var errs []error
	for _, stmt := range l.all {
		errs = append(errs, stmt.Close())
	}
	errs = append(errs, l.conn.Close())
	return errors.Join(errs...)
}
