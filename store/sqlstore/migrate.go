package sqlstore

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// A Migration moves a store's schema from Version-1 to Version.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the migrations in fsys's migrations directory in
// version order. Files are named NNNN_description.sql, numbered from 1
// without gaps.
func Migrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		out = append(out, Migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d (versions must be 1, 2, … without gaps or duplicates)", m.Name, i+1)
		}
	}
	return out, nil
}

// Migrate brings a schema at version current to the latest of the
// migrations in fsys, running each one it lacks with exec, inside the one
// transaction the caller holds (so that a failure leaves the database as
// it was), and returns that latest version. A schema newer than this
// binary's is refused: the binary must be upgraded, or another database
// (what) used. With exec nil it runs nothing, only refuses a newer schema
// (a store opened as it is).
func Migrate(fsys fs.FS, current int, what string, exec func(sql string) error) (int, error) {
	ms, err := Migrations(fsys)
	if err != nil {
		return 0, err
	}
	if current < 0 {
		return 0, fmt.Errorf("schema version %d is not one codemode-mcp writes; use another %s", current, what)
	}
	if current > len(ms) {
		return 0, fmt.Errorf("schema version %d is newer than this binary's %d; upgrade codemode-mcp or use another %s", current, len(ms), what)
	}
	if exec == nil {
		return len(ms), nil
	}
	for _, m := range ms[current:] {
		if err := exec(m.SQL); err != nil {
			return 0, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return len(ms), nil
}
