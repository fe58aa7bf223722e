package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

func TestAnonymous(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`UPDATE t SET a = $1 WHERE b = $2 AND c = $3`, `UPDATE t SET a = ? WHERE b = ? AND c = ?`},
		{`VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		// Out of order or used twice: left numbered.
		{`SELECT substr(a, 1, $2) FROM t WHERE id = $1`, `SELECT substr(a, 1, $2) FROM t WHERE id = $1`},
		{`SELECT $1, $1`, `SELECT $1, $1`},
		{`SELECT $1, $3`, `SELECT $1, $3`},
		{`SELECT '$'`, `SELECT '$'`},
	}
	for _, tt := range tests {
		if got := anonymous(tt.in); got != tt.want {
			t.Errorf("anonymous(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A row ListExecutions cannot read is logged once per process, not at
// every list (recovery lists the running runs at every heartbeat).
func TestUnreadableRowIsLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := t.Context()
	for _, id := range []string{"exec_ok", "exec_bad"} {
		if err := s.CreateExecution(ctx, storetest.NewExecution(id, codemode.StatusRunning)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `UPDATE executions SET status = 'exploded' WHERE id = 'exec_bad'`); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if list, err := s.ListExecutions(ctx, codemode.ExecutionFilter{}); err != nil || len(list) != 1 {
			t.Fatalf("ListExecutions = %d runs, %v; want exec_ok", len(list), err)
		}
	}
	if n := strings.Count(logs.String(), "exec_bad"); n != 1 {
		t.Errorf("the unreadable row is logged %d times over three lists, want once:\n%s", n, logs.String())
	}
}

// rawExec runs statements on the database at path around the store, as a
// hand edit or another program would.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// SQLite keeps any value in any column: a time that is not an integer (a
// date written as text, a real) makes its row unreadable, left out of
// every list as a row whose status is unknown is, and GetExecution says
// what is wrong (codemode.ErrUnreadable, which `executions delete` goes
// by). A text sorts before every number in a list, newest first: a page
// still fills after it.
func TestATimeThatIsNotAnIntegerIsUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{})
	ctx := t.Context()
	for n := range 5 {
		e := storetest.NewExecution(fmt.Sprintf("x%d", n), codemode.StatusRunning)
		e.CreatedAt = time.Unix(1_700_000_000+int64(n), 0)
		if err := s.CreateExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	rawExec(t, path, `UPDATE executions SET created_at = '2026-03-01' WHERE id = 'x3'`, `UPDATE executions SET updated_at = 1.5 WHERE id = 'x1'`)
	for _, f := range []codemode.ExecutionFilter{{}, {Brief: true}, {Limit: 1}, {Limit: 2}, {Limit: 3}, {Limit: 4}} {
		want := []string{"x4", "x2", "x0"}
		if f.Limit > 0 {
			want = want[:min(f.Limit, 3)]
		}
		list, err := s.ListExecutions(ctx, f)
		var got []string
		for _, e := range list {
			got = append(got, e.ID)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ListExecutions(%+v) = %v, %v; want %v", f, got, err, want)
		}
	}
	for id, want := range map[string]string{"x3": `column created_at holds string "2026-03-01"`, "x1": `column updated_at holds float64 "1.5"`} {
		if _, err := s.GetExecution(ctx, id); !errors.Is(err, codemode.ErrUnreadable) || !strings.Contains(err.Error(), want) {
			t.Errorf("GetExecution(%s) = %v, want ErrUnreadable saying %s", id, err, want)
		}
	}
}

// TestAnEntryTimeThatIsNotAnIntegerIsUnreadable: a log entry whose time is
// not Unix nanoseconds, or whose seq or reverts is not an integer, is that
// entry unreadable, named, not the whole log (a reader sees the rest;
// Entries, which a replay reads, fails on it).
func TestAnEntryTimeThatIsNotAnIntegerIsUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{})
	ctx := t.Context()
	if err := s.CreateExecution(ctx, storetest.NewExecution("x", codemode.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 5; seq++ {
		if err := s.InsertEntry(ctx, storetest.NewEntry("x", seq, codemode.EntryApplied)); err != nil {
			t.Fatal(err)
		}
	}
	rawExec(t, path, `UPDATE entries SET created_at = '2026-03-01' WHERE seq = 2`, `UPDATE entries SET decided_at = 1.5 WHERE seq = 3`,
		`UPDATE entries SET reverts = 'one' WHERE seq = 4`, `UPDATE entries SET seq = 'five' WHERE seq = 5`)
	list, err := s.ClippedEntries(ctx, "x", codemode.LogQuery{})
	if err != nil || len(list) != 5 {
		t.Fatalf("ClippedEntries = %d entries, %v; want 5", len(list), err)
	}
	for i, want := range []string{"", `log entry #2: cannot be read: column created_at holds string "2026-03-01"`, `log entry #3: cannot be read: column decided_at holds float64 "1.5"`,
		`log entry #4: cannot be read: column reverts holds string "one"`, `log entry #0: cannot be read: column seq holds string "five"`} {
		if got := list[i].Error; !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("entry #%d: error %q, want %q", i+1, got, want)
		}
	}
	if _, err := s.Entries(ctx, "x"); !errors.Is(err, codemode.ErrUnreadable) || !strings.Contains(err.Error(), "log entry #2") {
		t.Errorf("Entries = %v, want ErrUnreadable naming log entry #2", err)
	}
}

// onWarn is a slog.Handler that calls do at every warning.
type onWarn struct {
	slog.Handler
	do func()
}

func (onWarn) Enabled(context.Context, slog.Level) bool { return true }

func (h onWarn) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		h.do()
	}
	return nil
}

// A limited list that left an unreadable row out reads the rows more
// after it as it stood: deleted meanwhile (`executions delete`, by
// another process), it does not make the list start again among the
// runs created at the same time and list a run twice.
func TestARowDeletedBeforeTheListGoesOnIsNotListedTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	del := func() { rawExec(t, path, `DELETE FROM executions WHERE id = 't2'`) }
	s := openAt(t, path, Options{Logger: slog.New(onWarn{slog.DiscardHandler, del})})
	ctx := t.Context()
	created := time.Unix(1_700_000_000, 0) // the same for all: their order is their insertion's
	for _, id := range []string{"t0", "t1", "t2", "t3"} {
		e := storetest.NewExecution(id, codemode.StatusRunning)
		e.CreatedAt = created
		if err := s.CreateExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	rawExec(t, path, `UPDATE executions SET status = 'exploded' WHERE id = 't2'`)
	list, err := s.ListExecutions(ctx, codemode.ExecutionFilter{Limit: 2})
	var got []string
	for _, e := range list {
		got = append(got, e.ID)
	}
	if err != nil || !slices.Equal(got, []string{"t3", "t1"}) {
		t.Errorf("ListExecutions = %v, %v; want t3, t1", got, err)
	}
}

// SQLite keeps any value in any column: a value that is not the integer
// its column holds (a time, a sequence number, a lease, as a hand edit
// may leave) makes that one row unreadable, not every read of its table.
// A list leaves the row out, logged once per process (a list of owners
// runs at every heartbeat); reading it alone says what is wrong. (A log
// entry is shown with the error: TestAnEntryTimeThatIsNotAnIntegerIsUnreadable.)
func TestAValueThatIsNotAnIntegerMakesOneRowUnreadable(t *testing.T) {
	var logs bytes.Buffer
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := t.Context()
	for i, id := range []string{"a", "b", "c"} {
		at := time.Unix(1_700_000_000+int64(i), 0)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.PutRecord(ctx, connectors.Record{Kind: "notes", ID: id, Value: json.RawMessage(`{}`), CreatedAt: at}))
		must(s.SaveSnippet(ctx, codemode.Snippet{Name: id, Code: "1", CreatedAt: at}))
		must(s.Audit(ctx, codemode.AuditRecord{At: at, Person: codemode.Local, Action: codemode.AuditRun, ExecutionID: id, Seq: 1}))
		must(s.RegisterOwner(ctx, codemode.Owner{ID: id, Host: "h", PID: 1, StartedAt: at, Lease: time.Minute}))
	}
	rawExec(t, path,
		`UPDATE records SET created_at = '2026-03-01' WHERE id = 'b'`,
		`UPDATE snippets SET created_at = 'yesterday' WHERE name = 'b'`,
		`UPDATE audit SET seq = 'one' WHERE execution_id = 'b'`,
		`UPDATE audit SET at = 1.5 WHERE execution_id = 'c'`,
		`UPDATE owners SET lease = '1m' WHERE id = 'b'`,
	)
	for range 2 {
		var records []string
		if err := s.ScanRecords(ctx, "notes", func(r connectors.Record) bool { records = append(records, r.ID); return true }); err != nil || !slices.Equal(records, []string{"c", "a"}) {
			t.Errorf("ScanRecords = %v, %v; want c, a", records, err)
		}
		snippets, err := s.ListSnippets(ctx)
		if names := snippetNames(snippets); err != nil || !slices.Equal(names, []string{"a", "c"}) {
			t.Errorf("ListSnippets = %v, %v; want a, c", names, err)
		}
		stamps, err := s.SnippetStamps(ctx)
		if names := snippetNames(stamps); err != nil || !slices.Equal(names, []string{"a", "c"}) {
			t.Errorf("SnippetStamps = %v, %v; want a, c", names, err)
		}
		audit, err := s.AuditRecords(ctx, codemode.AuditQuery{})
		if err != nil || len(audit) != 1 || audit[0].ExecutionID != "a" {
			t.Errorf("AuditRecords = %+v, %v; want the record about a", audit, err)
		}
		owners, err := s.Owners(ctx)
		if err != nil || len(owners) != 2 || owners[0].ID != "a" || owners[1].ID != "c" {
			t.Errorf("Owners = %+v, %v; want a, c", owners, err)
		}
	}
	_, err := s.GetRecord(ctx, "notes", "b")
	wantUnreadable(t, "GetRecord(b)", err, `column created_at holds string "2026-03-01"`)
	_, err = s.GetSnippet(ctx, "b")
	wantUnreadable(t, "GetSnippet(b)", err, `column created_at holds string "yesterday"`)
	for _, want := range []string{`record notes/b`, `snippet b`, `audit record #2`, `audit record #3`, `owner b`} {
		if n := strings.Count(logs.String(), `row="`+want+`"`); n != 1 {
			t.Errorf("%s is logged %d times over two reads, want once:\n%s", want, n, logs.String())
		}
	}
}

// wantUnreadable fails t unless err is codemode.ErrUnreadable saying want.
func wantUnreadable(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !errors.Is(err, codemode.ErrUnreadable) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v, want ErrUnreadable saying %s", what, err, want)
	}
}

func snippetNames(list []codemode.Snippet) []string {
	var names []string
	for _, sn := range list {
		names = append(names, sn.Name)
	}
	return names
}

// Prune goes by time, and leaves a row whose time is not an integer (a
// text, a real: a hand edit, another program) alone and out of its count,
// for the operator to fix or delete: its age is unknown, so it is neither
// the oldest to delete nor one of the newest to keep (a text sorts after
// every number, newest first, and took a keep slot from a readable run).
func TestPruneLeavesAnUnreadableTimeAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{})
	ctx := t.Context()
	for n := range 4 {
		e := storetest.NewExecution(fmt.Sprintf("x%d", n), codemode.StatusCompleted)
		e.CreatedAt = time.Unix(1_700_000_000+int64(n), 0)
		if err := s.CreateExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		r := codemode.AuditRecord{At: e.CreatedAt, Person: codemode.Person{Subject: "local:me"}, Action: codemode.AuditRun, ExecutionID: e.ID}
		if err := s.Audit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rawExec(t, path, `UPDATE executions SET created_at = 'yesterday' WHERE id = 'x3'`, `UPDATE executions SET created_at = 1.5 WHERE id = 'x2'`,
		`UPDATE audit SET at = 'yesterday' WHERE execution_id = 'x3'`, `UPDATE audit SET at = 1.5 WHERE execution_id = 'x2'`)
	if n, err := s.PruneExecutions(ctx, 1); n != 1 || err != nil {
		t.Errorf("PruneExecutions(1) = %d, %v; want x0 deleted", n, err)
	}
	if n, err := s.PruneAudit(ctx, time.Unix(1_800_000_000, 0)); n != 2 || err != nil {
		t.Errorf("PruneAudit = %d, %v; want x0's and x1's records deleted", n, err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`SELECT group_concat(id, ' ') FROM (SELECT id FROM executions ORDER BY id)`,
		`SELECT group_concat(execution_id, ' ') FROM (SELECT execution_id FROM audit ORDER BY execution_id)`} {
		var left string
		want := map[bool]string{true: "x1 x2 x3", false: "x2 x3"}[strings.Contains(q, "executions")]
		if err := raw.QueryRowContext(ctx, q).Scan(&left); err != nil || left != want {
			t.Errorf("%s: %q, %v after prune; want %s", q, left, err, want)
		}
	}
}

// TestAWriterWaitsForTheWriterBeforeIt: a write while this process's
// writer holds SQLite's lock waits for it, however long, instead of
// failing SQLITE_BUSY when the busy timeout passes (it did under load: 110
// calls at once failed "database is locked" in a CI run at load 13). The
// pool's connection is given a 50 ms busy timeout, so the write would fail
// well within the half second the lock is held.
func TestAWriterWaitsForTheWriterBeforeIt(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "codemode.db"), Options{})
	ctx := t.Context()
	s.db.SetMaxIdleConns(1)
	s.db.SetMaxOpenConns(2) // the batches' connection and one of the pool
	if _, err := s.db.ExecContext(ctx, `PRAGMA busy_timeout = 50`); err != nil {
		t.Fatal(err)
	}
	d := s.run
	d.mu.Lock()
	if _, err := d.log.Exec(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.CreateExecution(ctx, storetest.NewExecution("exec_waits", codemode.StatusRunning)) }()
	var early error
	select {
	case early = <-done:
	case <-time.After(500 * time.Millisecond): // ten busy timeouts
	}
	if _, err := d.log.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	d.mu.Unlock()
	if early == nil {
		early = <-done
	}
	if early != nil {
		t.Fatalf("CreateExecution while another write held the lock: %v", early)
	}
	if _, err := s.GetExecution(ctx, "exec_waits"); err != nil {
		t.Fatal(err)
	}
}
