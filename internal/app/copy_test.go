package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/pgtest"
)

func openTestStore(t *testing.T, location string) Store {
	t.Helper()
	st, err := OpenStore(context.Background(), config.Default(), location, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// snapshot is everything CopyStore copies, read back from a store.
type snapshot struct {
	Executions []*codemode.Execution
	Logs       map[string][]codemode.Entry
	Snippets   []codemode.Snippet
	Records    map[string][]connectors.Record // by kind (recordKinds)
}

func read(t *testing.T, st Store) snapshot {
	t.Helper()
	ctx := context.Background()
	var s snapshot
	var err error
	if s.Executions, err = st.ListExecutions(ctx, codemode.ExecutionFilter{}); err != nil {
		t.Fatal(err)
	}
	s.Logs = map[string][]codemode.Entry{}
	for _, e := range s.Executions {
		if s.Logs[e.ID], err = st.Entries(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	if s.Snippets, err = st.ListSnippets(ctx); err != nil {
		t.Fatal(err)
	}
	s.Records = map[string][]connectors.Record{}
	for _, kind := range recordKinds {
		if err := st.ScanRecords(ctx, kind, func(r connectors.Record) bool { s.Records[kind] = append(s.Records[kind], r); return true }); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// fill writes executions in every state with logs, a snippet and notes.
func fill(t *testing.T, st Store) {
	t.Helper()
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for i, status := range []codemode.ExecStatus{codemode.StatusCompleted, codemode.StatusPaused, codemode.StatusError, codemode.StatusRolledBack} {
		e := &codemode.Execution{
			ID: "exec_" + status.String(), Code: "async () => 1", Status: status,
			Result: json.RawMessage(`{"n":1}`), Logs: []string{"log " + status.String()},
			Connectors: map[string]string{"notes": "sha256:x"}, Clock: codemode.Clock{Seed: int64(i), Times: []int64{1, 2}},
			CreatedAt: base.Add(time.Duration(i%2) * time.Minute), // ties: the order of insertion decides
		}
		if err := st.CreateExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		created := e.UpdatedAt
		e.UpdatedAt = base.Add(time.Hour + time.Duration(i)*time.Second)
		if err := st.UpdateExecution(ctx, e, status, created); err != nil {
			t.Fatal(err)
		}
		var log []codemode.Entry
		for seq := 1; seq <= 3; seq++ {
			log = append(log, codemode.Entry{ExecutionID: e.ID, Seq: seq, Kind: codemode.KindCall, Connector: "notes", Method: "createNote",
				Args: json.RawMessage(`{"text":"hi"}`), Result: json.RawMessage(`{"id":"note_1"}`), State: codemode.EntryApplied,
				CreatedAt: base.Add(time.Duration(seq) * time.Second), UpdatedAt: base.Add(time.Duration(seq) * 2 * time.Second)})
		}
		if err := st.WriteEntries(ctx, log, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SaveSnippet(ctx, codemode.Snippet{Name: "count", Code: "async () => 2", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), FromExecution: "exec_completed", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	// Three records of every kind a built-in connector keeps.
	for _, kind := range recordKinds {
		for i, id := range []string{"a", "b", "c"} {
			if err := st.PutRecord(ctx, connectors.Record{Kind: kind, ID: id, Value: json.RawMessage(`{"id":"` + id + `"}`), CreatedAt: base.Add(time.Duration(i/2) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// CopyStore copies a SQLite log whole, to PostgreSQL and to another
// SQLite file, and a second copy changes nothing; a running run stops it.
func TestCopyStore(t *testing.T) {
	ctx := context.Background()
	src := openTestStore(t, filepath.Join(t.TempDir(), "src.db"))
	fill(t, src)
	want := read(t, src)
	for _, tc := range []struct {
		name string
		to   func(t *testing.T) string
	}{
		{"to SQLite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "dst.db") }},
		{"to PostgreSQL", func(t *testing.T) string { return pgtest.NewDatabase(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := openTestStore(t, tc.to(t))
			n, err := CopyStore(ctx, dst, src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Copied{Executions: 4, Entries: 12, Snippets: 1, Records: 3 * len(recordKinds)}, n); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, read(t, dst)); diff != "" {
				t.Errorf("copy (-source +copy):\n%s", diff)
			}
			n, err = CopyStore(ctx, dst, src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Copied{Snippets: 1, SkippedExecutions: 4, SkippedRecords: 3 * len(recordKinds)}, n); diff != "" {
				t.Errorf("second copy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, read(t, dst)); diff != "" {
				t.Errorf("after a second copy (-source +copy):\n%s", diff)
			}
		})
	}
	if err := src.CreateExecution(ctx, &codemode.Execution{ID: "exec_live", Code: "x", Status: codemode.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	_, err := CopyStore(ctx, openTestStore(t, filepath.Join(t.TempDir(), "dst.db")), src)
	if err == nil || !strings.Contains(err.Error(), "exec_live is running") {
		t.Errorf("copy with a running run: %v, want a refusal naming it", err)
	}
}
