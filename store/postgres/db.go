package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// dialect is PostgreSQL's: ord is the identity column that keeps
// insertion order.
var dialect = sqlstore.Dialect{
	Order:      "ord",
	Unique:     func(err error) bool { return pgCode(err) == "23505" },
	ForeignKey: func(err error) bool { return pgCode(err) == "23503" },
}

// pgCode returns the SQLSTATE of err, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgDB runs the store's statements on the pool (sqlstore.DB). pgx
// prepares each statement text once per connection and keeps it.
type pgDB struct{ pool *pgxpool.Pool }

func (p pgDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := p.pool.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (p pgDB) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return p.pool.QueryRow(ctx, query, args...)
}

func (p pgDB) Query(ctx context.Context, query string, args []any, row func(sqlstore.Row) error) error {
	rows, err := p.pool.Query(ctx, query, args...)
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

// Batch sends stmts as one pipelined batch, one round trip, which
// PostgreSQL runs as one implicit transaction (the messages up to a single
// Sync), so an error in any statement undoes them all. A guarded statement
// is sent as `WITH u AS (… RETURNING 1) SELECT 1 / count(*) FROM u`, which
// fails (division by zero, SQLSTATE 22012) when it changes no row, so that
// it undoes the batch too.
func (p pgDB) Batch(ctx context.Context, stmts []sqlstore.Stmt) (int, error) {
	b := &pgx.Batch{}
	for _, st := range stmts {
		q := st.SQL
		if st.Guard {
			q = `WITH u AS (` + q + ` RETURNING 1) SELECT 1 / count(*) FROM u`
		}
		b.Queue(q, st.Args...)
	}
	br := p.pool.SendBatch(ctx, b)
	failed, err := -1, error(nil)
	for i := range stmts {
		if _, err = br.Exec(); err != nil {
			failed = i
			if pgCode(err) == "22012" {
				err = sqlstore.ErrNoRow
			}
			break
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		return -1, cerr
	}
	return failed, err
}
