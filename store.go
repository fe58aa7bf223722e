package codemode

import (
	"context"
	"errors"
	"time"
)

// EntryUpdate is one conditional update of a log entry (see
// Store.WriteEntries): Entry's state, result and error are stored if the
// stored state is still From.
type EntryUpdate struct {
	Entry Entry
	From  EntryState
}

// A LogQuery selects part of an execution's log for reading
// (Store.ClippedEntries), so that a surface showing a long log reads a
// page of it, and only the start of values too long to show.
type LogQuery struct {
	// After leaves out the entries whose seq is at most After.
	After int
	// Limit is the most entries returned; 0: every one after After.
	Limit int
	// Preview, when positive, cuts each value (arguments, result, error)
	// longer than Preview characters to its first Preview characters; 0
	// reads the values whole; negative reads none, only their sizes.
	Preview int
	// NoOutput is for a reader of the execution with its log (the
	// runtime's ExecutionLog): the execution is read without its result
	// and console output (ExecutionFilter.NoOutput). ClippedEntries reads
	// no execution.
	NoOutput bool
}

// A ClippedEntry is a log entry as Store.ClippedEntries reads it: its
// values may be cut (LogQuery.Preview), and Sizes says how long they are
// in the log. A cut value is the start of the value as logged, not valid
// JSON: show it, never replay or decide from it.
type ClippedEntry struct {
	Entry
	Sizes EntrySizes
}

// EntrySizes are the lengths in bytes of an entry's values as logged.
type EntrySizes struct {
	Args, Result, Error int
}

// Cut reports whether any value of c is shorter than it is in the log.
func (c ClippedEntry) Cut() bool {
	return len(c.Args) < c.Sizes.Args || len(c.Result) < c.Sizes.Result || len(c.Error) < c.Sizes.Error
}

// ExecutionFilter selects executions to list.
type ExecutionFilter struct {
	Limit int // 0: no limit
	// After, when set, reads a list a page at a time: it is the key of
	// the last execution of the page before, and only the executions
	// listed after it are selected. Unlike an offset it holds while the
	// list changes between pages: an execution created meanwhile (newer,
	// so listed before the key) does not push one of the page before onto
	// the next. If the execution After names is gone (deleted between
	// pages), those created at its very CreatedAt are selected again,
	// since where it stood among them is not known.
	After  ExecutionKey
	Status ExecStatus // 0: any
	// Tasks keeps only the runs started as tasks (Execution.Task set).
	Tasks bool
	// StartedBy, when set, keeps only the runs that subject started
	// (Execution.StartedBy.Subject).
	StartedBy string
	// Brief reads only each execution's ID, Status, Owner, Trace,
	// StartedBy, CreatedAt and UpdatedAt: not its code, values, logs,
	// connectors, clock or task (a list polled for what changed).
	Brief bool
	// NoOutput reads each execution without its result and console
	// output (Result, Logs), up to a megabyte each, which only a run's
	// own page shows (a page of runs, of pending actions).
	NoOutput bool
	// ID, when set, keeps only the execution of that id (a read of one
	// run, Brief or NoOutput).
	ID string
}

// An ExecutionKey is where an execution stands in a list, which is
// newest first by CreatedAt, ties broken in insertion order (the later
// first). The zero key is no key; a key needs both fields.
type ExecutionKey struct {
	CreatedAt time.Time
	ID        string
}

// Errors returned (wrapped) by Store implementations.
var (
	// ErrNotFound: no such execution, entry or snippet.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record exists already (insert) or is no longer in the
	// expected state (conditional update).
	ErrConflict = errors.New("conflict")
	// ErrUnreadable: a row (an execution, a log entry, a snippet, an
	// owner, an audit or a connector's record) exists but cannot be
	// decoded (a status this release does not know, broken JSON, a value
	// of another type than its column's, as SQLite keeps).
	ErrUnreadable = errors.New("cannot be read")
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
	// CreateExecution inserts e (with its StartedBy, written once);
	// ErrConflict if the id exists.
	CreateExecution(ctx context.Context, e *Execution) error
	// GetExecution returns ErrNotFound for an unknown id.
	GetExecution(ctx context.Context, id string) (*Execution, error)
	// UpdateExecution stores e (status, result, error, logs, connectors,
	// clock, owner, UpdatedAt) if the stored status is still from and
	// the stored UpdatedAt still since (what the caller read, or last
	// wrote), else ErrConflict (ErrNotFound if there is no such
	// execution): a run that left from and came back to it (paused
	// again) is not decided on as it was. Code, Task and CreatedAt are
	// written once, by CreateExecution.
	UpdateExecution(ctx context.Context, e *Execution, from ExecStatus, since time.Time) error
	// ListExecutions returns executions newest first, ties in insertion
	// order (the later first), as f selects. An execution the store
	// cannot read (a status or a value it cannot decode) is left out,
	// logged with its id and what is wrong, and not counted in f.Limit:
	// one bad row must not hide the others (recovery lists the runs it
	// recovers). GetExecution of it says what is wrong.
	ListExecutions(ctx context.Context, f ExecutionFilter) ([]*Execution, error)
	// DeleteExecution removes an execution and its log; ErrNotFound if absent.
	DeleteExecution(ctx context.Context, id string) error
	// PruneExecutions deletes the oldest terminal executions beyond keep
	// (running and paused ones are never deleted) and returns how many went.
	// One whose CreatedAt the store cannot read is neither deleted nor
	// counted in keep: its age is unknown; it stays for the operator
	// (ListExecutions logs it) to fix or delete.
	PruneExecutions(ctx context.Context, keep int) (int, error)

	// Entries returns an execution's log in seq order.
	Entries(ctx context.Context, executionID string) ([]Entry, error)
	// ClippedEntries returns part of an execution's log in seq order, for
	// reading: the entries q selects, their values cut as q says, each
	// with the full sizes of its values. ErrNotFound if the execution
	// does not exist.
	ClippedEntries(ctx context.Context, executionID string, q LogQuery) ([]ClippedEntry, error)
	// InsertEntry adds a new entry; ErrConflict if (execution, seq) exists.
	InsertEntry(ctx context.Context, e Entry) error
	// UpdateEntry stores e's state, result and error, its Task when set
	// (an update never clears a logged task id) and its DecidedBy and
	// DecidedAt when set (nor a logged decider), if the stored state
	// is still from, else ErrConflict (ErrNotFound if absent).
	UpdateEntry(ctx context.Context, e Entry, from EntryState) error
	// WriteEntries writes, in one transaction, every insert in order (each
	// as InsertEntry would), then every update in order (each as
	// UpdateEntry would). It is all or nothing: if an insert fails
	// (ErrConflict, ErrNotFound) or an update finds its entry absent
	// (ErrNotFound) or no longer in its From state (ErrConflict), nothing
	// is written and that error is returned. With nothing to write it
	// returns nil.
	WriteEntries(ctx context.Context, inserts []Entry, updates []EntryUpdate) error

	// RecoverExecution ends an execution whose owner is gone, in one
	// transaction, if it is still in status from and claimed by owner:
	// the entries id's journal holds (Journaler) are applied first, then
	// every entry still executing, or waiting for its downstream task,
	// becomes unknown (with note as its error) and every entry awaiting a person (pending, sign_in)
	// rejected, and the execution takes e's status, error and UpdatedAt,
	// and no owner. Else ErrConflict
	// (ErrNotFound if there is no such execution). Any journal of the
	// execution is removed.
	RecoverExecution(ctx context.Context, e *Execution, from ExecStatus, owner, note string) error

	// RegisterOwner inserts o; ErrConflict if its id exists.
	RegisterOwner(ctx context.Context, o Owner) error
	// Heartbeat sets owner id's heartbeat to at; ErrNotFound if it is not
	// registered (any more).
	Heartbeat(ctx context.Context, id string, at time.Time) error
	// Owners lists the registered owners by id. One the store cannot
	// read is left out, logged, as an execution is from ListExecutions
	// (so it counts as not registered).
	Owners(ctx context.Context) ([]Owner, error)
	// RemoveOwner deletes owner id; ErrNotFound if absent. Executions keep
	// the id.
	RemoveOwner(ctx context.Context, id string) error

	// SaveSnippet inserts or replaces a snippet by name.
	SaveSnippet(ctx context.Context, s Snippet) error
	// GetSnippet returns ErrNotFound for an unknown name.
	GetSnippet(ctx context.Context, name string) (*Snippet, error)
	// ListSnippets returns snippets by name. One the store cannot read is
	// left out, logged, as an execution is from ListExecutions; GetSnippet
	// of it says what is wrong (ErrUnreadable).
	ListSnippets(ctx context.Context) ([]Snippet, error)
	// SnippetStamps returns snippets by name with only their Name and
	// CreatedAt (when each was last saved): what a surface polls to see
	// whether they changed, without reading their code.
	SnippetStamps(ctx context.Context) ([]Snippet, error)
	// DeleteSnippet returns ErrNotFound for an unknown name.
	DeleteSnippet(ctx context.Context, name string) error

	// Audit appends r to the audit (its ID is assigned, a zero At set
	// to the store's clock). Records are never changed; they outlive the
	// runs they name, and go only by PruneAudit.
	Audit(ctx context.Context, r AuditRecord) error
	// AuditRecords returns the records q selects, oldest first. One the
	// store cannot read is left out, logged, and counted in q.Limit.
	AuditRecords(ctx context.Context, q AuditQuery) ([]AuditRecord, error)
	// PruneAudit deletes the records older than before and returns how
	// many went; one whose At the store cannot read stays, as an
	// execution does from PruneExecutions.
	PruneAudit(ctx context.Context, before time.Time) (int, error)

	Close() error
}

// Journaler is an optional capability of a Store: a way to make log
// entries survive a crash of this process that is much cheaper than a
// commit (an append to a file beside the database), so that a call with a
// side effect can be logged before it is made without a commit per call.
// Journaled entries are not visible: the caller still writes them with
// WriteEntries. RecoverExecution applies what a dead process journaled.
// Methods must be safe for concurrent use; one execution is journaled by
// one caller at a time.
type Journaler interface {
	// Journal records entries of execution id as they now are (in order;
	// a later record of a seq supersedes an earlier one). An entry waiting
	// for its downstream task, or carrying a task id, is refused: a task
	// id is committed (WriteEntries), since recovery applies a journal
	// only over entries still executing. Once it returns
	// they survive a crash of this process, and whatever else the store's
	// commits survive (a power loss, where the store promises that). The first call after
	// DropJournal (or ever) for id starts an empty journal.
	Journal(ctx context.Context, id string, entries []Entry) error
	// DropJournal removes id's journal once everything in it is written
	// (WriteEntries); without a journal it does nothing.
	DropJournal(ctx context.Context, id string) error
}
