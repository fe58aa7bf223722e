package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/codec"
)

var saveSnippetSQL = `INSERT INTO snippets (` + codec.SnippetColumns + `) VALUES ` + values(codec.SnippetColumns) + `
	ON CONFLICT (name) DO UPDATE SET description = excluded.description, code = excluded.code,
	  input_schema = excluded.input_schema, connectors = excluded.connectors,
	  from_execution = excluded.from_execution, created_at = excluded.created_at`

var registerOwnerSQL = `INSERT INTO owners (` + codec.OwnerColumns + `) VALUES ` + values(codec.OwnerColumns)

// SaveSnippet inserts or replaces a snippet by name. A zero CreatedAt is
// set to now.
func (s *Store) SaveSnippet(ctx context.Context, sn codemode.Snippet) error {
	if sn.Name == "" {
		return errors.New("save snippet: empty name")
	}
	vals, err := codec.SnippetValues(sn)
	if err == nil {
		_, err = s.db.Exec(ctx, saveSnippetSQL, vals...)
	}
	if err != nil {
		return fmt.Errorf("save snippet %s: %w", sn.Name, err)
	}
	return nil
}

// GetSnippet returns ErrNotFound for an unknown name.
func (s *Store) GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	sn, err := codec.ScanSnippet(s.db.QueryRow(ctx, `SELECT `+codec.SnippetColumns+` FROM snippets WHERE name = $1`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("snippet %s: %w", name, codemode.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("get snippet %s: %w", name, err)
	}
	return &sn, nil
}

// ListSnippets returns snippets ordered by name.
func (s *Store) ListSnippets(ctx context.Context) ([]codemode.Snippet, error) {
	out, err := collect(ctx, s.db, `SELECT `+codec.SnippetColumns+` FROM snippets ORDER BY name`, nil, codec.ScanSnippet)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	return out, nil
}

// DeleteSnippet returns ErrNotFound for an unknown name.
func (s *Store) DeleteSnippet(ctx context.Context, name string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM snippets WHERE name = $1`, name)
	return oneRow(n, err, "delete snippet "+name)
}

// RegisterOwner inserts o; ErrConflict if its id exists. Zero StartedAt
// and Heartbeat are set to now.
func (s *Store) RegisterOwner(ctx context.Context, o codemode.Owner) error {
	if o.ID == "" {
		return errors.New("register owner: empty id")
	}
	_, err := s.db.Exec(ctx, registerOwnerSQL, codec.OwnerValues(o)...)
	return s.inserted(err, "register owner "+o.ID, codemode.ErrConflict)
}

// Heartbeat sets owner id's heartbeat to at (zero: now); ErrNotFound if it
// is not registered.
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	n, err := s.db.Exec(ctx, `UPDATE owners SET heartbeat_at = $1 WHERE id = $2`, codec.Nanos(codec.Stamp(at)), id)
	return oneRow(n, err, "heartbeat of owner "+id)
}

// Owners lists the registered owners by id.
func (s *Store) Owners(ctx context.Context) ([]codemode.Owner, error) {
	out, err := collect(ctx, s.db, `SELECT `+codec.OwnerColumns+` FROM owners ORDER BY id`, nil, codec.ScanOwner)
	if err != nil {
		return nil, fmt.Errorf("list owners: %w", err)
	}
	return out, nil
}

// RemoveOwner deletes owner id; ErrNotFound if absent.
func (s *Store) RemoveOwner(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM owners WHERE id = $1`, id)
	return oneRow(n, err, "remove owner "+id)
}
