package worker

import (
	"testing"

	"github.com/codemode-mcp/codemode-mcp/sandbox/internal/sandboxtest"
)

// BenchmarkProcessTrivialRun is sandbox/pass's BenchmarkTrivialRun on the pool:
// the program crosses the pipe to a warm worker and its outcome comes back.
func BenchmarkProcessTrivialRun(b *testing.B) {
	e := newPool(b, Options{Size: 1})
	sandboxtest.BenchRun(b, e, "1 + 1") // warm the worker's cache
	for b.Loop() {
		sandboxtest.BenchRun(b, e, "1 + 1")
	}
}

// BenchmarkProcessHostCall is sandbox/pass's BenchmarkHostCall on the pool: each
// call is a round trip over the pipe to the parent's host.
func BenchmarkProcessHostCall(b *testing.B) {
	e := newPool(b, Options{Size: 1})
	sandboxtest.BenchRun(b, e, sandboxtest.SequentialCalls) // warm the worker's cache
	sandboxtest.BenchCalls(b, e, sandboxtest.SequentialCalls)
}

// BenchmarkProcessHostCallConcurrent is sandbox/pass's
// BenchmarkHostCallConcurrent on the pool.
func BenchmarkProcessHostCallConcurrent(b *testing.B) {
	e := newPool(b, Options{Size: 1})
	sandboxtest.BenchRun(b, e, sandboxtest.ConcurrentCalls) // warm the worker's cache
	sandboxtest.BenchCalls(b, e, sandboxtest.ConcurrentCalls)
}
