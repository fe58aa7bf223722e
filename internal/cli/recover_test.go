package cli_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/internal/procid"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// A run whose server died on this machine is recovered by the first
// command that opens the database, and the command line shows it as it
// is: ended error, interrupted, its call in flight unknown; it cannot be
// approved, and its rollback reports that call apart.
func TestInterruptedRunOnTheCommandLine(t *testing.T) {
	ctx := context.Background()
	cfg := notesConfig(t)
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	self := procid.Self()
	now := time.Now().UTC()
	dead := codemode.Owner{ID: "own_dead", Host: self.Host, Boot: self.Boot, PID: gone.Process.Pid, StartedAt: now, Heartbeat: now, Lease: time.Minute}
	if err := st.RegisterOwner(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateExecution(ctx, &codemode.Execution{ID: "exec_cut", Code: "async () => {}", Status: codemode.StatusRunning, Owner: dead.ID}); err != nil {
		t.Fatal(err)
	}
	log := []codemode.Entry{
		{ExecutionID: "exec_cut", Seq: 1, Kind: codemode.KindCall, Connector: "notes", Method: "listNotes", Args: json.RawMessage(`{}`), Result: json.RawMessage(`{"notes":[]}`), State: codemode.EntryApplied},
		{ExecutionID: "exec_cut", Seq: 2, Kind: codemode.KindCall, Connector: "notes", Method: "createNote", Args: json.RawMessage(`{"text":"in flight"}`), State: codemode.EntryExecuting},
	}
	if err := st.WriteEntries(ctx, log, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errs := run(t, "", "executions", "--config", cfg, "--db", db)
	if code != cli.ExitOK || !strings.Contains(out, "exec_cut") {
		t.Fatalf("executions: %d\n%s%s", code, out, errs)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "exec_cut") && (!strings.Contains(line, " error ") || !strings.Contains(line, "interrupted")) {
			t.Errorf("executions lists the run as %q; want error, interrupted", line)
		}
	}
	code, out, errs = run(t, "", "executions", "show", "exec_cut", "--config", cfg, "--db", db)
	var shown struct {
		Status, Error string
		Calls         []struct {
			Seq          int
			State, Error string
		}
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != cli.ExitOK {
		t.Fatalf("executions show: %d %v\n%s%s", code, err, out, errs)
	}
	if shown.Status != "error" || !strings.Contains(shown.Error, "interrupted") || !strings.Contains(shown.Error, "is gone") {
		t.Errorf("shown: %s %q; want error, interrupted, its process gone", shown.Status, shown.Error)
	}
	if len(shown.Calls) != 2 || shown.Calls[0].State != "applied" || shown.Calls[1].State != "unknown" ||
		!strings.Contains(shown.Calls[1].Error, "may or may not have taken effect") {
		t.Errorf("calls shown: %+v; want 1 applied, 2 unknown saying it may or may not have taken effect", shown.Calls)
	}
	if code, out, _ := run(t, "", "approvals", "approve", "exec_cut", "--config", cfg, "--db", db); code != cli.ExitFailure || !strings.Contains(out, "only a paused execution can be approved") {
		t.Errorf("approve an interrupted run: %d\n%s", code, out)
	}
	code, out, errs = run(t, "", "approvals", "rollback", "exec_cut", "--config", cfg, "--db", db)
	var rb codemode.Outcome
	if err := json.Unmarshal([]byte(out), &rb); err != nil || code != cli.ExitOK {
		t.Fatalf("rollback: %d %v\n%s%s", code, err, out, errs)
	}
	t.Logf("rollback: %s", out)
	if rb.Status != codemode.StatusRolledBack || len(rb.Reverted) != 0 || len(rb.Failures) != 1 || rb.Failures[0].Seq != 2 ||
		!strings.Contains(rb.Failures[0].Error, "its outcome is unknown") {
		t.Errorf("rollback outcome: %+v; want rolled_back, call 2's revert failed saying its outcome was unknown", rb)
	}
}
