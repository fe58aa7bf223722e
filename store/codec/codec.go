// Package codec is how the SQL stores (sqlite, postgres) lay the
// domain types out in rows, so that both read and write the same thing:
// the column lists, timestamps as Unix nanoseconds, JSON as text (NULL
// when empty), states and statuses as their String form, and the checks
// that refuse a value that could not be read back. It knows no driver:
// rows are scanned through Scanner, which *sql.Row, *sql.Rows, pgx.Row
// and pgx.Rows all are.
package codec

import (
	"encoding/json"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// Column lists, in the order the Values and Scan functions use.
const (
	ExecutionColumns = `id, code, status, result, error, logs, connectors, clock, owner, task, trace, started_by, started_by_name, started_by_email, created_at, updated_at`
	// EntryColumns are EntryInsertColumns, then DecidedColumns.
	EntryColumns = EntryInsertColumns + `, ` + DecidedColumns
	// EntryInsertColumns are what an entry nobody decided is inserted
	// with (EntryValues); DecidedColumns who decided it and when
	// (DecidedValues), written only for an entry that names a decider, so
	// that the write of every call binds no more than it did before
	// people were recorded.
	EntryInsertColumns = `execution_id, seq, kind, connector, method, name, args, result, error, state, reverts, task, created_at, updated_at`
	DecidedColumns     = `decided_by, decided_by_name, decided_by_email, decided_at`
	AuditColumns       = `id, at, subject, name, email, action, execution_id, seq, target, outcome, source`
	SnippetColumns     = `name, description, code, input_schema, connectors, from_execution, created_at`
	OwnerColumns       = `id, host, pid, boot, process_start, started_at, heartbeat_at, lease`
)

// Nanos is t as stored: Unix nanoseconds.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// FromNanos is the inverse of Nanos, in UTC.
func FromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// Now is the store's clock, as a column keeps it. A store only uses it
// for a timestamp its caller left zero: the runtime stamps what it writes
// with its own (injectable) clock.
func Now() time.Time { return time.Now().Round(0).UTC() }

// Stamp returns t, or Now when t is zero, as a column keeps it.
func Stamp(t time.Time) time.Time {
	if t.IsZero() {
		return Now()
	}
	return FromNanos(Nanos(t))
}

// RawText binds raw JSON as text, or NULL when empty.
func RawText(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// JSONText marshals v to text, or NULL when empty reports true.
func JSONText(v any, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// JSONDecode unmarshals a nullable JSON column into v; NULL leaves v alone.
func JSONDecode(b []byte, v any, column string) error {
	if b == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode column %s: %w", column, err)
	}
	return nil
}

// CheckStatus refuses a status that could not be read back.
func CheckStatus(s codemode.ExecStatus) error {
	if _, err := codemode.ParseExecStatus(s.String()); err != nil {
		return fmt.Errorf("invalid execution status %d", int(s))
	}
	return nil
}

// CheckInsert refuses an entry that could not be read back.
func CheckInsert(e codemode.Entry) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	switch e.Kind {
	case codemode.KindCall, codemode.KindStep, codemode.KindService:
	default:
		return fmt.Errorf("insert log entry %s#%d: invalid kind %d", e.ExecutionID, e.Seq, int(e.Kind))
	}
	return nil
}

// CheckUpdate refuses a new state that could not be read back.
func CheckUpdate(e codemode.Entry) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return nil
}

func checkState(s codemode.EntryState) error {
	if _, err := codemode.ParseEntryState(s.String()); err != nil {
		return fmt.Errorf("invalid log entry state %d", int(s))
	}
	return nil
}

// ExecutionValues returns e's status, result, error, logs, connectors,
// clock and owner as bound values (ExecutionColumns without id, code and
// the timestamps), after checking the status.
func ExecutionValues(e *codemode.Execution) ([]any, error) {
	if err := CheckStatus(e.Status); err != nil {
		return nil, err
	}
	logs, err := JSONText(e.Logs, len(e.Logs) == 0)
	if err != nil {
		return nil, fmt.Errorf("encode logs: %w", err)
	}
	conns, err := JSONText(e.Connectors, len(e.Connectors) == 0)
	if err != nil {
		return nil, fmt.Errorf("encode connectors: %w", err)
	}
	clock, err := JSONText(e.Clock, false)
	if err != nil {
		return nil, fmt.Errorf("encode clock: %w", err)
	}
	return []any{e.Status.String(), RawText(e.Result), e.Error, logs, conns, clock, e.Owner}, nil
}

// CreateValues binds what ExecutionColumns has beyond ExecutionValues
// and written once, when the run is created: its Task as JSON text (NULL
// for a run that is not a task), its Trace and its StartedBy (subject,
// name, email).
func CreateValues(e *codemode.Execution) ([]any, error) {
	var task any
	if e.Task != nil {
		var err error
		if task, err = JSONText(e.Task, false); err != nil {
			return nil, fmt.Errorf("encode task: %w", err)
		}
	}
	return []any{task, e.Trace, e.StartedBy.Subject, e.StartedBy.Name, e.StartedBy.Email}, nil
}

// DecidedValues binds who decided e and when, as DecidedColumns.
func DecidedValues(e codemode.Entry) []any {
	at := int64(0)
	if !e.DecidedAt.IsZero() {
		at = Nanos(e.DecidedAt)
	}
	return []any{e.DecidedBy.Subject, e.DecidedBy.Name, e.DecidedBy.Email, at}
}

// EntryValues returns e as the bound values of EntryInsertColumns; t stands in
// for a zero UpdatedAt, and UpdatedAt for a zero CreatedAt.
func EntryValues(e codemode.Entry, t time.Time) []any {
	if !e.UpdatedAt.IsZero() {
		t = e.UpdatedAt
	}
	created := t
	if !e.CreatedAt.IsZero() {
		created = e.CreatedAt
	}
	return []any{e.ExecutionID, e.Seq, e.Kind.String(), e.Connector, e.Method, e.Name,
		RawText(e.Args), RawText(e.Result), e.Error, e.State.String(), e.Reverts, e.Task, Nanos(created), Nanos(t)}
}

// UpdatedAt is the time an update of e stores: e.UpdatedAt, or t when
// that is zero.
func UpdatedAt(e codemode.Entry, t time.Time) time.Time {
	if !e.UpdatedAt.IsZero() {
		return e.UpdatedAt
	}
	return t
}

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// ScanExecution reads ExecutionColumns.
func ScanExecution(sc Scanner) (*codemode.Execution, error) {
	var (
		e                          codemode.Execution
		status                     string
		result, logs, conns, clock []byte
		task                       []byte
		created, updated           int64
	)
	if err := sc.Scan(&e.ID, &e.Code, &status, &result, &e.Error, &logs, &conns, &clock, &e.Owner, &task, &e.Trace,
		&e.StartedBy.Subject, &e.StartedBy.Name, &e.StartedBy.Email, &created, &updated); err != nil {
		return nil, err
	}
	if err := e.Status.UnmarshalText([]byte(status)); err != nil {
		return nil, fmt.Errorf("execution %s: %w", e.ID, err)
	}
	e.Result = json.RawMessage(result)
	if err := JSONDecode(logs, &e.Logs, "logs"); err != nil {
		return nil, fmt.Errorf("execution %s: %w", e.ID, err)
	}
	if err := JSONDecode(conns, &e.Connectors, "connectors"); err != nil {
		return nil, fmt.Errorf("execution %s: %w", e.ID, err)
	}
	if err := JSONDecode(clock, &e.Clock, "clock"); err != nil {
		return nil, fmt.Errorf("execution %s: %w", e.ID, err)
	}
	if task != nil {
		e.Task = &codemode.Task{}
		if err := JSONDecode(task, e.Task, "task"); err != nil {
			return nil, fmt.Errorf("execution %s: %w", e.ID, err)
		}
	}
	e.CreatedAt, e.UpdatedAt = FromNanos(created), FromNanos(updated)
	return &e, nil
}

// ScanEntry reads EntryColumns.
func ScanEntry(sc Scanner) (codemode.Entry, error) { return scanEntry(sc) }

// scanEntry reads EntryColumns, then into more.
func scanEntry(sc Scanner, more ...any) (codemode.Entry, error) {
	var (
		e                codemode.Entry
		kind, state      string
		args, result     []byte
		decided          int64
		created, updated int64
	)
	err := sc.Scan(append([]any{&e.ExecutionID, &e.Seq, &kind, &e.Connector, &e.Method, &e.Name,
		&args, &result, &e.Error, &state, &e.Reverts, &e.Task, &created, &updated,
		&e.DecidedBy.Subject, &e.DecidedBy.Name, &e.DecidedBy.Email, &decided}, more...)...)
	if err != nil {
		return e, err
	}
	if err := e.Kind.UnmarshalText([]byte(kind)); err != nil {
		return e, fmt.Errorf("log entry #%d: %w", e.Seq, err)
	}
	if err := e.State.UnmarshalText([]byte(state)); err != nil {
		return e, fmt.Errorf("log entry #%d: %w", e.Seq, err)
	}
	e.Args, e.Result = json.RawMessage(args), json.RawMessage(result)
	if decided != 0 {
		e.DecidedAt = FromNanos(decided)
	}
	e.CreatedAt, e.UpdatedAt = FromNanos(created), FromNanos(updated)
	return e, nil
}

// ScanClippedEntry reads EntryColumns, then the lengths in bytes of args,
// result and error.
func ScanClippedEntry(sc Scanner) (codemode.ClippedEntry, error) {
	var c codemode.ClippedEntry
	e, err := scanEntry(sc, &c.Sizes.Args, &c.Sizes.Result, &c.Sizes.Error)
	c.Entry = e
	return c, err
}

// SnippetValues returns sn as the bound values of SnippetColumns; a zero
// CreatedAt is stamped now.
func SnippetValues(sn codemode.Snippet) ([]any, error) {
	conns, err := JSONText(sn.Connectors, len(sn.Connectors) == 0)
	if err != nil {
		return nil, fmt.Errorf("encode connectors: %w", err)
	}
	return []any{sn.Name, sn.Description, sn.Code, RawText(sn.InputSchema), conns, sn.FromExecution, Nanos(Stamp(sn.CreatedAt))}, nil
}

// ScanSnippet reads SnippetColumns.
func ScanSnippet(sc Scanner) (codemode.Snippet, error) {
	var (
		sn            codemode.Snippet
		schema, conns []byte
		created       int64
	)
	if err := sc.Scan(&sn.Name, &sn.Description, &sn.Code, &schema, &conns, &sn.FromExecution, &created); err != nil {
		return sn, err
	}
	sn.InputSchema = json.RawMessage(schema)
	if err := JSONDecode(conns, &sn.Connectors, "connectors"); err != nil {
		return sn, fmt.Errorf("snippet %s: %w", sn.Name, err)
	}
	sn.CreatedAt = FromNanos(created)
	return sn, nil
}

// OwnerValues returns o as the bound values of OwnerColumns; zero
// StartedAt and Heartbeat are stamped now.
func OwnerValues(o codemode.Owner) []any {
	started := Stamp(o.StartedAt)
	beat := o.Heartbeat
	if beat.IsZero() {
		beat = started
	}
	return []any{o.ID, o.Host, o.PID, o.Boot, o.ProcessStart, Nanos(started), Nanos(beat), int64(o.Lease)}
}

// ScanOwner reads OwnerColumns.
func ScanOwner(sc Scanner) (codemode.Owner, error) {
	var (
		o                    codemode.Owner
		started, beat, lease int64
	)
	if err := sc.Scan(&o.ID, &o.Host, &o.PID, &o.Boot, &o.ProcessStart, &started, &beat, &lease); err != nil {
		return o, err
	}
	o.StartedAt, o.Heartbeat, o.Lease = FromNanos(started), FromNanos(beat), time.Duration(lease)
	return o, nil
}

// AuditValues returns r as the bound values of AuditColumns without id;
// a zero At is stamped now.
func AuditValues(r codemode.AuditRecord) []any {
	return []any{Nanos(Stamp(r.At)), r.Person.Subject, r.Person.Name, r.Person.Email, string(r.Action), r.ExecutionID, r.Seq, r.Target, r.Outcome, r.Source}
}

// ScanAudit reads AuditColumns.
func ScanAudit(sc Scanner) (codemode.AuditRecord, error) {
	var (
		r      codemode.AuditRecord
		at     int64
		action string
	)
	if err := sc.Scan(&r.ID, &at, &r.Person.Subject, &r.Person.Name, &r.Person.Email, &action, &r.ExecutionID, &r.Seq, &r.Target, &r.Outcome, &r.Source); err != nil {
		return r, err
	}
	r.At, r.Action = FromNanos(at), codemode.AuditAction(action)
	return r, nil
}
