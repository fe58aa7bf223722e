package notes

import (
	"context"
	"encoding/json"
	"fmt"
)

// Revertible reports whether calls of tool can be undone: only createNote.
// deleteNote is not (the note is gone; it is why deleting needs approval).
func (n *Notes) Revertible(tool string) bool { return tool == ToolCreate }

// Revert undoes an applied createNote by deleting the note whose id is in
// result (the note createNote returned). A note that is already gone is not
// an error, so a rollback can be retried.
func (n *Notes) Revert(ctx context.Context, tool string, args, result json.RawMessage) error {
	if !n.Revertible(tool) {
		return fmt.Errorf("notes: %s cannot be reverted", tool)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(result, &created); err != nil {
		return fmt.Errorf("notes: revert %s: result is not a note: %w", tool, err)
	}
	if created.ID == "" {
		return fmt.Errorf("notes: revert %s: result has no note id", tool)
	}
	if _, err := n.delete(ctx, created.ID); err != nil {
		return fmt.Errorf("notes: revert %s: %w", tool, err)
	}
	return nil
}
