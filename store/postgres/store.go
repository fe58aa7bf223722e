// Package postgres implements codemode.Store (and connectors.Records) on
// PostgreSQL with pgx, for several replicas of codemode-mcp sharing one
// execution log. It is the only package that imports pgx. The store's
// logic is store/sqlstore's; this package runs its statements on a pgx
// pool (db.go) and migrates the schema.
//
// There is no write-ahead journal: a call with a side effect is logged by
// a commit of its own (one round trip) before it is made; read-only calls
// are written in groups as with SQLite. Schema migrations run in one
// transaction under an advisory lock, so replicas starting at once agree.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// Options configure Open.
type Options struct {
	// MaxConns caps the pool's connections (0: pgx's default, the larger
	// of 4 and the number of CPUs). A pool_max_conns parameter in the URL
	// wins.
	MaxConns int32
	// Logger receives migration messages; nil means slog.Default().
	Logger *slog.Logger
	// AsIs opens the database as it is (codemode-mcp check): its schema is
	// neither created nor migrated, so nothing is written but what the
	// caller writes; Schema says how it stands (one newer than this
	// binary's is refused, as Open refuses it).
	AsIs bool
}

// Store is a codemode.Store on one PostgreSQL database. It is safe for
// concurrent use, and any number of Stores (in this or other processes, on
// this or other machines) may share the database.
type Store struct {
	*sqlstore.Store
	pool   *pgxpool.Pool
	where  string // the URL without its password, for messages
	logger *slog.Logger
	// schema and latest are the database's schema version and this
	// binary's (Schema).
	schema, latest int
}

var (
	_ codemode.Store     = (*Store)(nil)
	_ connectors.Records = (*Store)(nil)
)

// Redact returns the URL with its passwords replaced by "xxxxx", for
// messages: the user's, in the URL or as a parameter, and the client
// key's (sslpassword, which pgx takes too); what does not parse is
// reduced to its scheme.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		scheme, _, _ := strings.Cut(rawURL, "://")
		return scheme + "://(unparsable URL)"
	}
	q, changed := u.Query(), false
	for _, key := range []string{"password", "sslpassword"} {
		if q.Has(key) {
			q.Set(key, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Open connects to the database at url (a postgres:// URL, as libpq
// takes it), checks that it answers, and migrates its schema (but with
// opts.AsIs). A database written by a newer version of the schema is
// refused.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	where := Redact(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's message may quote the URL: do not pass it on.
		return nil, fmt.Errorf("store %s: the URL does not parse as a PostgreSQL connection URL", where)
	}
	if opts.MaxConns > 0 && !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = opts.MaxConns
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	s := &Store{Store: sqlstore.New(pgDB{pool}, dialect, logger), pool: pool, where: where, logger: logger}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store %s: %w", where, err)
	}
	migrate := s.migrate
	if opts.AsIs {
		migrate = s.readSchema
	}
	if err := migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Schema returns the database's schema version and this binary's: the
// same but in a store opened as it is (Options.AsIs).
func (s *Store) Schema() (current, latest int) { return s.schema, s.latest }

// Close closes the pool. It is safe to call more than once.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key migrations take (any constant
// unlikely to be used by another application on the same database).
const migrationLock = 0x636f64656d6f6465 // "codemode"

// migrate applies the missing migrations in one transaction under an
// advisory lock, so replicas opening a new database at once agree, and a
// failure leaves the database as it was. The version is a row of
// codemode_schema.
func (s *Store) migrate(ctx context.Context) (err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store %s: begin migration: %w", s.where, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("store %s: %w", s.where, err), tx.Rollback(context.WithoutCancel(ctx)))
		}
	}()
	// The lock, then the version's table with its one row (a statement
	// without parameters goes by the simple protocol, which runs several).
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(migrationLock)+`);
		CREATE TABLE IF NOT EXISTS codemode_schema (version INTEGER NOT NULL);
		INSERT INTO codemode_schema (version) SELECT 0 WHERE NOT EXISTS (SELECT FROM codemode_schema)`); err != nil {
		return fmt.Errorf("prepare migration: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT version FROM codemode_schema`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	latest, err := sqlstore.Migrate(migrationFiles, current, "database", func(q string) error {
		_, err := tx.Exec(ctx, q)
		return err
	})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE codemode_schema SET version = $1`, latest); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	if current < latest {
		s.logger.DebugContext(ctx, "store schema migrated", "store", s.where, "from", current, "to", latest)
	}
	s.schema, s.latest = latest, latest
	return nil
}

// readSchema reads the database's schema version without migrating it
// (Options.AsIs): 0 when codemode-mcp has not set the database up; one
// newer than this binary's is refused, as migrate refuses it.
func (s *Store) readSchema(ctx context.Context) (err error) {
	err = s.pool.QueryRow(ctx, `SELECT version FROM codemode_schema`).Scan(&s.schema)
	if pgCode(err) == "42P01" { // undefined_table: not set up
		err = nil
	}
	if err == nil {
		s.latest, err = sqlstore.Migrate(migrationFiles, s.schema, "database", nil)
	}
	if err != nil {
		return fmt.Errorf("store %s: %w", s.where, err)
	}
	return nil
}
