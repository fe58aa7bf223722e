package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/codemode-mcp/codemode-mcp/runtime"
)

const entryColumns = `execution_id, seq, kind, connector, method, name, args, result, error, state, created_at, updated_at`

// Entries returns an execution's log in seq order; ErrNotFound if the
// execution does not exist (an existing execution with no calls yet has an
// empty log).
func (s *Store) Entries(ctx context.Context, executionID string) ([]runtime.Entry, error) {
	rows, err := s.stmts.entries.QueryContext(ctx, executionID)
	if err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	defer rows.Close()
	var out []runtime.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
	}
	if len(out) == 0 {
		var one int
		err := s.stmts.executionExists.QueryRowContext(ctx, executionID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("log of execution %s: %w", executionID, runtime.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("log of execution %s: %w", executionID, err)
		}
	}
	return out, nil
}

// InsertEntry adds a new entry; ErrConflict if (execution, seq) exists,
// ErrNotFound if the execution does not. A zero CreatedAt is set to now;
// UpdatedAt is set to now.
func (s *Store) InsertEntry(ctx context.Context, e runtime.Entry) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	if e.Kind != runtime.KindCall && e.Kind != runtime.KindStep {
		return fmt.Errorf("insert log entry %s#%d: invalid kind %d", e.ExecutionID, e.Seq, int(e.Kind))
	}
	t := now()
	created := t
	if !e.CreatedAt.IsZero() {
		created = e.CreatedAt
	}
	_, err := s.stmts.insertEntry.ExecContext(ctx,
		e.ExecutionID, e.Seq, e.Kind.String(), e.Connector, e.Method, e.Name,
		rawText(e.Args), rawText(e.Result), e.Error, e.State.String(), toNanos(created), toNanos(t))
	switch {
	case isPrimaryKeyViolation(err):
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, runtime.ErrConflict)
	case isForeignKeyViolation(err):
		return fmt.Errorf("insert log entry %s#%d: execution: %w", e.ExecutionID, e.Seq, runtime.ErrNotFound)
	case err != nil:
		return fmt.Errorf("insert log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return nil
}

// UpdateEntry stores e's state, result and error if the stored state is
// still from, else ErrConflict (ErrNotFound if absent). Whether the move is
// legal is the runtime's business (runtime.Transition).
func (s *Store) UpdateEntry(ctx context.Context, e runtime.Entry, from runtime.EntryState) error {
	if err := checkState(e.State); err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	res, err := s.stmts.updateEntry.ExecContext(ctx,
		e.State.String(), rawText(e.Result), e.Error, toNanos(now()), e.ExecutionID, e.Seq, from.String())
	if err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	if n > 0 {
		return nil
	}
	var cur string
	err = s.stmts.entryState.QueryRowContext(ctx, e.ExecutionID, e.Seq).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, runtime.ErrNotFound)
	case err != nil:
		return fmt.Errorf("update log entry %s#%d: %w", e.ExecutionID, e.Seq, err)
	}
	return fmt.Errorf("update log entry %s#%d: state is %s, not %s: %w", e.ExecutionID, e.Seq, cur, from, runtime.ErrConflict)
}

func scanEntry(sc scanner) (runtime.Entry, error) {
	var (
		e                runtime.Entry
		kind, state      string
		args, result     []byte
		created, updated int64
	)
	err := sc.Scan(&e.ExecutionID, &e.Seq, &kind, &e.Connector, &e.Method, &e.Name,
		&args, &result, &e.Error, &state, &created, &updated)
	if err != nil {
		return e, err
	}
	if err := e.Kind.UnmarshalText([]byte(kind)); err != nil {
		return e, fmt.Errorf("log entry #%d: %w", e.Seq, err)
	}
	if err := e.State.UnmarshalText([]byte(state)); err != nil {
		return e, fmt.Errorf("log entry #%d: %w", e.Seq, err)
	}
	e.Args, e.Result = rawValue(args), rawValue(result)
	e.CreatedAt, e.UpdatedAt = fromNanos(created), fromNanos(updated)
	return e, nil
}
