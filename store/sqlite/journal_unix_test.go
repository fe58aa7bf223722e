//go:build unix

package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// A pipe where a run's journal would be is refused, naming it, not read:
// reading it would block recovery until someone writes to it.
func TestJournalPipeIsRefused(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "codemode.db"), Options{})
	run := storetest.NewExecution("exec_p", codemode.StatusRunning)
	run.Owner = "own_dead"
	if err := s.CreateExecution(ctx, run); err != nil {
		t.Fatal(err)
	}
	pipe := s.journals.path("exec_p")
	if err := os.MkdirAll(filepath.Dir(pipe), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.RecoverExecution(ctx, &codemode.Execution{ID: "exec_p", Status: codemode.StatusError}, codemode.StatusRunning, "own_dead", "unknown")
	if err == nil || !strings.Contains(err.Error(), pipe+" is not a regular file (p") {
		t.Errorf("recovery with a pipe for a journal: %v, want it refused naming %s", err, pipe)
	}
}
