package sqlite

import (
	"context"
	"fmt"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// RecoverExecution is sqlstore's, applying first, in the same IMMEDIATE
// transaction, the entries the execution's journal holds (journal.go);
// the journal is removed once that is committed.
func (s *Store) RecoverExecution(ctx context.Context, e *codemode.Execution, from codemode.ExecStatus, owner, note string) error {
	journaled, err := s.journals.read(e.ID)
	if err != nil {
		return fmt.Errorf("recover execution %s: %w", e.ID, err)
	}
	if err := s.Recover(ctx, e, from, owner, note, journaled); err != nil {
		return err
	}
	if err := s.journals.drop(e.ID); err != nil {
		s.logger.WarnContext(ctx, "recovered execution's journal not removed", "execution", e.ID, "err", err)
	}
	return nil
}

// PruneExecutions is sqlstore's, then gives some of the space of deleted
// runs back to the file system (reclaim.go).
func (s *Store) PruneExecutions(ctx context.Context, keep int) (int, error) {
	n, err := s.Store.PruneExecutions(ctx, keep)
	if err == nil {
		s.reclaim(ctx)
	}
	return n, err
}
