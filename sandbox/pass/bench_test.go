package pass

import (
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
	"github.com/codemode-mcp/codemode-mcp/sandbox/source"
)

// BenchmarkTrivialRun is `1 + 1` end to end through Run (normalised code
// cached, as on a replay).
func BenchmarkTrivialRun(b *testing.B) {
	e := newExecutor(b)
	for b.Loop() {
		sandboxtest.BenchRun(b, e, "1 + 1")
	}
}

// BenchmarkTrivialRunUncached adds esbuild and compilation to every run.
func BenchmarkTrivialRunUncached(b *testing.B) {
	e := NewInProcess(InProcessOptions{})
	e.cache = source.NewCache(0, 0)
	b.Cleanup(func() { _ = e.Close() })
	for b.Loop() {
		sandboxtest.BenchRun(b, e, "1 + 1")
	}
}

// BenchmarkHostCall measures one awaited connector call from JavaScript:
// a program making 1000 sequential calls, reported per call.
func BenchmarkHostCall(b *testing.B) {
	e := newExecutor(b)
	sandboxtest.BenchCalls(b, e, sandboxtest.SequentialCalls)
}

// BenchmarkHostCallConcurrent is BenchmarkHostCall with the 1000 calls in
// one Promise.all.
func BenchmarkHostCallConcurrent(b *testing.B) {
	e := newExecutor(b)
	sandboxtest.BenchCalls(b, e, sandboxtest.ConcurrentCalls)
}
