package sqlitestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// copySchema1 copies testdata/schema1.db (see testdata/README.md) to a
// temporary directory and returns the copy's path.
func copySchema1(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema1.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "codemode.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A database written by the release before owners opens, migrates in
// place, and reads back whole; the new columns and table work on it.
func TestSchema1Migrates(t *testing.T) {
	ctx := context.Background()
	path := copySchema1(t)
	s := openAt(t, path, Options{})
	var version int
	if err := s.DB().QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != SchemaVersion() {
		t.Errorf("schema version after Open = %d, want %d", version, SchemaVersion())
	}
	list, err := s.ListExecutions(ctx, codemode.ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range list {
		got[e.ID] = e.Status.String() + " owner=" + e.Owner
	}
	want := map[string]string{
		"exec_74b95732f8214339": "paused owner=",
		"exec_df94e90040ed4e18": "completed owner=",
		"exec_f14209baebadf717": "paused owner=",
		"exec_1fad19940c1c7605": "error owner=",
		"exec_753e1e9ce80acf53": "running owner=",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("executions (-want +got):\n%s", diff)
	}
	log, err := s.Entries(ctx, "exec_f14209baebadf717")
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, e := range log {
		states = append(states, e.Kind.String()+" "+e.Connector+"."+e.Method+" "+e.State.String())
		if e.Reverts != 0 {
			t.Errorf("entry %d: reverts %d, want 0", e.Seq, e.Reverts)
		}
	}
	if diff := cmp.Diff([]string{"step codemode.step applied", "call notes.listNotes applied", "call notes.createNote pending"}, states); diff != "" {
		t.Errorf("log of a paused run (-want +got):\n%s", diff)
	}
	if sn, err := s.GetSnippet(ctx, "count_notes"); err != nil || sn.FromExecution != "exec_df94e90040ed4e18" {
		t.Errorf("snippet: %+v, %v", sn, err)
	}
	owners, err := s.Owners(ctx)
	if err != nil || len(owners) != 0 {
		t.Errorf("owners = %v, %v; want none", owners, err)
	}
	// The migrated file takes the new fields.
	stuck, err := s.GetExecution(ctx, "exec_753e1e9ce80acf53")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecoverExecution(ctx, &codemode.Execution{ID: stuck.ID, Status: codemode.StatusError, Error: "interrupted"}, codemode.StatusRunning, "", "unknown"); err != nil {
		t.Fatalf("recover the run the old release left running: %v", err)
	}
	if err := s.RegisterOwner(ctx, codemode.Owner{ID: "own_new", Host: "h", PID: 1}); err != nil {
		t.Fatal(err)
	}
	// Opening it again changes nothing.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again := openAt(t, path, Options{})
	if x, err := again.GetExecution(ctx, stuck.ID); err != nil || x.Status != codemode.StatusError {
		t.Errorf("after reopening: %+v, %v", x, err)
	}
}
