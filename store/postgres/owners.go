package postgres

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
	_, err := s.pool.Exec(ctx, `INSERT INTO owners (`+sc.OwnerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, sc.OwnerValues(o)...)
	if isUniqueViolation(err) {
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
	tag, err := s.pool.Exec(ctx, `UPDATE owners SET heartbeat_at = $1 WHERE id = $2`, sc.Nanos(sc.Stamp(at)), id)
	if err != nil {
		return fmt.Errorf("heartbeat of owner %s: %w", id, err)
	}
	return oneRow(tag, "heartbeat of owner "+id)
}

// Owners lists the registered owners by id.
func (s *Store) Owners(ctx context.Context) ([]codemode.Owner, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sc.OwnerColumns+` FROM owners ORDER BY id`)
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
	tag, err := s.pool.Exec(ctx, `DELETE FROM owners WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("remove owner %s: %w", id, err)
	}
	return oneRow(tag, "remove owner "+id)
}
