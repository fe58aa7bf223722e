package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/store/storetest"
)

// eachSync runs bench as a sub-benchmark per synchronous level, on a new
// store holding the running execution exec_bench.
func eachSync(b *testing.B, bench func(b *testing.B, ctx context.Context, s *Store)) {
	for _, sync := range []string{"normal", "full"} {
		b.Run(sync, func(b *testing.B) {
			ctx := context.Background()
			s := openAt(b, filepath.Join(b.TempDir(), "bench.db"), Options{Synchronous: sync})
			if err := s.CreateExecution(ctx, storetest.NewExecution("exec_bench", codemode.StatusRunning)); err != nil {
				b.Fatal(err)
			}
			bench(b, ctx, s)
		})
	}
}

// BenchmarkLoggedCall measures one logged call: the entry inserted as
// executing, then updated to applied with its result.
func BenchmarkLoggedCall(b *testing.B) {
	eachSync(b, func(b *testing.B, ctx context.Context, s *Store) {
		result := json.RawMessage(`{"id":"note_0123456789abcdef","text":"hello","tags":["a","b"],"createdAt":"2026-03-01T12:00:00Z"}`)
		seq := 0
		for b.Loop() {
			seq++
			e := storetest.NewEntry("exec_bench", seq, codemode.EntryExecuting)
			if err := s.InsertEntry(ctx, e); err != nil {
				b.Fatal(err)
			}
			e.State, e.Result = codemode.EntryApplied, result
			if err := s.UpdateEntry(ctx, e, codemode.EntryExecuting); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoggedCallDeferred measures one logged call as the runtime
// writes it: the entry inserted as executing in the same transaction as the
// previous call's result (WriteEntries), so one commit per call.
func BenchmarkLoggedCallDeferred(b *testing.B) {
	eachSync(b, func(b *testing.B, ctx context.Context, s *Store) {
		result := json.RawMessage(`{"id":"note_0123456789abcdef","text":"hello","tags":["a","b"],"createdAt":"2026-03-01T12:00:00Z"}`)
		var done []codemode.EntryUpdate
		seq := 0
		for b.Loop() {
			seq++
			e := storetest.NewEntry("exec_bench", seq, codemode.EntryExecuting)
			if err := s.WriteEntries(ctx, []codemode.Entry{e}, done); err != nil {
				b.Fatal(err)
			}
			e.State, e.Result = codemode.EntryApplied, result
			done = append(done[:0], codemode.EntryUpdate{Entry: e, From: codemode.EntryExecuting})
		}
	})
}

// BenchmarkHousekeeping measures what Runtime.housekeeping asks of the store
// on every Execute once the retention limit is reached: a prune that finds
// nothing to delete (50 terminal runs kept, a few running and paused ones),
// then the list of paused runs for TTL expiry.
func BenchmarkHousekeeping(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, filepath.Join(b.TempDir(), "bench.db"), Options{})
	const keep = 50
	for i := range keep + 6 {
		status := codemode.StatusCompleted
		switch {
		case i >= keep+3:
			status = codemode.StatusPaused
		case i >= keep:
			status = codemode.StatusRunning
		}
		if err := s.CreateExecution(ctx, storetest.NewExecution(fmt.Sprintf("exec_%03d", i), status)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("prune", func(b *testing.B) {
		for b.Loop() {
			n, err := s.PruneExecutions(ctx, keep)
			if err != nil || n != 0 {
				b.Fatalf("PruneExecutions = %d, %v; want 0, nil", n, err)
			}
		}
	})
	b.Run("paused", func(b *testing.B) {
		for b.Loop() {
			paused, err := s.ListExecutions(ctx, codemode.ExecutionFilter{Status: codemode.StatusPaused})
			if err != nil || len(paused) != 3 {
				b.Fatalf("ListExecutions(paused) = %d executions, %v; want 3", len(paused), err)
			}
		}
	})
}

// BenchmarkJournal measures one journal record (codemode.Journaler) of a
// call with small arguments: what a side-effecting call pays twice (its
// entry before it is sent, its result before the program sees it) instead
// of a commit; with synchronous FULL each record is also flushed to disk.
func BenchmarkJournal(b *testing.B) {
	eachSync(b, func(b *testing.B, ctx context.Context, s *Store) {
		e := storetest.NewEntry("exec_bench", 1, codemode.EntryExecuting)
		e.CreatedAt, e.UpdatedAt = time.Now(), time.Now()
		for b.Loop() {
			e.Seq++
			if err := s.Journal(ctx, "exec_bench", []codemode.Entry{e}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
