package app

import (
	"context"
	"errors"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	"github.com/codemode-mcp/codemode-mcp/internal/oauth"
)

// Copied counts what CopyStore copied, and what the destination had
// already (skipped, so that a copy that stopped half way can be run
// again).
type Copied struct {
	Executions, Entries, Snippets, Records int
	SkippedExecutions, SkippedRecords      int
	// Audit counts the audit records copied; AuditKept is set when the
	// destination had an audit already, which is then left as it is
	// (records have no key that would tell a copied one from another).
	Audit     int
	AuditKept bool
}

// recordKinds are the kinds of records the built-in connectors keep, and
// the OAuth grants and client registrations of url connectors (sealed:
// the destination opens them with the same key, CODEMODE_SECRET_KEY or
// the key file of the data directory, so a copy made on the same machine
// or with the variable set keeps everyone signed in).
var recordKinds = []string{notes.Kind, oauth.KindGrant, oauth.KindClient}

// CopyStore copies every execution with its log, every snippet, the
// records of the built-in connectors and the audit from src to dst, keeping ids and
// timestamps. An execution or record dst already has is skipped (a
// snippet is replaced). A run still running or rolling back is refused:
// its log is still being written (stop the server that runs it first; a
// run whose server died is recovered when src is opened by the
// application).
func CopyStore(ctx context.Context, dst, src Store) (Copied, error) {
	var c Copied
	execs, err := src.ListExecutions(ctx, codemode.ExecutionFilter{})
	if err != nil {
		return c, fmt.Errorf("copy: %w", err)
	}
	for _, e := range execs {
		if e.Status == codemode.StatusRunning || e.Status == codemode.StatusRollingBack {
			return c, fmt.Errorf("copy: execution %s is %s: stop the server that runs it (or let it finish) and copy again", e.ID, e.Status)
		}
	}
	// Oldest first, so that the destination lists them in the same order.
	for i := len(execs) - 1; i >= 0; i-- {
		e := execs[i]
		log, err := src.Entries(ctx, e.ID)
		if err != nil {
			return c, fmt.Errorf("copy execution %s: %w", e.ID, err)
		}
		updated := e.UpdatedAt
		// CreateExecution stamps UpdatedAt with CreatedAt; the update
		// below (from the same status: nothing changes but the time) puts
		// the source's back.
		err = dst.CreateExecution(ctx, e)
		if errors.Is(err, codemode.ErrConflict) {
			c.SkippedExecutions++
			continue
		}
		if err != nil {
			return c, fmt.Errorf("copy: %w", err)
		}
		if err := dst.WriteEntries(ctx, log, nil); err != nil {
			return c, fmt.Errorf("copy execution %s: %w", e.ID, err)
		}
		created := e.UpdatedAt
		e.UpdatedAt = updated
		if err := dst.UpdateExecution(ctx, e, e.Status, created); err != nil {
			return c, fmt.Errorf("copy execution %s: %w", e.ID, err)
		}
		c.Executions++
		c.Entries += len(log)
	}
	snippets, err := src.ListSnippets(ctx)
	if err != nil {
		return c, fmt.Errorf("copy: %w", err)
	}
	for _, sn := range snippets {
		if err := dst.SaveSnippet(ctx, sn); err != nil {
			return c, fmt.Errorf("copy: %w", err)
		}
		c.Snippets++
	}
	for _, kind := range recordKinds {
		var recs []connectors.Record
		if err := src.ScanRecords(ctx, kind, func(r connectors.Record) bool {
			recs = append(recs, r)
			return true
		}); err != nil {
			return c, fmt.Errorf("copy: %w", err)
		}
		for i := len(recs) - 1; i >= 0; i-- { // oldest first, as inserted
			err := dst.PutRecord(ctx, recs[i])
			switch {
			case errors.Is(err, connectors.ErrRecordExists):
				c.SkippedRecords++
			case err != nil:
				return c, fmt.Errorf("copy: %w", err)
			default:
				c.Records++
			}
		}
	}
	return c, copyAudit(ctx, dst, src, &c)
}

// copyAudit copies the audit, oldest first, into a destination whose
// audit is empty.
func copyAudit(ctx context.Context, dst, src Store, c *Copied) error {
	have, err := dst.AuditRecords(ctx, codemode.AuditQuery{Limit: 1})
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if len(have) > 0 {
		c.AuditKept = true
		return nil
	}
	recs, err := src.AuditRecords(ctx, codemode.AuditQuery{})
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	for _, r := range recs {
		if err := dst.Audit(ctx, r); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		c.Audit++
	}
	return nil
}
