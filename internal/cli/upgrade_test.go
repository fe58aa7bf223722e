package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// A database written by the release before owners and recovery (kept in
// store/sqlite/testdata, see its README) is migrated in place by the
// first command that opens it: the run that release left running forever
// is recovered, and its paused runs are approved as before.
func TestUpgradeFromSchema1(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "store", "sqlite", "testdata", "schema1.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Its paused runs paused long ago: an approval of a run older than
	// store.paused_ttl is refused, so the TTL is set past their age.
	cfg := filepath.Join(t.TempDir(), "codemode.yaml")
	if err := os.WriteFile(cfg, []byte("store:\n  paused_ttl: 87600h\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errs := run(t, "", "executions", "--status", "running", "--config", cfg, "--db", db)
	if code != cli.ExitOK || strings.Contains(out, "exec_") {
		t.Fatalf("running runs after opening the old file: %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "", "executions", "show", "exec_753e1e9ce80acf53", "--config", cfg, "--db", db)
	var stuck struct{ Status, Error string }
	if err := json.Unmarshal([]byte(out), &stuck); err != nil || code != cli.ExitOK {
		t.Fatalf("show the run left running: %d %v\n%s%s", code, err, out, errs)
	}
	if stuck.Status != "error" || !strings.Contains(stuck.Error, "interrupted") || !strings.Contains(stuck.Error, "older release") {
		t.Errorf("the run left running is %s %q; want error, interrupted", stuck.Status, stuck.Error)
	}

	type outcome struct {
		Status string
		Result json.RawMessage
		Error  string
	}
	approve := func(id string) outcome {
		t.Helper()
		code, out, errs := run(t, "", "approvals", "approve", id, "--config", cfg, "--db", db)
		var o outcome
		if err := json.Unmarshal([]byte(out), &o); err != nil || code != cli.ExitOK {
			t.Fatalf("approve %s: %d %v\n%s%s", id, code, err, out, errs)
		}
		return o
	}
	if o := approve("exec_74b95732f8214339"); o.Status != "completed" {
		t.Errorf("approve the paused createNote: %+v", o)
	}
	// This one replays a step and a read from the old log, then creates.
	if o := approve("exec_f14209baebadf717"); o.Status != "completed" || string(o.Result) != "7" {
		t.Errorf("approve the paused run after a step: %+v, want completed with 7", o)
	}
	code, out, errs = run(t, "", "run", "--code", `async () => (await notes.listNotes({})).notes.map(n => n.text).sort()`, "--config", cfg, "--db", db)
	var notes outcome
	if err := json.Unmarshal([]byte(out), &notes); err != nil || code != cli.ExitOK {
		t.Fatalf("list notes: %d %v\n%s%s", code, err, out, errs)
	}
	var texts []string
	if err := json.Unmarshal(notes.Result, &texts); err != nil || strings.Join(texts, "|") != "second 7 0|written by schema 1" {
		t.Errorf("notes = %s, %v; want the two approved notes, each once", notes.Result, err)
	}
	// A second approve is refused, as before.
	if code, _, _ := run(t, "", "approvals", "approve", "exec_74b95732f8214339", "--config", cfg, "--db", db); code != cli.ExitFailure {
		t.Errorf("second approve: exit %d, want %d", code, cli.ExitFailure)
	}
}
