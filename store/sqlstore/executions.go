package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// executionColumns in the order of createExecutionSQL's values and of
// scanExecution.
const executionColumns = `id, code, status, result, error, logs, connectors, clock, owner, task, trace, started_by, started_by_name, started_by_email, created_at, updated_at`

// briefColumns are executionColumns as a brief list reads them
// (codemode.ExecutionFilter.Brief): the code, values, logs, connectors,
// clock and task empty.
const briefColumns = `id, '', status, NULL, '', NULL, NULL, NULL, owner, NULL, trace, started_by, started_by_name, started_by_email, created_at, updated_at`

// noOutputColumns are executionColumns without the result and logs
// (codemode.ExecutionFilter.NoOutput).
const noOutputColumns = `id, code, status, NULL, error, NULL, connectors, clock, owner, task, trace, started_by, started_by_name, started_by_email, created_at, updated_at`

var createExecutionSQL = `INSERT INTO executions (` + executionColumns + `) VALUES ` + values(executionColumns)

// CreateExecution inserts e (codemode.Store). Its Code, Task (JSON text,
// NULL for a run that is not a task), Trace, StartedBy and CreatedAt are
// written once, here.
func (s *Store) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	if e.ID == "" {
		return errors.New("create execution: empty id")
	}
	vals, err := executionValues(e)
	var task any
	if err == nil && e.Task != nil {
		task, err = jsonText(e.Task, false, "task")
	}
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	created := stamp(e.CreatedAt)
	args := append(append([]any{e.ID, e.Code}, vals...), task, e.Trace, e.StartedBy.Subject, e.StartedBy.Name, e.StartedBy.Email, nanos(created), nanos(created))
	_, err = s.db.Exec(ctx, createExecutionSQL, args...)
	if err := s.inserted(err, "create execution "+e.ID, codemode.ErrConflict); err != nil {
		return err
	}
	e.CreatedAt, e.UpdatedAt = created, created
	return nil
}

// executionValues binds e's status, result, error, logs, connectors,
// clock and owner, what an update writes, after checking the status.
func executionValues(e *codemode.Execution) ([]any, error) {
	if err := checkStatus(e.Status); err != nil {
		return nil, err
	}
	logs, err := jsonText(e.Logs, len(e.Logs) == 0, "logs")
	if err != nil {
		return nil, err
	}
	conns, err := jsonText(e.Connectors, len(e.Connectors) == 0, "connectors")
	if err != nil {
		return nil, err
	}
	clock, err := jsonText(e.Clock, false, "clock")
	if err != nil {
		return nil, err
	}
	return []any{e.Status.String(), rawText(e.Result), e.Error, logs, conns, clock, e.Owner}, nil
}

// checkStatus refuses a status that could not be read back.
func checkStatus(st codemode.ExecStatus) error {
	if _, err := codemode.ParseExecStatus(st.String()); err != nil {
		return fmt.Errorf("invalid execution status %d", int(st))
	}
	return nil
}

// scanExecution reads executionColumns, then into more. A row read whose
// values cannot be decoded (a status this release does not know, broken
// JSON, a time that is not an integer) is returned with its error
// (unreadable): its ID is set, and its times where they could be read.
func scanExecution(row Row, more ...any) (*codemode.Execution, error) {
	var (
		e                          codemode.Execution
		status                     string
		result, logs, conns, clock []byte
		task                       []byte
		created, updated           any // (nanosOf)
	)
	if err := row.Scan(append([]any{&e.ID, &e.Code, &status, &result, &e.Error, &logs, &conns, &clock, &e.Owner, &task, &e.Trace,
		&e.StartedBy.Subject, &e.StartedBy.Name, &e.StartedBy.Email, &created, &updated}, more...)...); err != nil {
		return nil, err
	}
	e.Result = json.RawMessage(result)
	var cerr, uerr error
	e.CreatedAt, cerr = nanosOf(created, "created_at")
	e.UpdatedAt, uerr = nanosOf(updated, "updated_at")
	err := errors.Join(cerr, uerr)
	if err == nil {
		err = e.Status.UnmarshalText([]byte(status))
	}
	if err == nil {
		err = errors.Join(jsonDecode(logs, &e.Logs, "logs"), jsonDecode(conns, &e.Connectors, "connectors"), jsonDecode(clock, &e.Clock, "clock"))
	}
	if err == nil && task != nil {
		e.Task = &codemode.Task{}
		err = jsonDecode(task, e.Task, "task")
	}
	if err != nil {
		return &e, unreadable("execution "+e.ID, err)
	}
	return &e, nil
}

// GetExecution reads an execution (codemode.Store).
func (s *Store) GetExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	e, err := scanExecution(s.db.QueryRow(ctx, `SELECT `+executionColumns+` FROM executions WHERE id = $1`, id))
	switch {
	case errors.Is(err, codemode.ErrUnreadable):
		return nil, err
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("execution %s: %w", id, codemode.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("get execution %s: %w", id, err)
	}
	return e, nil
}

// UpdateExecution moves an execution if its status is still from and it
// has not changed since (codemode.Store).
func (s *Store) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, since time.Time) error {
	vals, err := executionValues(e)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	t := stamp(e.UpdatedAt)
	n, err := s.db.Exec(ctx, `UPDATE executions SET status = $1, result = $2, error = $3, logs = $4, connectors = $5, clock = $6, owner = $7, updated_at = $8
		WHERE id = $9 AND status = $10 AND updated_at = $11`, append(vals, nanos(t), e.ID, from.String(), nanos(since))...)
	switch {
	case err != nil:
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	case n == 0:
		return s.explain(ctx, "update execution "+e.ID, `SELECT 'status is ' || status || CASE WHEN status = $2 THEN ', changed since it was read' ELSE '' END
			FROM executions WHERE id = $1`, []any{e.ID, from.String()}, from.String()+" as read")
	}
	e.UpdatedAt = t
	return nil
}

// ListExecutions returns executions newest first (codemode.Store). A row
// that cannot be read is logged, naming it, once per Store, and left out, and a limited
// list reads as many rows more after the last it read, so that one bad row
// neither hides the others (recovery lists the runs it recovers) nor
// shortens a page. Those rows more are read after the last row as stored
// (its created_at and Order), not after its key (ExecutionKey), which
// SQLite's created_at of any type, an empty id or the row's deletion by
// another process meanwhile would fail, or make the list repeat rows.
func (s *Store) ListExecutions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	var (
		out            []*codemode.Execution
		after          []any // where the rows more begin
		created, order any   // of the last row read
	)
	for {
		q, args, err := s.listQuery(f, after)
		if err != nil {
			return nil, fmt.Errorf("list executions: %w", err)
		}
		read, skipped := 0, 0
		err = s.db.Query(ctx, q, args, func(r Row) error {
			e, err := scanExecution(r, &created, &order)
			switch {
			case s.leftOut(ctx, err):
				skipped++
			case err != nil:
				return err
			default:
				out = append(out, e)
			}
			read++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list executions: %w", err)
		}
		if f.Limit <= 0 || skipped == 0 || read < f.Limit {
			return out, nil
		}
		f.Limit, after = skipped, []any{created, order}
	}
}

// listQuery is ListExecutions' statement for f, selecting the columns,
// then created_at and the Order column; with after (a row's created_at
// and Order), the rows after that row rather than after f.After. Each
// filter makes its own statement text, so that an unlimited list binds
// no LIMIT (SQLite prepares a statement with a bound LIMIT again on every
// run, its planner reading the value).
func (s *Store) listQuery(f codemode.ExecutionFilter, after []any) (string, []any, error) {
	cols := executionColumns
	switch {
	case f.Brief:
		cols = briefColumns
	case f.NoOutput:
		cols = noOutputColumns
	}
	q, args := `SELECT `+cols+`, created_at, `+s.d.Order+` FROM executions WHERE true`, []any(nil)
	if f.ID != "" {
		q += ` AND id = ` + bind(&args, f.ID)
	}
	if f.Tasks {
		q += ` AND task IS NOT NULL`
	}
	if f.Status != 0 {
		if err := checkStatus(f.Status); err != nil {
			return "", nil, err
		}
		q += ` AND status = ` + bind(&args, f.Status.String())
	}
	if f.StartedBy != "" {
		q += ` AND started_by = ` + bind(&args, f.StartedBy)
	}
	switch {
	case after != nil:
		// (SQLite compares a value of any type as its ORDER BY sorts it.)
		q += ` AND (created_at, ` + s.d.Order + `) < (` + bind(&args, after[0]) + `, ` + bind(&args, after[1]) + `)`
	case f.After != (codemode.ExecutionKey{}):
		if f.After.ID == "" || f.After.CreatedAt.IsZero() {
			return "", nil, fmt.Errorf("after %q created at %v: a key needs both an id and a time", f.After.ID, f.After.CreatedAt)
		}
		// Where the key's execution stands among those created at the same
		// time is its insertion order; gone, it stands before them all.
		t := bind(&args, nanos(f.After.CreatedAt))
		q += ` AND (created_at, ` + s.d.Order + `) < (` + t + `, COALESCE((SELECT ` + s.d.Order +
			` FROM executions WHERE id = ` + bind(&args, f.After.ID) + ` AND created_at = ` + t + `), ` + strconv.FormatInt(math.MaxInt64, 10) + `))`
	}
	q += s.listOrder
	if f.Limit > 0 {
		q += ` LIMIT ` + bind(&args, f.Limit)
	}
	return q, args, nil
}

// DeleteExecution removes an execution and, by cascade, its log
// (codemode.Store).
func (s *Store) DeleteExecution(ctx context.Context, id string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM executions WHERE id = $1`, id)
	return oneRow(n, err, "delete execution "+id)
}

// PruneExecutions deletes the oldest terminal executions beyond the keep
// newest (codemode.Store). It runs on every Execute, and usually finds nothing to do: it first
// counts the terminal runs (a read on the (status, created_at) index, no
// write lock) and only deletes when there are more than keep. The count is
// a shortcut, not a guard: the DELETE selects its victims itself, so a run
// finished by another process in between is merely left for the next call,
// and a row another process already deleted is skipped.
func (s *Store) PruneExecutions(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune executions: keep is %d, want >= 0", keep)
	}
	var terminal int
	if err := s.db.QueryRow(ctx, s.countTerminal).Scan(&terminal); err != nil {
		return 0, fmt.Errorf("prune executions: count terminal: %w", err)
	}
	if terminal <= keep {
		return 0, nil
	}
	n, err := s.db.Exec(ctx, s.pruneTerminal, keep)
	if err != nil {
		return 0, fmt.Errorf("prune executions: %w", err)
	}
	if n > 0 {
		s.logger.DebugContext(ctx, "pruned executions", "deleted", n, "kept", keep)
	}
	return int(n), nil
}

// terminalIn is the SQL list of terminal statuses, e.g. ('completed',
// 'error', 'rejected', 'rolled_back'), written into the statements so
// that the plan sees the list. The names are the runtime's own constants
// (TestTerminalIn pins them: lower case letters and '_', nothing to quote).
var terminalIn = func() string {
	var lits []string
	for _, st := range codemode.ExecStatuses() {
		if st.Terminal() {
			lits = append(lits, "'"+st.String()+"'")
		}
	}
	return "(" + strings.Join(lits, ", ") + ")"
}()

// RecoverExecution ends an execution whose owner is gone
// (codemode.Store): Recover with no entries written ahead.
func (s *Store) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) error {
	return s.Recover(ctx, e, from, owner, note, nil)
}

// Recover is RecoverExecution that first applies entries written ahead of
// the log (SQLite's journal) in the same transaction: an entry the log
// lacks is inserted, an entry it holds executing takes the written-ahead
// state, result and error, and any other is left as it is. So written-ahead
// entries may repeat what was committed and may be applied more than once.
//
// It is one Batch, its first statement the guarded move of the execution:
// of two owners recovering a run at once, the second's finds it moved
// (PostgreSQL makes it wait for the first's row lock and re-read the row)
// and nothing of its batch is written.
func (s *Store) Recover(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string, ahead []codemode.Entry) error {
	if err := checkStatus(e.Status); err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	t := stamp(e.UpdatedAt)
	stmts := []Stmt{{SQL: `UPDATE executions SET status = $1, error = $2, owner = '', updated_at = $3 WHERE id = $4 AND status = $5 AND owner = $6`,
		Args: []any{e.Status.String(), e.Error, nanos(t), e.ID, from.String(), owner}, Guard: true}}
	for _, en := range ahead {
		if err := CheckInsert(en); err != nil {
			return fmt.Errorf("recover execution %s: apply its journal: %w", e.ID, err)
		}
		ins := insertOf(en, t)
		ins.SQL += ` ON CONFLICT (execution_id, seq) DO NOTHING`
		stmts = append(stmts, ins)
		if en.State != codemode.EntryExecuting {
			stmts = append(stmts, updateOf(en, codemode.EntryExecuting, t))
		}
	}
	stmts = append(stmts,
		Stmt{SQL: `UPDATE entries SET state = $1, error = $2, updated_at = $3 WHERE execution_id = $4 AND state IN ($5, $6)`,
			Args: []any{codemode.EntryUnknown.String(), note, nanos(t), e.ID, codemode.EntryExecuting.String(), codemode.EntryWaiting.String()}},
		Stmt{SQL: `UPDATE entries SET state = $1, updated_at = $2 WHERE execution_id = $3 AND state IN ($4, $5)`,
			Args: []any{codemode.EntryRejected.String(), nanos(t), e.ID, codemode.EntryPending.String(), codemode.EntrySignIn.String()}})
	if _, err := s.db.Batch(ctx, stmts); errors.Is(err, ErrNoRow) {
		return s.explain(ctx, "recover execution "+e.ID, `SELECT 'it is ' || status || ' owned by "' || owner || '"' FROM executions WHERE id = $1`,
			[]any{e.ID}, fmt.Sprintf("%s owned by %q", from, owner))
	} else if err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	e.Owner, e.UpdatedAt = "", t
	return nil
}
