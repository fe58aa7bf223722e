package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
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

// GetRecord returns kind's record id; ErrRecordNotFound if there is none.
func (s *Store) GetRecord(ctx context.Context, kind, id string) (connectors.Record, error) {
	var value string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT value, created_at FROM records WHERE kind = ? AND id = ?`, kind, id).Scan(&value, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, connectors.ErrRecordNotFound)
	}
	if err != nil {
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	return connectors.Record{Kind: kind, ID: id, Value: json.RawMessage(value), CreatedAt: sc.FromNanos(created)}, nil
}

// ReplaceRecord swaps the value of kind's record id from old to new (see
// connectors.Records): one conditional statement, so that of racing
// swappers, in this process or another on the same file, one wins.
func (s *Store) ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
	var res sql.Result
	var err error
	switch {
	case old == nil && new == nil:
		return false, fmt.Errorf("replace %s %s: neither an old nor a new value", kind, id)
	case old == nil:
		res, err = s.db.ExecContext(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (kind, id) DO NOTHING`,
			kind, id, string(new), sc.Nanos(time.Now()))
	case new == nil:
		res, err = s.db.ExecContext(ctx, `DELETE FROM records WHERE kind = ? AND id = ? AND value = ?`, kind, id, string(old))
	default:
		res, err = s.db.ExecContext(ctx, `UPDATE records SET value = ? WHERE kind = ? AND id = ? AND value = ?`, string(new), kind, id, string(old))
	}
	if err != nil {
		return false, fmt.Errorf("replace %s %s: %w", kind, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("replace %s %s: %w", kind, id, err)
	}
	return n == 1, nil
}
