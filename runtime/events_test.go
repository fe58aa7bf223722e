package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	codemode "github.com/codemode-mcp/codemode-mcp"
)

// recordingObserver keeps the events it hears, as short strings.
type recordingObserver struct {
	mu     sync.Mutex
	events []string
}

func (o *recordingObserver) Event(e codemode.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := e.Kind.String()
	if e.Connector != "" {
		s += fmt.Sprintf(" %d %s.%s", e.Seq, e.Connector, e.Method)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	o.events = append(o.events, s)
}

func (o *recordingObserver) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.events
	o.events = nil
	return out
}

// TestObserverHearsTheRun: a request's observer hears the run start, each
// call it makes (with what the downstream reports of its progress), the
// pause, the approval and the end; replayed calls are not reported again.
func TestObserverHearsTheRun(t *testing.T) {
	e := newEnv(t, setup{mcp: true})
	obs := &recordingObserver{}
	ctx := codemode.WithObserver(context.Background(), obs)
	code := `async () => {
		await fx.slow({ ms: 40 });
		await kv.put({ key: "k", value: "v" });
		throw new Error("boom");
	}`
	o, err := e.rt.Execute(ctx, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusPaused)
	want := []string{
		"started",
		"call 1 fx.slow", "progress 1 fx.slow: started", "progress 1 fx.slow: halfway",
		"paused: call 2 (kv.put) awaits approval",
	}
	if diff := cmp.Diff(want, obs.take()); diff != "" {
		t.Errorf("events of the first pass (-want +got):\n%s", diff)
	}
	o, err = e.rt.Approve(ctx, o.ExecutionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, o, codemode.StatusError)
	want = []string{"approved", "call 2 kv.put", "failed: " + o.Error}
	if diff := cmp.Diff(want, obs.take()); diff != "" {
		t.Errorf("events after approval (-want +got):\n%s", diff)
	}
	// Without an observer nothing is reported (and nothing breaks).
	mustStatus(t, e.run("1 + 1", nil), codemode.StatusCompleted)
}
