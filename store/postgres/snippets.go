package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// SaveSnippet inserts or replaces a snippet by name. A zero CreatedAt is
// set to now.
func (s *Store) SaveSnippet(ctx context.Context, sn codemode.Snippet) error {
	if sn.Name == "" {
		return errors.New("save snippet: empty name")
	}
	vals, err := sc.SnippetValues(sn)
	if err != nil {
		return fmt.Errorf("save snippet %s: %w", sn.Name, err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO snippets (`+sc.SnippetColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		 ON CONFLICT (name) DO UPDATE SET description = excluded.description, code = excluded.code,
		   input_schema = excluded.input_schema, connectors = excluded.connectors,
		   from_execution = excluded.from_execution, created_at = excluded.created_at`, vals...)
	if err != nil {
		return fmt.Errorf("save snippet %s: %w", sn.Name, err)
	}
	return nil
}

// GetSnippet returns ErrNotFound for an unknown name.
func (s *Store) GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	sn, err := sc.ScanSnippet(s.pool.QueryRow(ctx, `SELECT `+sc.SnippetColumns+` FROM snippets WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("snippet %s: %w", name, codemode.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get snippet %s: %w", name, err)
	}
	return &sn, nil
}

// ListSnippets returns snippets ordered by name.
func (s *Store) ListSnippets(ctx context.Context) ([]codemode.Snippet, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sc.SnippetColumns+` FROM snippets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanSnippet)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	return out, nil
}

// DeleteSnippet returns ErrNotFound for an unknown name.
func (s *Store) DeleteSnippet(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM snippets WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("delete snippet %s: %w", name, err)
	}
	return oneRow(tag, "delete snippet "+name)
}
