package cli_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/cli"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// What the command line does is the OS user's (subject local, named by
// the user's name): a run it starts and a decision it makes say so in
// `executions`, `executions show` (with the run's decisions from the
// audit) and `audit`, which prints JSON lines, oldest first.
func TestCommandLinePeopleAndAudit(t *testing.T) {
	me := "local"
	if u, err := user.Current(); err == nil && u.Username != "" {
		me = u.Username
	}
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "async () => notes.createNote({ text: 'audited' })")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != 0 || paused.Status != "paused" {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	if code, _, errs := run(t, "", "approvals", "approve", paused.ExecutionID, "--config", cfg); code != 0 {
		t.Fatalf("approve: %d %s", code, errs)
	}
	// The table names the local user as the console does: local, with
	// the user's name beside it (a run started on stdio reads local).
	if code, out, errs = run(t, "", "executions", "--config", cfg); code != 0 || !strings.Contains(out, "STARTED BY") || !strings.Contains(out, "local ("+me+")") {
		t.Errorf("executions: %d %s %s; want a STARTED BY column naming local (%s)", code, out, errs, me)
	}
	code, out, errs = run(t, "", "executions", "show", paused.ExecutionID, "--config", cfg)
	var shown struct {
		StartedBy codemode.Person
		Calls     []codemode.Entry
		Decisions []codemode.AuditRecord
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != 0 {
		t.Fatalf("executions show: %d %s %s", code, out, errs)
	}
	local := codemode.Person{Subject: codemode.LocalSubject, Name: me}
	if shown.StartedBy != local || len(shown.Calls) != 1 || shown.Calls[0].DecidedBy != local || shown.Calls[0].DecidedAt.IsZero() {
		t.Errorf("executions show: started by %+v, calls %+v; want both %+v", shown.StartedBy, shown.Calls, local)
	}
	if len(shown.Decisions) != 2 || shown.Decisions[1].Action != codemode.AuditApprove {
		t.Errorf("executions show: decisions %+v, want the run and its approval", shown.Decisions)
	}

	code, out, errs = run(t, "", "audit", "--config", cfg, "--since", "1h")
	if code != 0 {
		t.Fatalf("audit: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got []string
	for _, l := range lines {
		var r codemode.AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if r.Person != local || r.ExecutionID != paused.ExecutionID {
			t.Errorf("audit record %+v: want %+v about %s", r, local, paused.ExecutionID)
		}
		got = append(got, string(r.Action)+" "+r.Target+" "+r.Outcome)
	}
	want := []string{"run  ok", "approve notes.createNote ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit = %q, want %q", got, want)
	}
	if strings.Contains(out, "audited") {
		t.Errorf("the audit holds the call's arguments: %s", out)
	}
	if code, out, _ = run(t, "", "audit", "--config", cfg, "--since", "2999-01-01"); code != 0 || out != "" {
		t.Errorf("audit --since the future: %d %q, want nothing", code, out)
	}
	if code, _, errs = run(t, "", "audit", "--config", cfg, "--since", "yesterday"); code != 2 || !strings.Contains(errs, `--since "yesterday"`) {
		t.Errorf("audit --since yesterday: %d %s, want a usage error naming it", code, errs)
	}
}

// audit prints what a person's token said of them as the other commands
// print text: hidden characters as \uXXXX escapes, so that a name cannot
// hide or reorder itself in a terminal (the JSON means the same).
func TestAuditEscapesHiddenCharacters(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "mallory\u202eecila"
	r := codemode.AuditRecord{At: time.Now(), Person: codemode.Person{Subject: "m", Name: name}, Action: codemode.AuditApprove, ExecutionID: "exec_1", Outcome: codemode.AuditOK}
	if err := errors.Join(st.Audit(t.Context(), r), st.Close()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "audit", "--config", notesConfig(t), "--db", db)
	var got codemode.AuditRecord
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Person.Name != name || !strings.Contains(out, `mallory\u202Eecila`) || strings.ContainsRune(out, '\u202e') {
		t.Fatalf("audit prints a hidden character raw, or not as \\u202E: %d\n%s\n%s", code, out, errs)
	}
}

// An audit query that matches nothing says so on stderr (exit 0: an
// empty answer is an answer), rather than printing nothing at all.
func TestAuditSaysWhenNothingMatches(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "audit", "--config", cfg, "--run", "exec_nope")
	if code != cli.ExitOK || out != "" || !strings.Contains(errs, `no audit records about execution exec_nope`) {
		t.Fatalf("audit --run exec_nope: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = run(t, "", "audit", "--config", cfg, "--since", "1h", "--run", "exec_\u202enope")
	if code != cli.ExitOK || out != "" || !strings.Contains(errs, `exec_\u202Enope`) || !strings.Contains(errs, "since") {
		t.Fatalf("audit --since --run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// The executions table escapes what it reads from the store, the id too
// (a store another program wrote, or one copied in, is not trusted to hold
// only ids this server made).
func TestExecutionsTableEscapesStoredIDs(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := &codemode.Execution{ID: "exec_\u202eevil\x1b[2J", Status: codemode.StatusCompleted, CreatedAt: time.Now()}
	if err := errors.Join(st.CreateExecution(t.Context(), e), st.Close()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "executions", "--config", notesConfig(t), "--db", db)
	if code != cli.ExitOK || !strings.Contains(out, `exec_\u202Eevil\u001B[2J`) || strings.ContainsAny(out, "\u202e\x1b") {
		t.Fatalf("executions prints a stored id raw: %d\n%q\n%s", code, out, errs)
	}
}

// A row the store cannot read does not fail the table: the other runs
// are listed, and stderr names the row that was left out and why.
func TestExecutionsListsPastAnUnreadableRow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"exec_ok", "exec_bad\x1b[2J"} {
		e := &codemode.Execution{ID: id, Status: codemode.StatusCompleted, CreatedAt: time.Now()}
		if err := st.CreateExecution(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(t.Context(), `UPDATE executions SET status = 'exploded' WHERE id != 'exec_ok'`)
	if err := errors.Join(err, raw.Close()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "executions", "--config", notesConfig(t), "--db", db)
	if code != cli.ExitOK || !strings.Contains(out, "exec_ok") || strings.Contains(out, "exec_bad") {
		t.Fatalf("executions with an unreadable row: %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "cannot be read") || !strings.Contains(errs, `exec_bad\x1b[2J`) || !strings.Contains(errs, "exploded") || strings.Contains(errs, "\x1b") {
		t.Errorf("stderr does not name the unreadable row and what is wrong with it, escaped:\n%q", errs)
	}
}

// A row the store cannot read (here a running run with a status this
// release does not know) is deleted by `executions delete` all the same,
// whatever its status says, and the deletion is audited.
func TestDeletingAnUnreadableRow(t *testing.T) {
	cfg := notesConfig(t)
	db := filepath.Join(filepath.Dir(cfg), "c.db")
	st, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"exec_ok", "exec_bad"} {
		e := &codemode.Execution{ID: id, Status: codemode.StatusRunning, Owner: "own_gone", CreatedAt: time.Now()}
		if err := st.CreateExecution(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err = raw.ExecContext(t.Context(), `UPDATE executions SET status = 'exploded' WHERE id = 'exec_bad'`); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, "", "executions", "delete", "exec_bad", "--config", cfg); code != cli.ExitOK {
		t.Fatalf("delete of an unreadable row: %d %s %s", code, out, errs)
	}
	var n int
	if err := raw.QueryRowContext(t.Context(), `SELECT count(*) FROM executions WHERE id = 'exec_bad'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the unreadable row after delete: %d rows, %v", n, err)
	}
	code, out, errs := run(t, "", "audit", "--run", "exec_bad", "--config", cfg)
	var r codemode.AuditRecord
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil || code != 0 ||
		r.Action != codemode.AuditDelete || r.Outcome != codemode.AuditOK || r.Person.Subject != codemode.Local.Subject {
		t.Fatalf("audit after deleting an unreadable row: %d %v\n%s\n%s", code, err, out, errs)
	}
}

// Deleting a paused run rejects it first: that rejection is a decision,
// audited like `approvals reject` (the record outlives the deleted run).
func TestDeletingAPausedRunAuditsItsRejection(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "async () => notes.createNote({ text: 'to delete' })")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != 0 || paused.Status != "paused" {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	if code, out, errs := run(t, "", "executions", "delete", paused.ExecutionID, "--config", cfg); code != cli.ExitOK {
		t.Fatalf("delete: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, "", "audit", "--run", paused.ExecutionID, "--config", cfg)
	var rej *codemode.AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r codemode.AuditRecord
		if json.Unmarshal([]byte(line), &r) == nil && r.Action == codemode.AuditReject {
			rej = &r
		}
	}
	if code != 0 || rej == nil || rej.Outcome != codemode.AuditOK || rej.Target != "notes.createNote" || rej.Person.Subject != codemode.Local.Subject {
		t.Fatalf("audit after deleting a paused run has no rejection by the command line: %d\n%s\n%s", code, out, errs)
	}
}

// A log entry the store cannot read: `executions show` shows the rest of
// the log and says which entry cannot be read, its state unreadable (not
// the zero state's Go name); an approval, whose replay
// would read past it, ends the run in an error saying so, and the pending
// call is not made.
func TestAnUnreadableLogEntry(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", "async () => { await notes.listNotes({}); return notes.createNote({ text: 'x' }) }")
	var paused struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &paused); err != nil || code != 0 || paused.Status != "paused" {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	raw, err := sql.Open("sqlite", filepath.Join(filepath.Dir(cfg), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), `UPDATE entries SET state = 'exploded' WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, "", "executions", "show", paused.ExecutionID, "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, `log entry #1: cannot be read: unknown log entry state \"exploded\"`) || !strings.Contains(out, `"method": "createNote"`) ||
		!strings.Contains(out, `"state": "unreadable"`) || strings.Contains(out, "EntryState(") {
		t.Fatalf("show: %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = run(t, "", "approvals", "approve", paused.ExecutionID, "--config", cfg); code == cli.ExitOK {
		t.Fatalf("approve over an unreadable entry: %d %s %s", code, out, errs)
	}
	var status string
	var notes int
	if err := raw.QueryRowContext(t.Context(), `SELECT status FROM executions`).Scan(&status); err != nil || status != "error" {
		t.Errorf("the run after the approval: %q, %v; want error", status, err)
	}
	if err := raw.QueryRowContext(t.Context(), `SELECT count(*) FROM records`).Scan(&notes); err != nil || notes != 0 {
		t.Errorf("notes after the approval: %d, %v; want none made", notes, err)
	}
}

// executions show prints a run whose stored values are not JSON (a hand
// edit, another program): each such value is its text in a JSON string
// that says so, and the rest of the run is shown; --seq N --full too.
func TestExecutionsShowValuesThatAreNotJSON(t *testing.T) {
	cfg := notesConfig(t)
	code, out, errs := run(t, "", "run", "--config", cfg, "--code", `async () => { await codemode.step("a", () => 1); await codemode.step("b", () => 2); return 3 }`)
	var o struct{ Status, ExecutionID string }
	if err := json.Unmarshal([]byte(out), &o); err != nil || code != cli.ExitOK || o.Status != "completed" {
		t.Fatalf("run: %d %v\n%s%s", code, err, out, errs)
	}
	raw, err := sql.Open("sqlite", filepath.Join(filepath.Dir(cfg), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`UPDATE entries SET result = '{"broken":' WHERE seq = 1`, `UPDATE executions SET result = 'three'`} {
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	var shown struct {
		Result json.RawMessage
		Calls  []struct {
			Seq    int
			Result json.RawMessage
		}
	}
	code, out, errs = run(t, "", "executions", "show", o.ExecutionID, "--config", cfg)
	if err := json.Unmarshal([]byte(out), &shown); err != nil || code != cli.ExitOK || len(shown.Calls) != 2 {
		t.Fatalf("show: exit %d, %v\n%s%s", code, err, out, errs)
	}
	const note = " [not JSON in the log: its text is shown]"
	for what, got := range map[string]json.RawMessage{"the run's result": shown.Result, "call 1's result": shown.Calls[0].Result} {
		if !strings.HasSuffix(string(got), note+`"`) {
			t.Errorf("%s: %s; want its text saying it is not JSON", what, got)
		}
	}
	if string(shown.Calls[1].Result) != "2" {
		t.Errorf("call 2's result: %s, want 2", shown.Calls[1].Result)
	}
	var call struct{ Result string }
	code, out, errs = run(t, "", "executions", "show", o.ExecutionID, "--seq", "1", "--full", "--config", cfg)
	if err := json.Unmarshal([]byte(out), &call); err != nil || code != cli.ExitOK || call.Result != `{"broken":`+note {
		t.Errorf("show --seq 1 --full: exit %d, %v, result %q\n%s", code, err, call.Result, errs)
	}
}

// approvals list prints a pending call whose stored arguments are not
// JSON as executions show does, and the other pending calls.
func TestApprovalsListArgsThatAreNotJSON(t *testing.T) {
	cfg := notesConfig(t)
	var ids []string
	for range 2 {
		code, out, errs := run(t, "", "run", "--config", cfg, "--code", "async () => notes.createNote({ text: 'x' })")
		var paused struct{ Status, ExecutionID string }
		if err := json.Unmarshal([]byte(out), &paused); err != nil || code != cli.ExitOK || paused.Status != "paused" {
			t.Fatalf("run: %d %s %s", code, out, errs)
		}
		ids = append(ids, paused.ExecutionID)
	}
	raw, err := sql.Open("sqlite", filepath.Join(filepath.Dir(cfg), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(t.Context(), `UPDATE entries SET args = '{"text":' WHERE execution_id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "", "approvals", "list", "--config", cfg)
	var list struct {
		Pending []struct {
			ExecutionID string
			Args        json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != cli.ExitOK || len(list.Pending) != 2 {
		t.Fatalf("approvals list: exit %d, %v\n%s%s", code, err, out, errs)
	}
	for _, p := range list.Pending {
		var args bytes.Buffer
		if err := json.Compact(&args, p.Args); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: `"{\"text\": [not JSON in the log: its text is shown]"`, false: `{"text":"x"}`}[p.ExecutionID == ids[0]]; args.String() != want {
			t.Errorf("the pending call of %s: args %s, want %s", p.ExecutionID, args.String(), want)
		}
	}
}
