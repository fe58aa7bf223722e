package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/codemode-mcp/codemode-mcp/connectors"
)

// envTestWorker makes the test binary a worker process (see newPool).
const envTestWorker = "CODEMODE_SANDBOX_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(envTestWorker) == "1" {
		if err := RunWorker(context.Background(), slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox test worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// fakeHost is the Host interface's own test double: function fields decide
// the answers (nil ones have simple defaults) and every call is recorded.
type fakeHost struct {
	call       func(ctx context.Context, c Call) (json.RawMessage, error)
	stepResult func(ctx context.Context, s Step) (json.RawMessage, bool, error)
	stepDone   func(ctx context.Context, s Step, value json.RawMessage, errMsg string) error
	search     func(ctx context.Context, query string) (json.RawMessage, error)
	describe   func(ctx context.Context, path string) (json.RawMessage, error)
	snippet    func(ctx context.Context, name string, input json.RawMessage) (string, error)
	service    func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

	mu    sync.Mutex
	calls []Call
	done  []stepRecord
	log   []string // every host method called, in order: "call 1 notes.add", "stepResult 2 x", …

	snippetInputs []string // the input JSON of every Snippet call
}

type stepRecord struct {
	Step   Step
	Value  string
	ErrMsg string
}

func (h *fakeHost) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

func (h *fakeHost) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	h.record(fmt.Sprintf("call %d %s.%s", c.Seq, c.Connector, c.Method))
	// As the OpenAPI connector does once an answer starts to arrive: with
	// process isolation every reply then follows a msgSoon frame.
	connectors.Answering(ctx)
	if h.call != nil {
		return h.call(ctx, c)
	}
	return json.RawMessage(fmt.Sprintf(`{"seq":%d,"method":%q,"args":%s}`, c.Seq, c.Method, c.Args)), nil
}

func (h *fakeHost) StepResult(ctx context.Context, s Step) (json.RawMessage, bool, error) {
	h.record(fmt.Sprintf("stepResult %d %s", s.Seq, s.Name))
	if h.stepResult != nil {
		return h.stepResult(ctx, s)
	}
	return nil, false, nil
}

func (h *fakeHost) StepDone(ctx context.Context, s Step, value json.RawMessage, errMsg string) error {
	h.mu.Lock()
	h.done = append(h.done, stepRecord{s, string(value), errMsg})
	h.mu.Unlock()
	h.record(fmt.Sprintf("stepDone %d %s", s.Seq, s.Name))
	if h.stepDone != nil {
		return h.stepDone(ctx, s, value, errMsg)
	}
	return nil
}

// Service answers codemode.search, codemode.describe and codemode.run's
// lookup with the fields of the same name, and any other with service.
func (h *fakeHost) Service(ctx context.Context, sc ServiceCall) (json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(sc.Args, &a); err != nil {
		return nil, fmt.Errorf("fakeHost: arguments of %s: %v", sc.Name, err)
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
		if h.search != nil {
			return h.search(ctx, str(0))
		}
		return json.RawMessage(`{"results":[],"total":0}`), nil
	case "describe":
		h.record(fmt.Sprintf("describe %d %s", sc.Seq, str(0)))
		if h.describe != nil {
			return h.describe(ctx, str(0))
		}
		return json.RawMessage(`{"path":` + fmt.Sprintf("%q", str(0)) + `}`), nil
	case SnippetService:
		h.record("snippet " + str(0))
		h.mu.Lock()
		h.snippetInputs = append(h.snippetInputs, string(a[1]))
		h.mu.Unlock()
		if h.snippet == nil {
			return nil, fmt.Errorf("no snippet named %s", str(0))
		}
		code, err := h.snippet(ctx, str(0), a[1])
		if err != nil {
			return nil, err
		}
		return json.Marshal(code)
	}
	h.record(fmt.Sprintf("service %d %s %s", sc.Seq, sc.Name, sc.Args))
	if h.service != nil {
		return h.service(ctx, sc.Name, sc.Args)
	}
	return nil, fmt.Errorf("fakeHost: no service %s", sc.Name)
}

func (h *fakeHost) recordedCalls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

func (h *fakeHost) recordedLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

func (h *fakeHost) recordedSteps() []stepRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]stepRecord(nil), h.done...)
}

// testGlobals are the connectors of most tests.
var testGlobals = []Global{
	{Name: "notes", Methods: []string{"createNote", "deleteNote", "listNotes"}},
	{Name: "everything", Methods: []string{"add", "echo", "get_sum", "get_tiny_image"}},
}

// testServices are the host-backed codemode functions of most tests, as
// the runtime offers them.
var testServices = []Service{
	{Name: "search", Params: []Param{{Name: "query", String: true}}},
	{Name: "describe", Params: []Param{{Name: "path", String: true}}},
}

// newExecutor returns an executor closed when the test ends.
func newExecutor(t testing.TB) *InProcess {
	t.Helper()
	e := NewInProcess(InProcessOptions{})
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// runCode runs code with testGlobals and limits, failing the test on an
// internal error.
func runCode(t testing.TB, e *InProcess, h Host, code string, limits Limits) Outcome {
	t.Helper()
	o, err := e.Run(context.Background(), Program{Code: code, Globals: testGlobals, Services: testServices, Limits: limits}, h)
	if err != nil {
		t.Fatalf("Run(%q): internal error: %v", code, err)
	}
	return o
}

// wantCompleted fails unless o completed with the JSON value want.
func wantCompleted(t testing.TB, code string, o Outcome, want string) {
	t.Helper()
	if o.Status != Completed {
		t.Fatalf("Run(%q): status %v, error %q, want completed", code, o.Status, o.Error)
	}
	if !jsonEqual(t, o.Result, want) {
		t.Fatalf("Run(%q): result %s, want %s", code, o.Result, want)
	}
}

func jsonEqual(t testing.TB, got json.RawMessage, want string) bool {
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
