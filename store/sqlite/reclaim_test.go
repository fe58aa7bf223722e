package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// fileSize is the size of the database file once the WAL is written back
// into it.
func fileSize(t *testing.T, s *Store) int64 {
	t.Helper()
	if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// addRun stores a completed run of n steps whose values take size bytes
// each.
func addRun(t *testing.T, s *Store, id string, n, size int, at time.Time) {
	t.Helper()
	ctx := context.Background()
	e := &codemode.Execution{ID: id, Code: "x", Status: codemode.StatusCompleted, CreatedAt: at, UpdatedAt: at}
	if err := s.CreateExecution(ctx, e); err != nil {
		t.Fatal(err)
	}
	value := json.RawMessage(`"` + strings.Repeat("x", size-2) + `"`)
	var log []codemode.Entry
	for i := 1; i <= n; i++ {
		log = append(log, codemode.Entry{ExecutionID: id, Seq: i, Kind: codemode.KindStep, Connector: "codemode", Method: "step", Name: "s", Result: value, State: codemode.EntryApplied})
	}
	if err := s.WriteEntries(ctx, log, nil); err != nil {
		t.Fatal(err)
	}
}

// Pruning a large run gives its space back to the file system: the file
// shrinks to what the runs it keeps take, but for less than a step of
// free pages.
func TestPruneGivesTheSpaceBack(t *testing.T) {
	s := openTemp(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	addRun(t, s, "exec_large", 24, 1<<20, base)
	for i := range 5 {
		addRun(t, s, fmt.Sprintf("exec_small%d", i), 10, 1000, base.Add(time.Duration(i+1)*time.Minute))
	}
	before := fileSize(t, s)
	if before < 24<<20 {
		t.Fatalf("the file takes %d bytes with a 24 MiB run", before)
	}
	n, err := s.PruneExecutions(context.Background(), 5)
	if err != nil || n != 1 {
		t.Fatalf("PruneExecutions = %d, %v; want the large run pruned", n, err)
	}
	after := fileSize(t, s)
	if limit := int64(reclaimStep*4096 + 1<<20); after > limit {
		t.Errorf("after pruning the 24 MiB run the file takes %d bytes (before: %d); want at most %d", after, before, limit)
	}
	for i := range 5 {
		if _, err := s.GetExecution(context.Background(), fmt.Sprintf("exec_small%d", i)); err != nil {
			t.Errorf("a kept run is gone: %v", err)
		}
	}
}

// A file made before the store gave space back (auto_vacuum NONE) is set
// up at Open, its data kept.
func TestOpenSetsAnOldFileUpToGiveSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "codemode.db")
	old, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addRun(t, old, "exec_old", 3, 100, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	conn, err := old.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA auto_vacuum = NONE", "VACUUM"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	if mode := autoVacuum(t, old); mode != 0 {
		t.Fatalf("the old file's auto_vacuum is %d, want 0 (NONE)", mode)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path, Options{})
	if mode := autoVacuum(t, s); mode != 2 {
		t.Errorf("auto_vacuum after Open = %d, want 2 (INCREMENTAL)", mode)
	}
	if log, err := s.Entries(context.Background(), "exec_old"); err != nil || len(log) != 3 {
		t.Errorf("the old file's run: %d entries, %v", len(log), err)
	}
}

func autoVacuum(t *testing.T, s *Store) int {
	t.Helper()
	var mode int
	if err := s.db.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}
