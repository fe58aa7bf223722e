package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

const snippetColumns = `name, description, code, input_schema, connectors, from_execution, created_at`

// SaveSnippet inserts or replaces a snippet by name. A zero CreatedAt is set
// to now.
func (s *Store) SaveSnippet(ctx context.Context, sn codemode.Snippet) error {
	if sn.Name == "" {
		return errors.New("save snippet: empty name")
	}
	created := sn.CreatedAt
	if created.IsZero() {
		created = now()
	}
	conns, err := jsonText(sn.Connectors, len(sn.Connectors) == 0)
	if err != nil {
		return fmt.Errorf("save snippet %s: encode connectors: %w", sn.Name, err)
	}
	_, err = s.db.ExecContext(ctx,
		`INSERT INTO snippets (`+snippetColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (name) DO UPDATE SET description = excluded.description, code = excluded.code,
		   input_schema = excluded.input_schema, connectors = excluded.connectors,
		   from_execution = excluded.from_execution, created_at = excluded.created_at`,
		sn.Name, sn.Description, sn.Code, rawText(sn.InputSchema), conns, sn.FromExecution, toNanos(created))
	if err != nil {
		return fmt.Errorf("save snippet %s: %w", sn.Name, err)
	}
	return nil
}

// GetSnippet returns ErrNotFound for an unknown name.
func (s *Store) GetSnippet(ctx context.Context, name string) (*codemode.Snippet, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+snippetColumns+` FROM snippets WHERE name = ?`, name)
	sn, err := scanSnippet(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("snippet %s: %w", name, codemode.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get snippet %s: %w", name, err)
	}
	return &sn, nil
}

// ListSnippets returns snippets ordered by name.
func (s *Store) ListSnippets(ctx context.Context) ([]codemode.Snippet, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+snippetColumns+` FROM snippets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	defer rows.Close()
	var out []codemode.Snippet
	for rows.Next() {
		sn, err := scanSnippet(rows)
		if err != nil {
			return nil, fmt.Errorf("list snippets: %w", err)
		}
		out = append(out, sn)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list snippets: %w", err)
	}
	return out, nil
}

// DeleteSnippet returns ErrNotFound for an unknown name.
func (s *Store) DeleteSnippet(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM snippets WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete snippet %s: %w", name, err)
	}
	return oneRow(res, "delete snippet "+name)
}

func scanSnippet(sc scanner) (codemode.Snippet, error) {
	var (
		sn            codemode.Snippet
		schema, conns []byte
		created       int64
	)
	if err := sc.Scan(&sn.Name, &sn.Description, &sn.Code, &schema, &conns, &sn.FromExecution, &created); err != nil {
		return sn, err
	}
	sn.InputSchema = rawValue(schema)
	if err := jsonDecode(conns, &sn.Connectors, "connectors"); err != nil {
		return sn, fmt.Errorf("snippet %s: %w", sn.Name, err)
	}
	sn.CreatedAt = fromNanos(created)
	return sn, nil
}
