package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// Execution is the durable record of one program.
type Execution struct {
	ID     string     `json:"executionId"`
	Code   string     `json:"code"`
	Status ExecStatus `json:"status"`
	// Result is the program's value when completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the failure message when the status is error (or why it was
	// rejected).
	Error string   `json:"error,omitempty"`
	Logs  []string `json:"logs,omitempty"`
	// Connectors maps each connector the run could use to the fingerprint of
	// its tool schemas at the time the run started.
	Connectors map[string]string `json:"connectors,omitempty"`
	// Clock is what makes Date and Math.random replay.
	Clock     sandbox.Clock `json:"clock"`
	CreatedAt time.Time     `json:"createdAt"`
	UpdatedAt time.Time     `json:"updatedAt"`
}

// EntryKind tells a connector call from a step.
type EntryKind int

const (
	KindCall EntryKind = iota + 1
	KindStep
)

func (k EntryKind) String() string {
	switch k {
	case KindCall:
		return "call"
	case KindStep:
		return "step"
	}
	return "unknown"
}

func (k EntryKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

func (k *EntryKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "call":
		*k = KindCall
	case "step":
		*k = KindStep
	default:
		return errors.New("unknown entry kind " + string(b))
	}
	return nil
}

// Entry is one logged call or step of an execution.
type Entry struct {
	ExecutionID string    `json:"executionId"`
	Seq         int       `json:"seq"`
	Kind        EntryKind `json:"kind"`
	// Connector and Method name the call (Method is the sandbox name); for a
	// step Connector is "codemode", Method is "step" and Name is the step's
	// name.
	Connector string          `json:"connector"`
	Method    string          `json:"method"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	State     EntryState      `json:"state"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// Snippet is a saved program, runnable with codemode.run(name, input).
type Snippet struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Code        string          `json:"code"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Connectors are the connectors the source run used.
	Connectors    []string  `json:"connectors,omitempty"`
	FromExecution string    `json:"fromExecution,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
}

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

// Store persists executions, their logs and snippets. Implementations must be
// safe for concurrent use, including by several processes sharing one
// database (a server and the CLI). Conditional updates are how concurrent
// deciders agree: exactly one of two racing updates from the same state
// succeeds.
type Store interface {
	// CreateExecution inserts e; ErrConflict if the id exists.
	CreateExecution(ctx context.Context, e *Execution) error
	// GetExecution returns ErrNotFound for an unknown id.
	GetExecution(ctx context.Context, id string) (*Execution, error)
	// UpdateExecution stores e (status, result, error, logs, connectors,
	// clock; UpdatedAt is set by the store) if the stored status is still
	// from, else ErrConflict (ErrNotFound if there is no such execution).
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
