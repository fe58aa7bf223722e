package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// PutRecord inserts r (connectors.Records).
func (s *Store) PutRecord(ctx context.Context, r connectors.Record) error {
	_, err := s.db.Exec(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES ($1, $2, $3, $4)`,
		r.Kind, r.ID, string(r.Value), nanos(stamp(r.CreatedAt)))
	return s.inserted(err, "put "+r.Kind+" "+r.ID, connectors.ErrRecordExists)
}

// DeleteRecord removes a record and reports whether it was there.
func (s *Store) DeleteRecord(ctx context.Context, kind, id string) (bool, error) {
	n, err := s.db.Exec(ctx, `DELETE FROM records WHERE kind = $1 AND id = $2`, kind, id)
	if err != nil {
		return false, fmt.Errorf("delete %s %s: %w", kind, id, err)
	}
	return n > 0, nil
}

// errStop ends ScanRecords' query when fn asks for no more.
var errStop = errors.New("stop")

// ScanRecords calls fn with kind's records, newest first, until it returns
// false; it leaves out a record it cannot read (leftOut).
func (s *Store) ScanRecords(ctx context.Context, kind string, fn func(connectors.Record) bool) error {
	err := s.db.Query(ctx, s.scanRecords, []any{kind}, func(row Row) error {
		r := connectors.Record{Kind: kind}
		err := scanRecord(row, &r, &r.ID)
		if s.leftOut(ctx, err) {
			return nil
		}
		if err == nil && !fn(r) {
			return errStop
		}
		return err
	})
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("scan %s: %w", kind, err)
	}
	return nil
}

// scanRecord reads into r its value and created_at after more; a record
// whose time cannot be decoded is unreadable.
func scanRecord(row Row, r *connectors.Record, more ...any) error {
	var (
		value   []byte
		created any // (nanosOf)
	)
	if err := row.Scan(append(more, &value, &created)...); err != nil {
		return err
	}
	var err error
	r.Value = value
	if r.CreatedAt, err = nanosOf(created, "created_at"); err != nil {
		return unreadable("record "+r.Kind+"/"+r.ID, err)
	}
	return nil
}

// GetRecord returns kind's record id; ErrRecordNotFound if there is none.
func (s *Store) GetRecord(ctx context.Context, kind, id string) (connectors.Record, error) {
	r := connectors.Record{Kind: kind, ID: id}
	err := scanRecord(s.db.QueryRow(ctx, `SELECT value, created_at FROM records WHERE kind = $1 AND id = $2`, kind, id), &r)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, connectors.ErrRecordNotFound)
	case errors.Is(err, codemode.ErrUnreadable):
		return connectors.Record{}, err
	case err != nil:
		return connectors.Record{}, fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	return r, nil
}

// ReplaceRecord swaps the value of kind's record id from old to new (see
// connectors.Records): one conditional statement, so that of racing
// swappers, in this process or another on the same database, one wins.
func (s *Store) ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error) {
	var (
		n   int64
		err error
	)
	switch {
	case old == nil && new == nil:
		return false, fmt.Errorf("replace %s %s: neither an old nor a new value", kind, id)
	case old == nil:
		n, err = s.db.Exec(ctx, `INSERT INTO records (kind, id, value, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, id) DO NOTHING`,
			kind, id, string(new), nanos(now()))
	case new == nil:
		n, err = s.db.Exec(ctx, `DELETE FROM records WHERE kind = $1 AND id = $2 AND value = $3`, kind, id, string(old))
	default:
		n, err = s.db.Exec(ctx, `UPDATE records SET value = $1 WHERE kind = $2 AND id = $3 AND value = $4`, string(new), kind, id, string(old))
	}
	if err != nil {
		return false, fmt.Errorf("replace %s %s: %w", kind, id, err)
	}
	return n == 1, nil
}
