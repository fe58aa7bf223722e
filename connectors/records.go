package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Records is where a native connector keeps what it owns (the notes
// connector's notes): JSON values by kind and id, in the database of the
// execution log, whichever it is (SQLite or PostgreSQL), so that the
// connector works on every store and several replicas share its data.
// Implementations are safe for concurrent use.
type Records interface {
	// PutRecord inserts a record; ErrRecordExists if kind already has id.
	PutRecord(ctx context.Context, r Record) error
	// DeleteRecord removes a record and reports whether it was there.
	DeleteRecord(ctx context.Context, kind, id string) (bool, error)
	// ScanRecords calls fn with the records of kind, newest first (by
	// CreatedAt, then the reverse of insertion order), until fn returns
	// false or there are no more. fn must not call the Records.
	ScanRecords(ctx context.Context, kind string, fn func(Record) bool) error
}

// Record is one value a native connector keeps.
type Record struct {
	Kind      string
	ID        string
	Value     json.RawMessage
	CreatedAt time.Time
}

// ErrRecordExists is returned (wrapped) by PutRecord for an id its kind
// already has.
var ErrRecordExists = errors.New("record exists")
