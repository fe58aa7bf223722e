package sqlite

import (
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"

	"context"
	"embed"
	"errors"
	"fmt"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sc.Migration, error) { return sc.Migrations(migrationFiles) }

// migrate applies the missing migrations in one IMMEDIATE transaction, so
// two processes opening a new file at once agree, and a failure leaves the
// file as it was.
func (s *Store) migrate(ctx context.Context) (err error) {
	ms, err := migrations()
	if err != nil {
		return err
	}
	latest := len(ms)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("open store %s: begin migration: %w", s.path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("open store %s: read schema version: %w", s.path, err)
	}
	if current > latest {
		return fmt.Errorf("open store %s: schema version %d is newer than this binary's %d; upgrade codemode-mcp or use another database file", s.path, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("open store %s: migration %s: %w", s.path, m.Name, err)
		}
	}
	if current < latest {
		// PRAGMA takes no bound parameters; latest is an int.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", latest)); err != nil {
			return fmt.Errorf("open store %s: set schema version: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("open store %s: commit migration: %w", s.path, err)
	}
	if current < latest {
		s.logger.DebugContext(ctx, "store schema migrated", "path", s.path, "from", current, "to", latest)
	}
	return nil
}
