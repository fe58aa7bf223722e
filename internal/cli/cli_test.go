package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// run executes the command line in process with its own config and db.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// notesConfig writes a config with only the built-in notes connector.
func notesConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(p, []byte("store:\n  path: ./c.db\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUsageAndVersion(t *testing.T) {
	if code, _, errs := run(t, ""); code != cli.ExitUsage || !strings.Contains(errs, "Usage:") {
		t.Errorf("no args: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "frobnicate"); code != cli.ExitUsage || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errs)
	}
	if code, out, _ := run(t, "", "version"); code != cli.ExitOK || !strings.HasPrefix(out, "codemode-mcp ") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, errs := run(t, "", "run", "--config", notesConfig(t)); code != cli.ExitUsage || !strings.Contains(errs, "--code") {
		t.Errorf("run without a program: %d %q", code, errs)
	}
	if code, _, errs := run(t, "", "approvals", "reject", "exec_x", "zero", "--config", notesConfig(t)); code != cli.ExitUsage || !strings.Contains(errs, "SEQ") {
		t.Errorf("bad SEQ: %d %q", code, errs)
	}
}

func TestConfigErrorsExitTwo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.yaml")
	os.WriteFile(p, []byte("sandbox:\n  timeout: 5s\n  timout: 9s\n"), 0o600)
	code, _, errs := run(t, "", "check", "--config", p)
	if code != cli.ExitUsage || !strings.Contains(errs, "bad.yaml:3") || !strings.Contains(errs, "timout") {
		t.Errorf("misspelt key: %d %q", code, errs)
	}
	code, _, errs = run(t, "", "check", "--config", filepath.Join(dir, "missing.yaml"))
	if code != cli.ExitUsage || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("missing file: %d %q", code, errs)
	}
}

func TestRunApproveAndHistory(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "await notes.createNote({text: 'from stdin'})", "run", "--config", cfg, "-")
	if code != cli.ExitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	var o struct {
		Status, ExecutionID string
	}
	json.Unmarshal([]byte(out), &o)
	if o.Status != "paused" {
		t.Fatalf("want paused: %s", out)
	}
	if code, out, _ = run(t, "", "approvals", "list", "--config", cfg); code != 0 || !strings.Contains(out, o.ExecutionID) {
		t.Fatalf("approvals list: %d %s", code, out)
	}
	if code, out, errs = run(t, "", "approvals", "approve", o.ExecutionID, "--config", cfg); code != 0 || !strings.Contains(out, `"from stdin"`) {
		t.Fatalf("approve: %d %s %s", code, out, errs)
	}
	if code, _, errs = run(t, "", "approvals", "approve", o.ExecutionID, "--config", cfg); code != cli.ExitFailure || !strings.Contains(errs, "completed") {
		t.Fatalf("second approve: %d %s", code, errs)
	}
	if code, out, _ = run(t, "", "executions", "--config", cfg); code != 0 || !strings.Contains(out, o.ExecutionID) || !strings.Contains(out, "completed") {
		t.Fatalf("executions: %d %s", code, out)
	}
	if code, out, errs = run(t, "", "snippets", "save", "make_note", "--from", o.ExecutionID, "--description", "makes a note", "--config", cfg); code != 0 || !strings.Contains(out, "make_note") {
		t.Fatalf("snippets save: %d %s %s", code, out, errs)
	}
	if code, out, _ = run(t, "", "snippets", "--config", cfg); code != 0 || !strings.Contains(out, "makes a note") {
		t.Fatalf("snippets list: %d %s", code, out)
	}
	if code, _, _ = run(t, "", "snippets", "delete", "make_note", "--config", cfg); code != 0 {
		t.Fatalf("snippets delete: %d", code)
	}
	if code, _, _ = run(t, "", "executions", "delete", o.ExecutionID, "--config", cfg); code != 0 {
		t.Fatalf("executions delete: %d", code)
	}
	if code, _, errs = run(t, "", "executions", "show", o.ExecutionID, "--config", cfg); code != cli.ExitFailure || !strings.Contains(errs, o.ExecutionID) {
		t.Fatalf("show after delete: %d %s", code, errs)
	}
}

func TestRunErrorOutcomeExitsOne(t *testing.T) {
	code, out, _ := run(t, "", "run", "--config", notesConfig(t), "--code", "throw new TypeError('nope')")
	if code != cli.ExitFailure || !strings.Contains(out, "nope") {
		t.Fatalf("%d %s", code, out)
	}
}

func TestTypes(t *testing.T) {
	cfg := notesConfig(t)
	code, out, _ := run(t, "", "types", "--config", cfg)
	if code != 0 || !strings.Contains(out, "declare const notes") || !strings.Contains(out, "declare const codemode") {
		t.Fatalf("types: %d %s", code, out)
	}
	code, _, errs := run(t, "", "types", "nope", "--config", cfg)
	if code != cli.ExitUsage || !strings.Contains(errs, `unknown connector "nope"`) {
		t.Fatalf("types nope: %d %s", code, errs)
	}
}
