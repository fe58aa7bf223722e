package sqlitestore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration moves the schema from version-1 to version.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. Files are
// named NNNN_description.sql, numbered from 1 without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d (versions must be 1, 2, … without gaps or duplicates)", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

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
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("open store %s: migration %s: %w", s.path, m.name, err)
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
