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
	// false or there are no more; a record the store cannot read (its
	// time not an integer, as a hand edit may leave) is left out, logged,
	// and GetRecord of it says so. fn must not call the Records.
	ScanRecords(ctx context.Context, kind string, fn func(Record) bool) error
	// GetRecord returns the record of kind and id; ErrRecordNotFound if
	// there is none.
	GetRecord(ctx context.Context, kind, id string) (Record, error)
	// ReplaceRecord is a compare-and-swap: it replaces the value of the
	// record of kind and id by new if the stored value is old, byte for
	// byte, and reports whether it did. A nil old means "no record" (the
	// record is inserted with CreatedAt now, if there is none); a nil new
	// deletes the record (if its value is old). Of several callers, in one
	// process or several sharing the database, swapping from the same old
	// value, exactly one succeeds. A replaced record keeps its CreatedAt.
	ReplaceRecord(ctx context.Context, kind, id string, old, new json.RawMessage) (bool, error)
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

// ErrRecordNotFound is returned (wrapped) by GetRecord for an id its kind
// does not have.
var ErrRecordNotFound = errors.New("record not found")
