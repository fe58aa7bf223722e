package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
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
// not Unix nanoseconds is that entry unreadable, named, not the whole log
// (a reader sees the rest; Entries, which a replay reads, fails on it).
func TestAnEntryTimeThatIsNotAnIntegerIsUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	s := openAt(t, path, Options{})
	ctx := t.Context()
	if err := s.CreateExecution(ctx, storetest.NewExecution("x", codemode.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 3; seq++ {
		if err := s.InsertEntry(ctx, storetest.NewEntry("x", seq, codemode.EntryApplied)); err != nil {
			t.Fatal(err)
		}
	}
	rawExec(t, path, `UPDATE entries SET created_at = '2026-03-01' WHERE seq = 2`, `UPDATE entries SET decided_at = 1.5 WHERE seq = 3`)
	list, err := s.ClippedEntries(ctx, "x", codemode.LogQuery{})
	if err != nil || len(list) != 3 {
		t.Fatalf("ClippedEntries = %d entries, %v; want 3", len(list), err)
	}
	for i, want := range []string{"", `log entry #2: cannot be read: column created_at holds string "2026-03-01"`, `log entry #3: cannot be read: column decided_at holds float64 "1.5"`} {
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
