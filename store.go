package codemode

import (
	"context"
	"errors"
)

// EntryUpdate is one conditional update of a log entry (see
// Store.WriteEntries): Entry's state, result and error are stored if the
// stored state is still From.
type EntryUpdate struct {
	Entry Entry
	From  EntryState
}

// ExecutionFilter selects executions to list.
type ExecutionFilter struct {
	Limit  int        // 0: no limit
	Status ExecStatus // 0: any
}

// Errors returned (wrapped) by Store implementations.
var (
	// ErrNotFound: no such execution, entry or snippet.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record exists already (insert) or is no longer in the
	// expected state (conditional update).
	ErrConflict = errors.New("conflict")
)

// Store persists executions, their logs and snippets. Implementations must
// be safe for concurrent use, including by several processes sharing one
// database (a server and the CLI). Conditional updates are how concurrent
// deciders agree: exactly one of two racing updates from the same state
// succeeds.
//
// Timestamps are kept as given: the runtime stamps what it writes with its
// own clock, which decides retention and expiry. A zero CreatedAt or
// UpdatedAt is set to the store's clock (and written back where the
// argument is a pointer).
type Store interface {
	// CreateExecution inserts e; ErrConflict if the id exists.
	CreateExecution(ctx context.Context, e *Execution) error
	// GetExecution returns ErrNotFound for an unknown id.
	GetExecution(ctx context.Context, id string) (*Execution, error)
	// UpdateExecution stores e (status, result, error, logs, connectors,
	// clock, UpdatedAt) if the stored status is still from, else
	// ErrConflict (ErrNotFound if there is no such execution).
	UpdateExecution(ctx context.Context, e *Execution, from ExecStatus) error
	// ListExecutions returns executions newest first.
	ListExecutions(ctx context.Context, f ExecutionFilter) ([]*Execution, error)
	// DeleteExecution removes an execution and its log; ErrNotFound if absent.
	DeleteExecution(ctx context.Context, id string) error
	// PruneExecutions deletes the oldest terminal executions beyond keep
	// (running and paused ones are never deleted) and returns how many went.
	PruneExecutions(ctx context.Context, keep int) (int, error)

	// Entries returns an execution's log in seq order.
	Entries(ctx context.Context, executionID string) ([]Entry, error)
	// InsertEntry adds a new entry; ErrConflict if (execution, seq) exists.
	InsertEntry(ctx context.Context, e Entry) error
	// UpdateEntry stores e's state, result and error if the stored state is
	// still from, else ErrConflict (ErrNotFound if absent).
	UpdateEntry(ctx context.Context, e Entry, from EntryState) error
	// WriteEntries writes, in one transaction, every insert in order (each
	// as InsertEntry would), then every update in order (each as
	// UpdateEntry would). It is all or nothing: if an insert fails
	// (ErrConflict, ErrNotFound) or an update finds its entry absent
	// (ErrNotFound) or no longer in its From state (ErrConflict), nothing
	// is written and that error is returned. With nothing to write it
	// returns nil.
	WriteEntries(ctx context.Context, inserts []Entry, updates []EntryUpdate) error

	// SaveSnippet inserts or replaces a snippet by name.
	SaveSnippet(ctx context.Context, s Snippet) error
	// GetSnippet returns ErrNotFound for an unknown name.
	GetSnippet(ctx context.Context, name string) (*Snippet, error)
	// ListSnippets returns snippets by name.
	ListSnippets(ctx context.Context) ([]Snippet, error)
	// DeleteSnippet returns ErrNotFound for an unknown name.
	DeleteSnippet(ctx context.Context, name string) error

	Close() error
}
