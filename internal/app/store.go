package app

import (
	"context"
	"fmt"
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
	if config.IsPostgresURL(location) {
		st, err := postgres.Open(ctx, location, postgres.Options{MaxConns: int32(min(cfg.Store.Postgres.MaxConns, 1<<20)), Logger: log})
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
	st, err := sqlite.Open(ctx, location, sqlite.Options{Synchronous: cfg.Store.Synchronous, Logger: log, MaxRunLog: cfg.Store.MaxRunLog})
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
