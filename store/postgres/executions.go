package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	codemode "github.com/codemode-mcp/codemode-mcp"
	sc "github.com/codemode-mcp/codemode-mcp/store/codec"
)

// CreateExecution inserts e; ErrConflict if the id exists. A zero
// CreatedAt is set to now; UpdatedAt is set to CreatedAt. Both are written
// back to e.
func (s *Store) CreateExecution(ctx context.Context, e *codemode.Execution) error {
	if e.ID == "" {
		return errors.New("create execution: empty id")
	}
	vals, err := sc.ExecutionValues(e)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	once, err := sc.CreateValues(e)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	created := sc.Stamp(e.CreatedAt)
	args := append([]any{e.ID, e.Code}, vals...)
	args = append(append(args, once...), sc.Nanos(created), sc.Nanos(created))
	_, err = s.pool.Exec(ctx, `INSERT INTO executions (`+sc.ExecutionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, args...)
	if isUniqueViolation(err) {
		return fmt.Errorf("create execution %s: %w", e.ID, codemode.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	e.CreatedAt, e.UpdatedAt = created, created
	return nil
}

// GetExecution returns ErrNotFound for an unknown id.
func (s *Store) GetExecution(ctx context.Context, id string) (*codemode.Execution, error) {
	e, err := sc.ScanExecution(s.pool.QueryRow(ctx, `SELECT `+sc.ExecutionColumns+` FROM executions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("execution %s: %w", id, codemode.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get execution %s: %w", id, err)
	}
	return e, nil
}

// UpdateExecution stores e's status, result, error, logs, connectors,
// clock, owner and UpdatedAt (zero: now, written back) if the stored
// status is still from, else ErrConflict (ErrNotFound if there is no such
// execution). Of two replicas updating from the same status at once, the
// second's UPDATE waits for the first and then matches no row.
func (s *Store) UpdateExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus) error {
	vals, err := sc.ExecutionValues(e)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	t := sc.Stamp(e.UpdatedAt)
	tag, err := s.pool.Exec(ctx, `UPDATE executions SET status = $1, result = $2, error = $3, logs = $4, connectors = $5, clock = $6, owner = $7, updated_at = $8
		WHERE id = $9 AND status = $10`, append(vals, sc.Nanos(t), e.ID, from.String())...)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	if tag.RowsAffected() == 0 {
		var cur string
		err := s.pool.QueryRow(ctx, `SELECT status FROM executions WHERE id = $1`, e.ID).Scan(&cur)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("update execution %s: %w", e.ID, codemode.ErrNotFound)
		case err != nil:
			return fmt.Errorf("update execution %s: %w", e.ID, err)
		}
		return fmt.Errorf("update execution %s: status is %s, not %s: %w", e.ID, cur, from, codemode.ErrConflict)
	}
	e.UpdatedAt = t
	return nil
}

// ListExecutions returns executions newest first (by CreatedAt, then by
// insertion order).
func (s *Store) ListExecutions(ctx context.Context, f codemode.ExecutionFilter) ([]*codemode.Execution, error) {
	q := `SELECT ` + sc.ExecutionColumns + ` FROM executions WHERE true`
	var args []any
	if f.Tasks {
		q += ` AND task IS NOT NULL`
	}
	if f.Status != 0 {
		if err := sc.CheckStatus(f.Status); err != nil {
			return nil, fmt.Errorf("list executions: %w", err)
		}
		args = append(args, f.Status.String())
		q += ` AND status = $1`
	}
	q += ` ORDER BY created_at DESC, ord DESC`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	defer rows.Close()
	out, err := sc.Collect(rows, sc.ScanExecution)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	return out, nil
}

// DeleteExecution removes an execution and (by cascade) its log;
// ErrNotFound if absent.
func (s *Store) DeleteExecution(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM executions WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete execution %s: %w", id, err)
	}
	return oneRow(tag, "delete execution "+id)
}

// PruneExecutions deletes the oldest terminal executions beyond the keep
// newest terminal ones, with their logs; running and paused executions are
// never deleted. Replicas pruning at once are safe: each DELETE selects
// its victims itself, and a row another already deleted is skipped.
func (s *Store) PruneExecutions(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune executions: keep is %d, want >= 0", keep)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM executions WHERE id IN (
		SELECT id FROM executions WHERE status = ANY($1)
		ORDER BY created_at DESC, ord DESC OFFSET $2)`, terminal, keep)
	if err != nil {
		return 0, fmt.Errorf("prune executions: %w", err)
	}
	n := int(tag.RowsAffected())
	if n > 0 {
		s.logger.DebugContext(ctx, "pruned executions", "deleted", n, "kept", keep)
	}
	return n, nil
}

// terminal lists the terminal statuses' text.
var terminal = func() []string {
	var out []string
	for _, v := range sc.TerminalStatuses() {
		out = append(out, v.(string))
	}
	return out
}()
