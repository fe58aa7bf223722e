// Package sqlite implements codemode.Store (and connectors.Records) on a
// SQLite file with modernc.org/sqlite (pure Go, so CGO_ENABLED=0 builds
// work). It is the only package that imports the SQLite driver. The
// store's logic is store/sqlstore's; this package runs its statements
// (db.go), and keeps what is SQLite's own: the connection's set-up, the
// migrations, the write-ahead journal (journal.go) and giving the space of
// pruned runs back (reclaim.go).
//
// The database runs in WAL mode with a busy timeout and IMMEDIATE
// transactions, so several handles, in one process or several (a server and
// the CLI), can share one file. The schema is versioned with PRAGMA
// user_version and migrated in one transaction at Open.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

// Options configure Open.
type Options struct {
	// Synchronous is the SQLite synchronous level: "normal" (the default;
	// durable across application crashes, a power loss may lose the last
	// transactions) or "full" (durable across power loss, ~4x slower per
	// logged call).
	Synchronous string
	// Logger receives migration and diagnostic messages; nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxRunLog is the quota of one run's log (store.max_run_log) of the
	// processes that write to the store: recovery reads a journal of up
	// to four times it, at least 256 MiB (journal.go).
	MaxRunLog int64
	// AsIs opens an existing file as it is (codemode-mcp check): nothing
	// is created, migrated or set up (the journal mode, the one-time
	// vacuum), so nothing is written but what the caller writes; Schema
	// says how its schema stands (one newer than this binary's is refused,
	// as Open refuses it).
	AsIs bool
}

// Store is a codemode.Store on one SQLite file. It is safe for concurrent
// use, and several Stores (in this or other processes) may share one file.
type Store struct {
	*sqlstore.Store
	db     *sql.DB
	path   string
	logger *slog.Logger
	run    *sqlDB
	// schema and latest are the file's schema version and this binary's
	// (Schema).
	schema, latest int
	// journals are the write-ahead journals this store has open
	// (journal.go).
	journals *journals
	// closeOnce gives the batches' connection back once (closing a
	// sql.Conn twice is an error).
	closeOnce sync.Once
}

var (
	_ codemode.Store     = (*Store)(nil)
	_ codemode.Journaler = (*Store)(nil)
	_ connectors.Records = (*Store)(nil)
)

// Open opens (creating it with mode 0600 if needed) the SQLite database at
// path and migrates its schema; with opts.AsIs it must exist and is left as
// it is. The parent directory must exist. A database written by a newer
// version of the schema is refused.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	sync, err := synchronousLevel(opts.Synchronous)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	abs, err := prepareFile(path, !opts.AsIs)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(abs, sync, opts.AsIs))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s := &Store{db: db, path: abs, logger: logger, journals: newJournals(abs, sync == "FULL", opts.MaxRunLog)}
	if opts.AsIs {
		err = s.readSchema(ctx)
	} else if err = s.migrate(ctx); err == nil {
		s.incrementalMode(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if s.run, err = openDB(ctx, db); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", abs, err), db.Close())
	}
	s.Store = sqlstore.New(s.run, dialect, logger)
	return s, nil
}

// Schema returns the file's schema version and this binary's: the same
// but in a store opened as it is (Options.AsIs).
func (s *Store) Schema() (current, latest int) { return s.schema, s.latest }

// Close closes the prepared statements and the database. It is safe to call
// more than once.
func (s *Store) Close() error {
	var runErr error
	s.closeOnce.Do(func() { runErr = s.run.close() })
	if err := errors.Join(runErr, s.journals.close(), s.db.Close()); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// synchronousLevel maps Options.Synchronous to the PRAGMA value.
func synchronousLevel(v string) (string, error) {
	switch strings.ToLower(v) {
	case "", "normal":
		return "NORMAL", nil
	case "full":
		return "FULL", nil
	}
	return "", fmt.Errorf("store synchronous %q: want \"normal\" or \"full\"", v)
}

// dsn builds the connection string. The pragmas apply to every connection
// of the pool. IMMEDIATE transactions take the write lock up front: deferred
// ones that read then write fail with SQLITE_BUSY under concurrent writers
// whatever the busy timeout. The journal mode, kept in the file, is set but
// in a file opened as it is (asIs).
func dsn(path, sync string, asIs bool) string {
	mode := "_pragma=journal_mode(WAL)&"
	if asIs {
		mode = ""
	}
	return path + "?" + mode + "_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(" + sync + ")" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate"
}

// prepareFile checks path and, with create, creates the database file with
// mode 0600 when it does not exist (SQLite gives the -wal and -shm files
// the database's mode); without, the file must exist. It returns the
// absolute path.
func prepareFile(path string, create bool) (string, error) {
	if path == "" {
		return "", errors.New("store path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("store path %s: %w", path, err)
	}
	if strings.ContainsRune(abs, '?') {
		return "", fmt.Errorf("store path %s: must not contain '?'", abs)
	}
	if !create {
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("open store %s: %w", abs, err)
		}
		return abs, nil
	}
	// A missing directory, or a file in its place, is told by the error
	// of the create, which names the path.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return abs, nil
	}
	if err != nil {
		return "", fmt.Errorf("create store %s: %w", abs, err)
	}
	// The umask can only remove bits; make sure the owner can read and write.
	err = errors.Join(f.Chmod(0o600), f.Close())
	if err != nil {
		return "", fmt.Errorf("create store %s: %w", abs, err)
	}
	return abs, nil
}
