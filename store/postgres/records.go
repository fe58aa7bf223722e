package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
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

// GetRecord returns kind's record id; ErrRecordNotFound if there is none.
func (s *Store) GetRecord(ctx context.Context, kind, id string) (connectors.Record, error) {
	var value string
	var created int64
	err := s.pool.QueryRow(ctx, `SELECT value, created_at FROM records WHERE kind = $1 AND id = $2`, kind, id).Scan(&value, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, connectors.ErrRecordNotFound)
	}
	if err != nil {
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	return connectors.Record{Kind: kind, ID: id, Value: json.RawMessage(value), CreatedAt: sc.FromNanos(created)}, nil
}

// ReplaceRecord swaps the value of kind's record id from old to new (see
// connectors.Records): one conditional statement, so that of racing
// replicas one wins (under READ COMMITTED a concurrent UPDATE of the row
// waits for the first and then finds the value changed).
func (s *Store) ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
	var tag pgconn.CommandTag
	var err error
	switch {
	case old == nil && new == nil:
		return false, fmt.Errorf("replace %s %s: neither an old nor a new value", kind, id)
	case old == nil:
		tag, err = s.pool.Exec(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, id) DO NOTHING`,
			kind, id, string(new), sc.Nanos(time.Now()))
	case new == nil:
		tag, err = s.pool.Exec(ctx, `DELETE FROM records WHERE kind = $1 AND id = $2 AND value = $3`, kind, id, string(old))
	default:
		tag, err = s.pool.Exec(ctx, `UPDATE records SET value = $1 WHERE kind = $2 AND id = $3 AND value = $4`, string(new), kind, id, string(old))
	}
	if err != nil {
		return false, fmt.Errorf("replace %s %s: %w", kind, id, err)
	}
	return tag.RowsAffected() == 1, nil
}
