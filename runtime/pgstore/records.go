package pgstore

import (
	"context"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	sc "github.com/codemode-mcp/codemode-mcp/runtime/storecodec"
)

// PutRecord inserts r; ErrRecordExists if r.Kind has r.ID. A zero
// CreatedAt is set to now.
func (s *Store) PutRecord(ctx context.Context, r connectors.Record) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES ($1, $2, $3, $4)`,
		r.Kind, r.ID, string(r.Value), sc.Nanos(sc.Stamp(r.CreatedAt)))
	if isUniqueViolation(err) {
		return fmt.Errorf("put %s %s: %w", r.Kind, r.ID, connectors.ErrRecordExists)
	}
	if err != nil {
		return fmt.Errorf("put %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}

// DeleteRecord removes a record and reports whether it was there.
func (s *Store) DeleteRecord(ctx context.Context, kind, id string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM records WHERE kind = $1 AND id = $2`, kind, id)
	if err != nil {
		return false, fmt.Errorf("delete %s %s: %w", kind, id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ScanRecords calls fn with kind's records, newest first, until it returns
// false.
func (s *Store) ScanRecords(ctx context.Context, kind string, fn func(connectors.Record) bool) error {
	rows, err := s.pool.Query(ctx, `SELECT id, value, created_at FROM records WHERE kind = $1 ORDER BY created_at DESC, ord DESC`, kind)
	if err != nil {
		return fmt.Errorf("scan %s: %w", kind, err)
	}
	defer rows.Close()
	return sc.ScanRecords(kind, rows, fn)
}
