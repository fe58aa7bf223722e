package sqlitestore

import (
	"context"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	sc "github.com/codemode-mcp/codemode-mcp/runtime/storecodec"
)

var _ connectors.Records = (*Store)(nil)

// PutRecord inserts r; ErrRecordExists if r.Kind has r.ID. A zero
// CreatedAt is set to now.
func (s *Store) PutRecord(ctx context.Context, r connectors.Record) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES (?, ?, ?, ?)`,
		r.Kind, r.ID, string(r.Value), sc.Nanos(sc.Stamp(r.CreatedAt)))
	if isPrimaryKeyViolation(err) {
		return fmt.Errorf("put %s %s: %w", r.Kind, r.ID, connectors.ErrRecordExists)
	}
	if err != nil {
		return fmt.Errorf("put %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}

// DeleteRecord removes a record and reports whether it was there.
func (s *Store) DeleteRecord(ctx context.Context, kind, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM records WHERE kind = ? AND id = ?`, kind, id)
	if err != nil {
		return false, fmt.Errorf("delete %s %s: %w", kind, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete %s %s: %w", kind, id, err)
	}
	return n > 0, nil
}

// ScanRecords calls fn with kind's records, newest first, until it returns
// false.
func (s *Store) ScanRecords(ctx context.Context, kind string, fn func(connectors.Record) bool) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, value, created_at FROM records WHERE kind = ? ORDER BY created_at DESC, rowid DESC`, kind)
	if err != nil {
		return fmt.Errorf("scan %s: %w", kind, err)
	}
	defer rows.Close()
	return sc.ScanRecords(kind, rows, fn)
}
