package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/console"
)

// hold is a native connector whose one read-only method, wait, tells
// entered that it began and returns once release is closed.
type hold struct {
	entered chan struct{}
	release chan struct{}
}

func (*hold) Name() string                          { return "hold" }
func (*hold) Close() error                          { return nil }
func (*hold) Capabilities() connectors.Capabilities { return connectors.Capabilities{} }

func (*hold) Tools(context.Context) ([]connectors.Tool, error) {
	yes := true
	return []connectors.Tool{{Name: "wait", SourceName: "wait", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: connectors.Annotations{ReadOnly: &yes}}}, nil
}

func (h *hold) Call(ctx context.Context, _ string, _ json.RawMessage) (connectors.Result, error) {
	close(h.entered)
	select {
	case <-h.release:
		return connectors.Result{Value: json.RawMessage(`"released"`)}, nil
	case <-ctx.Done():
		return connectors.Result{}, ctx.Err()
	}
}

// Approving a run started as a task answers once the run is approved: its
// pass goes on in the background (here it waits in hold.wait, which
// returns only after the answer came), as a task answered through its
// client does, instead of keeping the browser's request for up to the
// task timeout. The run's page then shows it running, and it completes.
func TestApprovingATaskReturnsWhileItRuns(t *testing.T) {
	h := &hold{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnvWith(t, console.Options{Token: token}, catalog.Source{Connector: h})
	o, err := e.rt.Start(e.ctx, `async () => { await notes.createNote({ text: "task" }); return await hold.wait({}); }`, codemode.Task{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	id := o.ExecutionID
	if _, err := e.rt.Await(e.ctx, id, 0, func(x *codemode.Execution) bool { return x.Status != codemode.StatusRunning }); err != nil {
		t.Fatal(err)
	}
	if got := e.status(id); got != codemode.StatusPaused {
		t.Fatalf("the task is %s, want paused", got)
	}
	b := e.browser()
	b.login(token)
	csrf, digest := form(t, b.get("/"), id)
	if digest == "" {
		t.Fatal("no approve form for the task")
	}
	p := b.do("POST", "/runs/"+id+"/approve", url.Values{"csrf": {csrf}, "digest": {digest}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/runs/"+id {
		t.Fatalf("approve: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if run := b.get("/runs/" + id); !strings.Contains(run.body, "Approved: the run is running.") {
		t.Errorf("the run page does not show the task running:\n%s", run.body)
	}
	<-h.entered // (the pass goes on, and reaches hold.wait)
	close(h.release)
	x, err := e.rt.Await(e.ctx, id, 0, func(x *codemode.Execution) bool { return x.Status != codemode.StatusRunning })
	if err != nil || x.Status != codemode.StatusCompleted || string(x.Result) != `"released"` {
		t.Fatalf("after the release: %v, %+v", err, x)
	}
}
