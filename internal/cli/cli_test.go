package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
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

// approve, reject and rollback of an execution in the wrong state (or an
// unknown one) change nothing and print an error outcome naming the
// execution's status, as the MCP tools do, and exit 1.
func TestRefusedDecisionPrintsOutcome(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "await notes.createNote({text: 'x'})")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != cli.ExitOK || paused.Status != "paused" {
		t.Fatalf("run: %d %v\n%s%s", code, err, out, errs)
	}
	id := paused.ExecutionID
	if code, out, errs = run(t, "", "approvals", "approve", id, "--config", cfg); code != cli.ExitOK {
		t.Fatalf("approve: %d\n%s%s", code, out, errs)
	}
	tests := []struct {
		name       string
		args       []string
		wantStatus string
		wantError  string
	}{
		{"approve completed", []string{"approve", id}, "completed", "has completed; only a paused execution can be approved"},
		{"reject completed", []string{"reject", id}, "completed", "has completed; only a paused execution can be rejected"},
		{"reject completed seq", []string{"reject", id, "1"}, "completed", "has completed; only a paused execution can be rejected"},
		{"approve unknown", []string{"approve", "exec_nope"}, "error", `unknown execution "exec_nope" (list them with: codemode-mcp executions)`},
		{"rollback unknown", []string{"rollback", "exec_nope"}, "error", `unknown execution "exec_nope" (list them with: codemode-mcp executions)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, "", append(append([]string{"approvals"}, tt.args...), "--config", cfg)...)
			if code != cli.ExitFailure {
				t.Errorf("exit %d, want %d", code, cli.ExitFailure)
			}
			var o struct{ Status, ExecutionID, Error string }
			if err := json.Unmarshal([]byte(out), &o); err != nil {
				t.Fatalf("stdout is not an outcome: %v\n%s", err, out)
			}
			if o.Status != tt.wantStatus || o.ExecutionID != tt.args[1] || !strings.Contains(o.Error, tt.wantError) {
				t.Errorf("outcome %+v, want status %q and an error with %q", o, tt.wantStatus, tt.wantError)
			}
			if !strings.Contains(errs, tt.wantError) {
				t.Errorf("stderr %q lacks %q", errs, tt.wantError)
			}
		})
	}
	// A rollback is allowed once; the second is refused with rolled_back.
	if code, out, errs = run(t, "", "approvals", "rollback", id, "--config", cfg); code != cli.ExitOK {
		t.Fatalf("rollback: %d\n%s%s", code, out, errs)
	}
	code, out, _ = run(t, "", "approvals", "rollback", id, "--config", cfg)
	var o struct{ Status, Error string }
	json.Unmarshal([]byte(out), &o)
	if code != cli.ExitFailure || o.Status != "rolled_back" || !strings.Contains(o.Error, "was rolled back; only") {
		t.Fatalf("second rollback: %d\n%s", code, out)
	}
}

// TestServeRefusesAnOpenListener: beyond loopback, serve needs a token or
// an explicit --insecure-no-auth; it refuses before starting anything.
func TestServeRefusesAnOpenListener(t *testing.T) {
	code, _, errs := run(t, "", "serve", "--config", notesConfig(t), "--transport", "http", "--addr", "0.0.0.0:0")
	if code != cli.ExitUsage || !strings.Contains(errs, "without server.auth_token") || !strings.Contains(errs, "--insecure-no-auth") {
		t.Errorf("serve on 0.0.0.0 without a token: exit %d, stderr %q", code, errs)
	}
}

// With server.auth, serve listens beyond loopback without a token, but
// not on an address no client can reach unless server.auth.resource
// names the public URL; it refuses before starting anything.
func TestServeWithAnIssuerNeedsAReachableResource(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  auth:\n    issuer: https://auth.example.com/\nconnectors:\n  notes:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "", "serve", "--config", cfg, "--transport", "http", "--addr", "0.0.0.0:0")
	if code != cli.ExitUsage || !strings.Contains(errs, "set server.auth.resource") || strings.Contains(errs, "insecure") {
		t.Errorf("serve with an issuer on 0.0.0.0: exit %d, stderr %q", code, errs)
	}
}

// Approving without the configuration the run used says that no
// configuration file was found, not only that its connectors "changed".
func TestApproveWithoutTheConfigSaysSo(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mine.yaml")
	db := filepath.Join(dir, "c.db")
	if err := os.WriteFile(cfg, []byte("connectors:\n  mine:\n    builtin: notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "run", "--config", cfg, "--db", db, "--code", "await mine.createNote({text: 'x'})")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != cli.ExitOK || paused.Status != "paused" {
		t.Fatalf("run: %d %v\n%s%s", code, err, out, errs)
	}
	t.Chdir(t.TempDir())
	t.Setenv("CODEMODE_CONFIG", "")
	code, _, errs = run(t, "", "approvals", "approve", paused.ExecutionID, "--db", db)
	if code != cli.ExitFailure || !strings.Contains(errs, "mine (gone)") || !strings.Contains(errs, "No configuration file was found") {
		t.Fatalf("approve without the config: %d\n%s", code, errs)
	}
	if code, out, errs = run(t, "", "approvals", "approve", paused.ExecutionID, "--db", db, "--config", cfg); code != cli.ExitOK || !strings.Contains(out, "completed") {
		t.Fatalf("approve with it: %d\n%s%s", code, out, errs)
	}
}

// executions show prints a long value cut, with its size and the command
// that prints it whole; --seq N --full prints that call whole.
func TestExecutionsShowCutsLongValues(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", `await codemode.step("big", () => "0123456789".repeat(1000) + "E" + "ND"); 1`)
	var o struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &o); err != nil || code != cli.ExitOK || o.Status != "completed" {
		t.Fatalf("run: %d %v\n%s%s", code, err, out, errs)
	}
	whole := `"` + strings.Repeat("0123456789", 1000) + `END"`
	var shown struct {
		Calls []struct {
			Seq    int
			Result json.RawMessage
		}
	}
	code, out, errs = run(t, "", "executions", "show", o.ExecutionID, "--config", cfg)
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != cli.ExitOK || len(shown.Calls) != 1 {
		t.Fatalf("show: %d %v\n%s", code, err, errs)
	}
	var cut string
	if err := json.Unmarshal(shown.Calls[0].Result, &cut); err != nil {
		t.Fatalf("the cut result is not a JSON string: %s", shown.Calls[0].Result)
	}
	note := "…[cut: 9.8 KiB in the log; codemode-mcp executions show " + o.ExecutionID + " --seq 1 --full prints it whole]"
	if cut != whole[:4000]+note {
		t.Errorf("cut result: %q…%q", cut[:20], cut[3990:])
	}

	var call struct{ Result json.RawMessage }
	code, out, errs = run(t, "", "executions", "show", o.ExecutionID, "--seq", "1", "--full", "--config", cfg)
	if err := json.Unmarshal([]byte(out), &call); err != nil || code != cli.ExitOK || string(call.Result) != whole {
		t.Errorf("show --seq 1 --full: %d %v (%d bytes of result)\n%s", code, err, len(call.Result), errs)
	}
	if code, out, _ = run(t, "", "executions", "show", o.ExecutionID, "--seq", "1", "--config", cfg); code != cli.ExitOK || !strings.Contains(out, "--full prints it whole") {
		t.Errorf("show --seq 1: %d", code)
	}
	if code, _, errs = run(t, "", "executions", "show", o.ExecutionID, "--full", "--config", cfg); code != cli.ExitUsage || !strings.Contains(errs, "--full needs --seq N") {
		t.Errorf("show --full: %d %s", code, errs)
	}
	if code, _, errs = run(t, "", "executions", "show", o.ExecutionID, "--seq", "7", "--config", cfg); code != cli.ExitFailure || !strings.Contains(errs, "has no call 7") {
		t.Errorf("show --seq 7: %d %s", code, errs)
	}
}

// The command line shows bidirectional, zero-width and other hidden
// characters as the console does, as \uXXXX escapes: in the JSON it prints
// (which still means the same) and in the executions table. A program's
// text cannot reorder or hide itself in a terminal.
func TestHiddenCharactersAreEscaped(t *testing.T) {
	cfg := notesConfig(t)
	const text = "pay\u202egpj.exe\u200b to\u00a0bob"
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", `async () => { await notes.createNote({ text: "pay\u202egpj.exe\u200b to\u00a0bob" }) }`)
	if code != cli.ExitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	var o struct {
		ExecutionID string
		Pending     []struct{ Args struct{ Text string } }
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Pending) != 1 || o.Pending[0].Args.Text != text {
		t.Fatalf("the outcome's JSON does not hold the text as written (%v): %s", err, out)
	}
	code, list, _ := run(t, "", "approvals", "list", "--config", cfg)
	_, fail, _ := run(t, "", "run", "--config", cfg, "--code", `throw new Error("a\u202eb\u200bc")`)
	_, table, _ := run(t, "", "executions", "--config", cfg)
	for _, s := range []struct{ what, out, want string }{
		{"run", out, `pay\u202Egpj.exe\u200B to\u00A0bob`},
		{"approvals list", list, `pay\u202Egpj.exe\u200B to\u00A0bob`},
		{"an error outcome", fail, `a\u202Eb\u200Bc`},
		{"executions", table, `a\u202Eb\u200Bc`},
	} {
		if !strings.Contains(s.out, s.want) || strings.ContainsAny(s.out, "\u202e\u200b\u00a0") {
			t.Errorf("%s prints hidden characters raw, or not as %s:\n%s", s.what, s.want, s.out)
		}
	}
	if code != cli.ExitOK {
		t.Errorf("approvals list: exit %d", code)
	}
}

// A flag of executions that the action given does not take (--seq and
// --full are show's, --limit and --status the list's) is a usage error
// naming it and where it goes, before the store is opened, not ignored.
func TestExecutionsRefusesAnotherActionsFlags(t *testing.T) {
	cfg := notesConfig(t)
	db := filepath.Join(t.TempDir(), "c.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"executions", "--seq", "2"}, "executions: --seq goes with show: codemode-mcp executions show ID --seq N [--full]"},
		{[]string{"executions", "--full"}, "executions: --full goes with show: codemode-mcp executions show ID --seq N [--full]"},
		{[]string{"executions", "delete", "exec_x", "--seq", "1"}, "executions delete: --seq goes with show: codemode-mcp executions show ID --seq N [--full]"},
		{[]string{"executions", "show", "exec_x", "--limit", "5"}, "executions show: --limit goes with the list: codemode-mcp executions [--limit N] [--status S]"},
		{[]string{"executions", "delete", "exec_x", "--status", "failed"}, "executions delete: --status goes with the list: codemode-mcp executions [--limit N] [--status S]"},
	} {
		code, out, errs := run(t, "", append(tc.args, "--config", cfg, "--db", db)...)
		if code != cli.ExitUsage || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errs, cli.ExitUsage, tc.want)
		}
	}
	if _, err := os.Stat(db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a usage error opened the store: %v", err)
	}
}
