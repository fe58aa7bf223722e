package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/store/sqlstore"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
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
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if latest := storetest.SchemaVersion(t, migrationFiles); version != latest {
		t.Errorf("schema version after Open = %d, want %d", version, latest)
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

// A database of schema 2, whose notes the notes connector kept in a table
// of its own, opens with those notes moved to the records every store
// keeps, in their order (ties by insertion), tags intact.
func TestSchema2NotesMoveToRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "codemode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := sqlstore.Migrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{ms[0].SQL, ms[1].SQL, `PRAGMA user_version = 2`,
		// The notes connector's table as releases of schema 2 made it.
		`CREATE TABLE IF NOT EXISTS notes (
			id         TEXT    PRIMARY KEY NOT NULL,
			text       TEXT    NOT NULL,
			tags       TEXT    NOT NULL DEFAULT '[]',
			created_at INTEGER NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS notes_created_at ON notes (created_at)`,
		`INSERT INTO notes VALUES ('note_1', 'first', '["a","b"]', 1000), ('note_3', 'tie, older', '[]', 2000), ('note_2', 'tie, newer "q"', '["x"]', 2000)`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path, Options{})
	var got []string
	err = s.ScanRecords(ctx, "notes", func(r connectors.Record) bool {
		got = append(got, r.ID+" "+string(r.Value)+" "+strconv.FormatInt(r.CreatedAt.UnixNano(), 10))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`note_2 {"text":"tie, newer \"q\"","tags":["x"]} 2000`,
		`note_3 {"text":"tie, older","tags":[]} 2000`,
		`note_1 {"text":"first","tags":["a","b"]} 1000`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after migration (-want +got):\n%s", diff)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'notes'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the old notes table is still there (%d, %v)", n, err)
	}
}

// A file whose migration fails halfway (a hand edit left what a later
// statement of it trips on) is left as it was, the statements of that
// migration before the failure undone, and the error names the migration
// and what failed. Here an old file's note whose tags are not JSON: the
// move of the notes to the records (0003) fails after it created the
// records table.
func TestAFailedMigrationLeavesTheFileAsItWas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	ms, err := sqlstore.Migrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	rawExec(t, path, ms[0].SQL, ms[1].SQL, `PRAGMA user_version = 2`,
		`CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]', created_at INTEGER NOT NULL)`,
		`INSERT INTO notes VALUES ('note_1', 'fine', '["a"]', 1000), ('note_2', 'edited by hand', 'a, b', 2000)`)
	before := schemaOf(t, path)
	_, err = Open(t.Context(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "migration 0003_records.sql: ") || !strings.Contains(err.Error(), "malformed JSON") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open = %v; want an error naming the file, migration 0003_records.sql and the malformed JSON", err)
	}
	if diff := cmp.Diff(before, schemaOf(t, path)); diff != "" {
		t.Errorf("the file after the failed migration (-before +after):\n%s", diff)
	}
}

// schemaOf is what the file at path holds: its version, every table's and
// index's SQL, and the notes.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	out := []string{"version " + version}
	for _, q := range []string{`SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name`, `SELECT id || ' ' || tags FROM notes ORDER BY id`} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
