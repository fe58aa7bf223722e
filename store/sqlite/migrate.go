package sqlite

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies the missing migrations in one IMMEDIATE transaction, so
// two processes opening a new file at once agree, and a failure leaves the
// file as it was. The version is the file's PRAGMA user_version.
func (s *Store) migrate(ctx context.Context) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open store %s: begin migration: %w", s.path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("open store %s: %w", s.path, err), tx.Rollback())
		}
	}()
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	latest, err := sqlstore.Migrate(migrationFiles, current, "database file", func(q string) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	})
	if err != nil {
		return err
	}
	if current < latest {
		// PRAGMA takes no bound parameters; latest is an int.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", latest)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	if current < latest {
		s.logger.DebugContext(ctx, "store schema migrated", "path", s.path, "from", current, "to", latest)
	}
	s.schema, s.latest = latest, latest
	return nil
}

// readSchema reads the file's schema version without migrating it
// (Options.AsIs), refusing one newer than this binary's as migrate does.
func (s *Store) readSchema(ctx context.Context) (err error) {
	if err = s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&s.schema); err == nil {
		s.latest, err = sqlstore.Migrate(migrationFiles, s.schema, "database file", nil)
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	return nil
}
