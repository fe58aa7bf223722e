package cli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

// A SQLite log moves to PostgreSQL with `store copy`, and the commands
// work on the PostgreSQL store with --db; the URL's password is never
// printed, not even when the database cannot be reached.
func TestStoreCopyToPostgres(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "async () => notes.createNote({ text: 'kept across stores' })")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != 0 || paused.Status != "paused" {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	if code, _, errs := run(t, "", "approvals", "approve", paused.ExecutionID, "--config", cfg); code != 0 {
		t.Fatalf("approve: %d %s", code, errs)
	}
	// The test cluster trusts every local connection: any password is
	// accepted, so the one in the URL shows what is redacted.
	url := strings.Replace(pgtest.NewDatabase(t), "postgres@", "postgres:hunter2@", 1)
	code, out, errs = run(t, "", "store", "copy", "--config", cfg, "--to", url)
	if code != 0 || !strings.Contains(out, "copied 1 executions (1 log entries), 0 snippets, 1 notes and 2 audit records") {
		t.Fatalf("store copy: %d %s %s", code, out, errs)
	}
	if strings.Contains(out+errs, "hunter2") || !strings.Contains(out, "postgres:xxxxx@") {
		t.Errorf("store copy printed the password, or no redacted URL: %s %s", out, errs)
	}
	code, out, errs = run(t, "", "run", "--config", cfg, "--db", url, "--code", "async () => (await notes.listNotes({})).notes.map((n) => n.text)")
	if code != 0 || !strings.Contains(out, "kept across stores") {
		t.Fatalf("run on PostgreSQL: %d %s %s", code, out, errs)
	}
	if code, out, errs = run(t, "", "executions", "--config", cfg, "--db", url); code != 0 || strings.Count(out, "exec_") != 2 || !strings.Contains(out, paused.ExecutionID) {
		t.Errorf("executions on PostgreSQL (the copied run and the new one): %d %s %s", code, out, errs)
	}
	if code, out, _ = run(t, "", "version", "--config", cfg, "--db", url); code != 0 || strings.Contains(out, "hunter2") || !strings.Contains(out, "log:    postgres://postgres:xxxxx@") {
		t.Errorf("version: %d %s", code, out)
	}
	// Copying again, the source named with --from, leaves everything as it is.
	src := strings.TrimSuffix(cfg, "codemode.yaml") + "c.db"
	if code, out, errs = run(t, "", "store", "copy", "--from", src, "--to", url); code != 0 || !strings.Contains(out, "1 executions and 1 notes were there already") || !strings.Contains(out, "audit was not empty") {
		t.Errorf("second copy: %d %s %s", code, out, errs)
	}
	bad := "postgres://someone:hunter2@127.0.0.1:1/nowhere?connect_timeout=2"
	code, out, errs = run(t, "", "store", "copy", "--config", cfg, "--to", bad)
	if code != cli.ExitFailure || strings.Contains(out+errs, "hunter2") || !strings.Contains(errs, "127.0.0.1") {
		t.Errorf("copy to an unreachable database: %d %s %s", code, out, errs)
	}
	for _, args := range [][]string{
		{"store", "copy", "--config", cfg},
		{"store", "move", "--config", cfg, "--to", url},
		{"store", "copy", "--config", cfg, "--to", strings.TrimSuffix(cfg, "codemode.yaml") + "c.db"},
		{"store", "copy", "--config", cfg, "--db", strings.TrimSuffix(cfg, "codemode.yaml") + "typo.db", "--to", url},
		{"store", "copy", "--config", cfg, "--from", strings.TrimSuffix(cfg, "codemode.yaml") + "typo.db", "--to", url},
		{"store", "copy", "--from", src, "--db", url, "--to", strings.TrimSuffix(cfg, "codemode.yaml") + "c2.db"},
	} {
		if code, _, errs := run(t, "", args...); code != cli.ExitUsage || strings.Contains(errs, "hunter2") {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errs)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(cfg, "codemode.yaml") + "typo.db"); err == nil {
		t.Error("store copy from a path with no store made one there")
	}
}
