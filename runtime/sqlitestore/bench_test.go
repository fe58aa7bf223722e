package sqlitestore

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/runtime"
)

// BenchmarkLoggedCall measures one logged call: the entry inserted as
// executing, then updated to applied with its result.
func BenchmarkLoggedCall(b *testing.B) {
	for _, sync := range []string{"normal", "full"} {
		b.Run(sync, func(b *testing.B) {
			ctx := context.Background()
			s := openAt(b, filepath.Join(b.TempDir(), "bench.db"), Options{Synchronous: sync})
			if err := s.CreateExecution(ctx, newExecution("exec_bench", runtime.StatusRunning)); err != nil {
				b.Fatal(err)
			}
			result := json.RawMessage(`{"id":"note_0123456789abcdef","text":"hello","tags":["a","b"],"createdAt":"2026-03-01T12:00:00Z"}`)
			seq := 0
			for b.Loop() {
				seq++
				e := newEntry("exec_bench", seq, runtime.EntryExecuting)
				if err := s.InsertEntry(ctx, e); err != nil {
					b.Fatal(err)
				}
				e.State, e.Result = runtime.EntryApplied, result
				if err := s.UpdateEntry(ctx, e, runtime.EntryExecuting); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
