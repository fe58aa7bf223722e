package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// RegisterOwner inserts o; ErrConflict if its id exists. Zero StartedAt
// and Heartbeat are set to now.
func (s *Store) RegisterOwner(ctx context.Context, o codemode.Owner) error {
	if o.ID == "" {
		return errors.New("register owner: empty id")
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO owners (`+sc.OwnerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sc.OwnerValues(o)...)
	if isPrimaryKeyViolation(err) {
		return fmt.Errorf("register owner %s: %w", o.ID, codemode.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("register owner %s: %w", o.ID, err)
	}
	return nil
}

// Heartbeat sets owner id's heartbeat to at (zero: now); ErrNotFound if it
// is not registered.
func (s *Store) Heartbeat(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE owners SET heartbeat_at = ? WHERE id = ?`, sc.Nanos(sc.Stamp(at)), id)
	if err != nil {
		return fmt.Errorf("heartbeat of owner %s: %w", id, err)
	}
	return oneRow(res, fmt.Sprintf("heartbeat of owner %s", id))
}

// Owners lists the registered owners by id.
func (s *Store) Owners(ctx context.Context) ([]codemode.Owner, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sc.OwnerColumns+` FROM owners ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list owners: %w", err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanOwner)
	if err != nil {
		return nil, fmt.Errorf("list owners: %w", err)
	}
	return out, nil
}

// RemoveOwner deletes owner id; ErrNotFound if absent.
func (s *Store) RemoveOwner(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM owners WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("remove owner %s: %w", id, err)
	}
	return oneRow(res, fmt.Sprintf("remove owner %s", id))
}

// oneRow turns a statement that touched no row into ErrNotFound.
func oneRow(res interface{ RowsAffected() (int64, error) }, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, codemode.ErrNotFound)
	}
	return nil
}
