package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// scripted is an Executor that drives the Host directly, as a misbehaving or
// very concurrent sandbox could: it lets the engine's own guards be tested
// independently of the real sandbox's.
type scripted struct {
	run func(ctx context.Context, h sandbox.Host) sandbox.Outcome
}

func (s scripted) Run(ctx context.Context, p sandbox.Program, h sandbox.Host) (sandbox.Outcome, error) {
	out := s.run(ctx, h)
	out.Clock = p.Clock
	return out, nil
}

func (scripted) Close() error { return nil }

// Once a pass is stopped, every further call is refused with ErrStop and
// records nothing, even calls racing in from other goroutines.
func TestHostRefusesCallsAfterStop(t *testing.T) {
	e := newEnv(t, setup{})
	const n = 8
	var refused, other int
	exec := scripted{run: func(ctx context.Context, h sandbox.Host) sandbox.Outcome {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				<-start
				_, errs[i] = h.Call(ctx, sandbox.Call{Seq: i + 1, Connector: "kv", Method: "put", Args: json.RawMessage(fmt.Sprintf(`{"key":"k%d","value":"v"}`, i))})
			})
		}
		close(start)
		wg.Wait()
		// A later call, and a step, are refused too.
		_, err := h.Call(ctx, sandbox.Call{Seq: n + 1, Connector: "kv", Method: "add", Args: json.RawMessage(`{"key":"late"}`)})
		errs = append(errs, err)
		_, _, err = h.StepResult(ctx, sandbox.Step{Seq: n + 2, Name: "late"})
		errs = append(errs, err)
		var stop error
		for _, err := range errs {
			switch {
			case errors.Is(err, sandbox.ErrStop):
				refused++
				if stop == nil {
					stop = err
				}
			default:
				other++
			}
		}
		return sandbox.Outcome{Status: sandbox.Stopped, Stop: stop}
	}}
	rt, err := runtime.New(e.ctx, runtime.Options{Store: e.store, Executor: exec, Sources: []catalog.Source{{Connector: e.kv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o, err := rt.Execute(e.ctx, "scripted", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	if refused != n+2 || other != 0 {
		t.Errorf("%d calls refused with ErrStop and %d otherwise answered; want all %d refused", refused, other, n+2)
	}
	if len(o.Pending) != 1 {
		t.Errorf("pending = %+v, want exactly one", o.Pending)
	}
	if got := e.log(o.ExecutionID); len(got) != 1 {
		t.Errorf("log = %v, want only the one pending call", got)
	}
	if e.kv.count("put") != 0 || e.kv.count("add") != 0 {
		t.Error("a refused call reached the connector")
	}
}

// A call whose pass is cancelled mid-flight stays executing (its effect is
// unknown) and runs again on replay: at-least-once for that window only.
func TestCancelledCallRunsAgainOnReplay(t *testing.T) {
	e := newEnv(t, setup{})
	entered, release := make(chan struct{}), make(chan struct{})
	pass := 0
	exec := scripted{run: func(ctx context.Context, h sandbox.Host) sandbox.Outcome {
		pass++
		if pass == 1 {
			// The gated call pauses the run while the slow add is in flight,
			// and the pass's context ends before the add returns.
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := h.Call(cctx, sandbox.Call{Seq: 1, Connector: "kv", Method: "add", Args: json.RawMessage(`{"key":"a"}`)})
				done <- err
			}()
			<-entered
			_, stop := h.Call(ctx, sandbox.Call{Seq: 2, Connector: "kv", Method: "put", Args: json.RawMessage(`{"key":"b","value":"v"}`)})
			cancel()
			close(release)
			<-done
			return sandbox.Outcome{Status: sandbox.Stopped, Stop: stop}
		}
		for seq, m := range []string{"add", "put"} {
			args := `{"key":"a"}`
			if m == "put" {
				args = `{"key":"b","value":"v"}`
			}
			if _, err := h.Call(ctx, sandbox.Call{Seq: seq + 1, Connector: "kv", Method: m, Args: json.RawMessage(args)}); err != nil {
				return sandbox.Outcome{Status: sandbox.Failed, Error: err.Error()}
			}
		}
		return sandbox.Outcome{Status: sandbox.Completed, Result: json.RawMessage(`"ok"`)}
	}}
	e.kv.hook = func(ctx context.Context, tool string) error {
		if tool == "add" && pass == 1 {
			close(entered)
			<-release
			return ctx.Err()
		}
		return nil
	}
	rt, err := runtime.New(e.ctx, runtime.Options{Store: e.store, Executor: exec, Sources: []catalog.Source{{Connector: e.kv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o, err := rt.Execute(e.ctx, "scripted", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	if diff := cmp.Diff([]string{"1 kv.add executing", "2 kv.put pending"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log after the cut-off call (-want +got):\n%s", diff)
	}
	a, err := rt.Approve(e.ctx, o.ExecutionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, a, codemode.StatusCompleted)
	if got := e.kv.count("add"); got != 2 {
		t.Errorf("add ran %d times, want 2 (once cut off, once on replay)", got)
	}
	if got := e.kv.count("put"); got != 1 {
		t.Errorf("put ran %d times, want 1", got)
	}
}

// Calls the catalog does not know are thrown into the program with the
// nearest names, and logged nowhere.
func TestHostUnknownMethodAndConnector(t *testing.T) {
	e := newEnv(t, setup{})
	var errs []error
	exec := scripted{run: func(ctx context.Context, h sandbox.Host) sandbox.Outcome {
		for i, c := range [][2]string{{"kv", "gett"}, {"kvv", "get"}} {
			_, err := h.Call(ctx, sandbox.Call{Seq: i + 1, Connector: c[0], Method: c[1], Args: json.RawMessage(`{}`)})
			errs = append(errs, err)
		}
		return sandbox.Outcome{Status: sandbox.Completed, Result: json.RawMessage(`null`)}
	}}
	rt, err := runtime.New(e.ctx, runtime.Options{Store: e.store, Executor: exec, Sources: []catalog.Source{{Connector: e.kv}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	o, err := rt.Execute(e.ctx, "scripted", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusCompleted)
	want := []string{
		"kv.gett is not a method of kv; nearest: get, put, add, fail, noop",
		"unknown connector kvv; available: kv",
	}
	for i, w := range want {
		if errs[i] == nil || errs[i].Error() != w || errors.Is(errs[i], sandbox.ErrStop) {
			t.Errorf("call %d: err = %v, want %q (thrown, not a stop)", i+1, errs[i], w)
		}
	}
	if got := e.log(o.ExecutionID); len(got) != 0 {
		t.Errorf("log = %v, want nothing", got)
	}
}
