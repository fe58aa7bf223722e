// Package sandboxtest is what the tests of the sandbox's executors share:
// the Host test double, the connectors and services most tests offer, and
// helpers that run a program and check its outcome. The in-process
// executor's tests (sandbox/pass) and the worker pool's (sandbox/worker,
// which compare the pool with the in-process executor) both use it.
package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// Host is the sandbox.Host interface's own test double: the On fields
// decide the answers (nil ones have simple defaults) and every call is
// recorded. It is safe for concurrent use, as a Host must be.
type Host struct {
	OnCall       func(ctx context.Context, c sandbox.Call) (json.RawMessage, error)
	OnStepResult func(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error)
	OnSearch     func(ctx context.Context, query string) (json.RawMessage, error)
	OnSnippet    func(ctx context.Context, name string, input json.RawMessage) (string, error)
	OnService    func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

	mu    sync.Mutex
	calls []sandbox.Call
	done  []StepRecord
	log   []string // every host method called, in order: "call 1 notes.add", "stepResult 2 x", …

	snippetInputs []string // the input JSON of every Snippet call
}

// StepRecord is one StepDone the Host was told of.
type StepRecord struct {
	Step   sandbox.Step
	Value  string
	ErrMsg string
}

func (h *Host) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

// Call records c and answers with OnCall, or with c's sequence number,
// method and arguments.
func (h *Host) Call(ctx context.Context, c sandbox.Call) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	h.record(fmt.Sprintf("call %d %s.%s", c.Seq, c.Connector, c.Method))
	if h.OnCall != nil {
		return h.OnCall(ctx, c)
	}
	return json.RawMessage(fmt.Sprintf(`{"seq":%d,"method":%q,"args":%s}`, c.Seq, c.Method, c.Args)), nil
}

// StepResult answers with OnStepResult, or says the step has not run.
func (h *Host) StepResult(ctx context.Context, s sandbox.Step) (json.RawMessage, bool, error) {
	h.record(fmt.Sprintf("stepResult %d %s", s.Seq, s.Name))
	if h.OnStepResult != nil {
		return h.OnStepResult(ctx, s)
	}
	return nil, false, nil
}

// StepDone records the step's value or failure.
func (h *Host) StepDone(_ context.Context, s sandbox.Step, value json.RawMessage, errMsg string) error {
	h.mu.Lock()
	h.done = append(h.done, StepRecord{s, string(value), errMsg})
	h.mu.Unlock()
	h.record(fmt.Sprintf("stepDone %d %s", s.Seq, s.Name))
	return nil
}

// Service answers codemode.search and codemode.run's lookup with
// OnSearch and OnSnippet, codemode.describe with the path it was given,
// and any other with OnService.
func (h *Host) Service(ctx context.Context, sc sandbox.ServiceCall) (json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(sc.Args, &a); err != nil {
		return nil, fmt.Errorf("sandboxtest.Host: arguments of %s: %v", sc.Name, err)
	}
	str := func(i int) string {
		var s string
		if i < len(a) {
			_ = json.Unmarshal(a[i], &s)
		}
		return s
	}
	switch sc.Name {
	case "search":
		h.record(fmt.Sprintf("search %d %s", sc.Seq, str(0)))
		if h.OnSearch != nil {
			return h.OnSearch(ctx, str(0))
		}
		return json.RawMessage(`{"results":[],"total":0}`), nil
	case "describe":
		h.record(fmt.Sprintf("describe %d %s", sc.Seq, str(0)))
		return json.RawMessage(`{"path":` + fmt.Sprintf("%q", str(0)) + `}`), nil
	case sandbox.SnippetService:
		h.record("snippet " + str(0))
		h.mu.Lock()
		h.snippetInputs = append(h.snippetInputs, string(a[1]))
		h.mu.Unlock()
		if h.OnSnippet == nil {
			return nil, fmt.Errorf("no snippet named %s", str(0))
		}
		code, err := h.OnSnippet(ctx, str(0), a[1])
		if err != nil {
			return nil, err
		}
		return json.Marshal(code)
	}
	h.record(fmt.Sprintf("service %d %s %s", sc.Seq, sc.Name, sc.Args))
	if h.OnService != nil {
		return h.OnService(ctx, sc.Name, sc.Args)
	}
	return nil, fmt.Errorf("sandboxtest.Host: no service %s", sc.Name)
}

// Calls returns the connector calls made, in the order they came.
func (h *Host) Calls() []sandbox.Call { return clone(h, &h.calls) }

// Log returns every host method called, in order: "call 1 notes.add",
// "stepResult 2 x", "search 3 q", "snippet name"…
func (h *Host) Log() []string { return clone(h, &h.log) }

// SnippetInputs returns the input JSON of every lookup of a snippet
// (codemode.run), in order.
func (h *Host) SnippetInputs() []string { return clone(h, &h.snippetInputs) }

// Steps returns the steps recorded by StepDone.
func (h *Host) Steps() []StepRecord { return clone(h, &h.done) }

// clone returns a copy of *s, one of h's records, read under h.mu.
func clone[T any](h *Host, s *[]T) []T {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*s)
}

// Globals are the connectors of most tests.
var Globals = []sandbox.Global{
	{Name: "notes", Methods: []string{"createNote", "deleteNote", "listNotes"}},
	{Name: "everything", Methods: []string{"add", "echo", "get_sum", "get_tiny_image"}},
}

// Services are the host-backed codemode functions of most tests, as
// the runtime offers them.
var Services = []sandbox.Service{
	{Name: "search", Params: []sandbox.Param{{Name: "query", String: true}}},
	{Name: "describe", Params: []sandbox.Param{{Name: "path", String: true}}},
}

// WantCompleted fails unless o completed with the JSON value want.
func WantCompleted(t testing.TB, code string, o sandbox.Outcome, want string) {
	t.Helper()
	if o.Status != sandbox.Completed {
		t.Fatalf("Run(%q): status %v, error %q, want completed", code, o.Status, o.Error)
	}
	if !JSONEqual(t, o.Result, want) {
		t.Fatalf("Run(%q): result %s, want %s", code, o.Result, want)
	}
}

// JSONEqual reports whether got is the JSON value want, whatever their
// spacing and key order.
func JSONEqual(t testing.TB, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("result %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q is not JSON: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

// Run runs code on e with Globals and Services, failing the test on an
// internal error.
func Run(t testing.TB, e sandbox.Executor, h sandbox.Host, code string, limits sandbox.Limits) sandbox.Outcome {
	t.Helper()
	o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: Globals, Services: Services, Limits: limits}, h)
	if err != nil {
		t.Fatalf("Run(%q): internal error: %v", code, err)
	}
	return o
}

// benchHost answers every call at once with a constant.
type benchHost struct{ Host }

func (*benchHost) Call(context.Context, sandbox.Call) (json.RawMessage, error) {
	return json.RawMessage(`{"ok":true}`), nil
}

// The programs of the host call benchmarks: HostCalls connector calls,
// awaited one after another or all at once in a Promise.all.
const (
	HostCalls       = 1000
	SequentialCalls = "for (let i = 0; i < 1000; i++) { await notes.listNotes({ i }) }"
	ConcurrentCalls = "await Promise.all(Array.from({ length: 1000 }, (_, i) => notes.listNotes({ i })))"
)

// BenchRun runs code with Globals on e, every connector call answered at
// once, failing the benchmark unless it completes.
func BenchRun(b *testing.B, e sandbox.Executor, code string) {
	b.Helper()
	o, err := e.Run(context.Background(), sandbox.Program{Code: code, Globals: Globals}, &benchHost{})
	if err != nil || o.Status != sandbox.Completed {
		b.Fatalf("Run: %v %v %q", err, o.Status, o.Error)
	}
}

// CloseDuringRun closes e while a run is under way (it has made its first
// connector call, then runs rest, which must not end by itself): the run
// must end as failed, "canceled", and a Run after Close must fail with
// sandbox.ErrClosed.
func CloseDuringRun(t testing.TB, e sandbox.Executor, rest string) {
	t.Helper()
	done := make(chan sandbox.Outcome)
	started := make(chan struct{})
	h := &Host{OnCall: func(context.Context, sandbox.Call) (json.RawMessage, error) {
		close(started)
		return json.RawMessage(`{}`), nil
	}}
	go func() {
		o, _ := e.Run(context.Background(), sandbox.Program{Code: "await notes.listNotes({});\n" + rest, Globals: Globals}, h)
		done <- o
	}()
	<-started // the run is under way
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if o := <-done; o.Status != sandbox.Failed || o.Error != "canceled" {
		t.Errorf("run in progress at Close: %v %q", o.Status, o.Error)
	}
	if _, err := e.Run(context.Background(), sandbox.Program{Code: "1"}, &Host{}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// BenchCalls runs code (SequentialCalls or ConcurrentCalls) on e for the
// benchmark's loop and reports the time per connector call.
func BenchCalls(b *testing.B, e sandbox.Executor, code string) {
	b.Helper()
	start := time.Now()
	for b.Loop() {
		BenchRun(b, e, code)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*HostCalls), "ns/call")
}

// Closed registers the Close of e for the end of the test, failing it if
// Close fails, and returns e.
func Closed[E sandbox.Executor](t testing.TB, e E) E {
	t.Helper()
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// LocalTime is a program reading a Date's local time in every way, and
// LocalTimeUTC its value when local time is UTC, whatever the process's TZ.
const (
	LocalTime = `const d = new Date(Date.UTC(2026, 0, 2, 23, 4, 5));
[d.getHours(), d.getDate(), d.getTimezoneOffset(), d.toString(), d.toTimeString(), d.toLocaleString(),
 new Date(2026, 0, 2).getTime(), Date.parse("2026-01-02T00:00:00")]`
	LocalTimeUTC = `[23, 2, 0, "Fri Jan 02 2026 23:04:05 GMT+0000 (UTC)", "23:04:05 GMT+0000 (UTC)", "01/02/2026, 23:04:05", 1767312000000, 1767312000000]`
)
