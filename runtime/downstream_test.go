package runtime_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
)

// A downstream stdio server that crashes during a call fails that run with
// a clear error; it is back for the next run.
func TestDownstreamCrashIsBackForTheNextRun(t *testing.T) {
	e := newEnv(t, setup{mcp: true, noKV: true})
	o := e.run(`async () => await fx.crash({})`, nil)
	mustStatus(t, o, codemode.StatusError)
	const want = "fx.crash failed: fx: the MCP server exited (status 3) during crash; it will be restarted on the next call"
	if !strings.Contains(o.Error, want) {
		t.Errorf("error %q\nwant it to contain %q", o.Error, want)
	}
	if diff := cmp.Diff([]string{"1 fx.crash error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	o = e.run(`async () => await fx.echo({ message: "back" })`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if string(o.Result) != `"back"` {
		t.Errorf("result %s", o.Result)
	}
}

// A 60 s downstream call is cut by the run's timeout: the run ends timed
// out (not with the call's answer, 60 s later), the downstream request is
// cancelled, and the next run works on the same connection.
func TestRunTimeoutCutsASlowDownstreamCall(t *testing.T) {
	logs := &logRecorder{}
	const timeout = 1500 * time.Millisecond
	e := newEnv(t, setup{mcp: true, noKV: true, limits: sandbox.Limits{Timeout: timeout}, fxLogger: slog.New(logs)})
	o := e.run(`async () => await fx.slow({ ms: 60000 })`, nil)
	mustStatus(t, o, codemode.StatusError)
	if !strings.Contains(o.Error, "time") {
		t.Errorf("error %q does not say the run timed out", o.Error)
	}
	// The call's result was never recorded: it is settled as an error.
	if diff := cmp.Diff([]string{"1 fx.slow error"}, e.log(o.ExecutionID)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	logs.await(t, "told the server to cancel a request")

	o = e.run(`async () => await fx.echo({ message: "next" })`, nil)
	mustStatus(t, o, codemode.StatusCompleted)
	if logs.has("restarted the MCP server") {
		t.Error("the server was restarted; the connection should have survived the timeout")
	}
}

// logRecorder is a slog handler that keeps record messages.
type logRecorder struct {
	mu    sync.Mutex
	msgs  []string
	added chan struct{} // closed (and replaced) when a record comes; guarded by mu
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	if r.added != nil {
		close(r.added)
		r.added = nil
	}
	return nil
}

// await waits until msg is logged, waking on each record.
func (r *logRecorder) await(t *testing.T, msg string) {
	t.Helper()
	for {
		r.mu.Lock()
		if r.foundLocked(msg) {
			r.mu.Unlock()
			return
		}
		if r.added == nil {
			r.added = make(chan struct{})
		}
		added := r.added
		r.mu.Unlock()
		fixture.Wait(t, fmt.Sprintf("the log line %q", msg), added)
	}
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) has(msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.foundLocked(msg)
}

func (r *logRecorder) foundLocked(msg string) bool {
	for _, m := range r.msgs {
		if m == msg {
			return true
		}
	}
	return false
}
