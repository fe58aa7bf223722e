package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// The audit's id is the database's (an autoincrement, an identity), so an
// insert names every column but it.
const auditInsertColumns = `at, subject, name, email, action, execution_id, seq, target, outcome, source`

var auditSQL = `INSERT INTO audit (` + auditInsertColumns + `) VALUES ` + values(auditInsertColumns)

// Audit appends a record (codemode.Store).
func (s *Store) Audit(ctx context.Context, r codemode.AuditRecord) error {
	if r.Action == "" || r.Person.Subject == "" {
		return fmt.Errorf("audit: a record needs an action and a person (got %q by %q)", r.Action, r.Person.Subject)
	}
	_, err := s.db.Exec(ctx, auditSQL, nanos(stamp(r.At)), r.Person.Subject, r.Person.Name, r.Person.Email, string(r.Action), r.ExecutionID, r.Seq, r.Target, r.Outcome, r.Source)
	if err != nil {
		return fmt.Errorf("audit %s of %s: %w", r.Action, r.ExecutionID, err)
	}
	return nil
}

// AuditRecords returns the records q selects, oldest first
// (codemode.Store), but those it cannot read (leftOut), which count in
// q.Limit.
func (s *Store) AuditRecords(ctx context.Context, q codemode.AuditQuery) ([]codemode.AuditRecord, error) {
	query, args := `SELECT id, `+auditInsertColumns+` FROM audit WHERE true`, []any(nil)
	if !q.Since.IsZero() {
		query += ` AND at >= ` + bind(&args, nanos(q.Since))
	}
	if q.ExecutionID != "" {
		query += ` AND execution_id = ` + bind(&args, q.ExecutionID)
	}
	query += ` ORDER BY at, id`
	if q.Limit > 0 {
		query += ` LIMIT ` + bind(&args, q.Limit)
	}
	return collect(ctx, s, "read the audit", query, args, scanAudit)
}

// PruneAudit deletes the records older than before (codemode.Store), but
// those whose time cannot be read (timed).
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	n, err := s.db.Exec(ctx, `DELETE FROM audit WHERE at < $1 AND `+timed("at"), nanos(before))
	if err != nil {
		return 0, fmt.Errorf("prune the audit: %w", err)
	}
	return int(n), nil
}

// scanAudit reads id, then auditInsertColumns; a record whose time or seq
// cannot be decoded is unreadable.
func scanAudit(row Row) (codemode.AuditRecord, error) {
	var (
		r       codemode.AuditRecord
		at, seq any // (intOf)
		action  string
	)
	if err := row.Scan(&r.ID, &at, &r.Person.Subject, &r.Person.Name, &r.Person.Email, &action, &r.ExecutionID, &seq, &r.Target, &r.Outcome, &r.Source); err != nil {
		return r, err
	}
	n, serr := intOf(seq, "seq")
	var aerr error
	r.At, aerr = nanosOf(at, "at")
	r.Seq, r.Action = int(n), codemode.AuditAction(action)
	if err := errors.Join(aerr, serr); err != nil {
		return r, unreadable(fmt.Sprintf("audit record #%d", r.ID), err)
	}
	return r, nil
}
