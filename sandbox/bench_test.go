package sandbox

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// benchHost answers every call at once with a constant.
type benchHost struct{ fakeHost }

func (*benchHost) Call(context.Context, Call) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":true}`), nil
}

func benchRun(b *testing.B, e Executor, code string) {
	b.Helper()
	o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals}, &benchHost{})
	if err != nil || o.Status != Completed {
		b.Fatalf("Run: %v %v %q", err, o.Status, o.Error)
	}
}

// BenchmarkTrivialRun is `1 + 1` end to end through Run (normalised code
// cached, as on a replay).
func BenchmarkTrivialRun(b *testing.B) {
	e := newExecutor(b)
	for b.Loop() {
		benchRun(b, e, "1 + 1")
	}
}

// BenchmarkTrivialRunUncached adds esbuild and compilation to every run.
func BenchmarkTrivialRunUncached(b *testing.B) {
	e := NewInProcess(InProcessOptions{CacheSize: -1})
	b.Cleanup(func() { _ = e.Close() })
	for b.Loop() {
		benchRun(b, e, "1 + 1")
	}
}

const hostCalls = 1000

// BenchmarkHostCall measures one awaited connector call from JavaScript:
// a program making 1000 sequential calls, reported per call.
func BenchmarkHostCall(b *testing.B) {
	e := newExecutor(b)
	code := "for (let i = 0; i < 1000; i++) { await notes.listNotes({ i }) }"
	start := time.Now()
	for b.Loop() {
		benchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*hostCalls), "ns/call")
}

// BenchmarkHostCallConcurrent is BenchmarkHostCall with the 1000 calls in
// one Promise.all.
func BenchmarkHostCallConcurrent(b *testing.B) {
	e := newExecutor(b)
	code := "await Promise.all(Array.from({ length: 1000 }, (_, i) => notes.listNotes({ i })))"
	start := time.Now()
	for b.Loop() {
		benchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*hostCalls), "ns/call")
}

// BenchmarkProcessTrivialRun is BenchmarkTrivialRun on the process pool:
// the program crosses the pipe to a warm worker and its outcome comes back.
func BenchmarkProcessTrivialRun(b *testing.B) {
	e := newPool(b, ProcessOptions{Size: 1})
	benchRun(b, e, "1 + 1") // warm the worker's cache
	for b.Loop() {
		benchRun(b, e, "1 + 1")
	}
}

// BenchmarkProcessHostCall is BenchmarkHostCall on the process pool: each
// call is a round trip over the pipe to the parent's host.
func BenchmarkProcessHostCall(b *testing.B) {
	e := newPool(b, ProcessOptions{Size: 1})
	code := "for (let i = 0; i < 1000; i++) { await notes.listNotes({ i }) }"
	benchRun(b, e, code)
	start := time.Now()
	for b.Loop() {
		benchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*hostCalls), "ns/call")
}

// BenchmarkProcessHostCallConcurrent is BenchmarkHostCallConcurrent on the
// process pool.
func BenchmarkProcessHostCallConcurrent(b *testing.B) {
	e := newPool(b, ProcessOptions{Size: 1})
	code := "await Promise.all(Array.from({ length: 1000 }, (_, i) => notes.listNotes({ i })))"
	benchRun(b, e, code)
	start := time.Now()
	for b.Loop() {
		benchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*hostCalls), "ns/call")
}
