package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/postgres"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// Store is the execution log with the records native connectors keep in
// it (the notes connector's notes): sqlite or postgres.
type Store interface {
	codemode.Store
	connectors.Records
}

// OpenStore opens the store at location: a PostgreSQL database for a
// postgres:// URL, else a SQLite file (its directory is created 0700).
func OpenStore(ctx context.Context, cfg *config.Config, location string, log *slog.Logger) (Store, error) {
	return openStore(ctx, cfg, location, log, false)
}

// OpenAsIs opens the store cfg configures (store.path, else the default) as
// it is, for check: nothing is created, migrated or set up in it (the
// stores' Options.AsIs). It returns no store when there is none yet: a
// SQLite file that is not there, a database without codemode-mcp's
// tables; note then says what serve would do, as it does for a schema
// serve would migrate ("" otherwise). An error says where the file
// names the store, as Open's does.
func OpenAsIs(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ Store, note string, err error) {
	location, err := StorePath(cfg, "")
	if err != nil {
		return nil, "", err
	}
	if errors.Is(StoreMissing(location), fs.ErrNotExist) {
		return nil, "would be created", nil
	}
	st, err := openStore(ctx, cfg, location, log, true)
	if err != nil {
		return nil, "", located(cfg, err)
	}
	switch current, latest := st.(interface{ Schema() (int, int) }).Schema(); {
	case current == 0:
		return nil, "its tables would be created", st.Close()
	case current < latest:
		return st, fmt.Sprintf("schema version %d: serve and run migrate it to %d", current, latest), nil
	}
	return st, "", nil
}

// StoreMissing says why there is no store at location: a SQLite file that
// is not there. A PostgreSQL URL is taken to exist.
func StoreMissing(location string) error {
	if config.IsPostgresURL(location) {
		return nil
	}
	_, err := os.Stat(location)
	return err
}

// located prefixes err, an error opening the configured store, with
// where the file names it ("file:line: store.path: ") as its other
// errors say, when it does.
func located(cfg *config.Config, err error) error {
	if cfg.Store.PathLine == 0 {
		return err
	}
	return fmt.Errorf("%s%w", (&config.Error{File: cfg.Path, Line: cfg.Store.PathLine, Field: "store.path"}).Error(), err)
}

func openStore(ctx context.Context, cfg *config.Config, location string, log *slog.Logger, asIs bool) (Store, error) {
	if config.IsPostgresURL(location) {
		st, err := postgres.Open(ctx, location, postgres.Options{MaxConns: int32(min(cfg.Store.Postgres.MaxConns, 1<<20)), Logger: log, AsIs: asIs})
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		return st, nil
	}
	if dir := filepath.Dir(location); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store directory for %s: %w", location, err)
		}
	}
	if fi, err := os.Stat(location); err == nil && fi.IsDir() {
		// SQLite would say "unable to open database file".
		return nil, fmt.Errorf("store %s is a directory: name the SQLite file (store.path or --db), such as %s", location, filepath.Join(location, "codemode.db"))
	}
	st, err := sqlite.Open(ctx, location, sqlite.Options{Synchronous: cfg.Store.Synchronous, Logger: log, MaxRunLog: cfg.Store.MaxRunLog, AsIs: asIs})
	if err != nil {
		return nil, err // it names the store
	}
	return st, nil
}

// StoreDisplay is a store location as it may be shown: a PostgreSQL URL
// without its password, a file path made absolute.
func StoreDisplay(location string) string {
	if config.IsPostgresURL(location) {
		return postgres.Redact(location)
	}
	if abs, err := filepath.Abs(location); err == nil {
		return abs
	}
	return location
}
