package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// notifications collects what a client is sent; an in-process client
// hears them on a goroutine of its own, so tests wait for them (wait).
type notifications struct {
	mu       sync.Mutex
	progress []string
	logs     []string
	more     chan struct{} // signalled on every notification
}

func (n *notifications) handle(m mcp.JSONRPCNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, _ := json.Marshal(m.Params.AdditionalFields) // in process, params are Go values
	var f struct {
		Message string
		Level   string
		Data    struct{ Event string }
	}
	_ = json.Unmarshal(b, &f)
	switch m.Method {
	case string(mcp.MethodNotificationProgress):
		n.progress = append(n.progress, f.Message)
	case string(mcp.MethodNotificationMessage):
		n.logs = append(n.logs, f.Level+" "+f.Data.Event)
	}
	select {
	case n.more <- struct{}{}:
	default:
	}
}

// wait waits until p progress and l log notifications have come.
func (n *notifications) wait(t *testing.T, p, l int) {
	t.Helper()
	for {
		n.mu.Lock()
		done := len(n.progress) >= p && len(n.logs) >= l
		n.mu.Unlock()
		if done {
			return
		}
		fixture.Wait(t, fmt.Sprintf("%d progress and %d log notifications", p, l), n.more)
	}
}

func (n *notifications) take() (progress, logs []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	progress, logs, n.progress, n.logs = n.progress, n.logs, nil, nil
	return progress, logs
}

func TestProgressAndLogNotifications(t *testing.T) {
	c := connect(t, newServerWith(t, server.Options{}), nil)
	n := &notifications{more: make(chan struct{}, 1)}
	c.OnNotification(n.handle)
	ctx := context.Background()
	run := func(code string, progressToken any) map[string]any {
		req := mcp.CallToolRequest{}
		req.Params.Name = "codemode"
		req.Params.Arguments = map[string]any{"code": code}
		if progressToken != nil {
			req.Params.Meta = &mcp.Meta{ProgressToken: progressToken}
		}
		if _, err := c.CallTool(ctx, req); err != nil {
			t.Fatal(err)
		}
		return nil
	}

	// No level set and no token: nothing is sent.
	run("await notes.listNotes({})", nil)
	if p, l := n.take(); len(p)+len(l) != 0 {
		t.Errorf("unasked notifications: progress %q, logs %q", p, l)
	}

	// Progress for each call, when asked.
	run("await notes.listNotes({}); await notes.listNotes({ tag: 'x' }); 1", "tok-1")
	n.wait(t, 2, 0)
	if p, _ := n.take(); !cmp.Equal(p, []string{"notes.listNotes (call 1)", "notes.listNotes (call 2)"}) {
		t.Errorf("progress %q", p)
	}

	// Run events at the level the client chose.
	setLevel := func(l mcp.LoggingLevel) {
		req := mcp.SetLevelRequest{}
		req.Params.Level = l
		if err := c.SetLevel(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	setLevel(mcp.LoggingLevelInfo)
	run("1 + 1", nil)
	run("await notes.createNote({ text: 'x' })", nil)
	run("throw new Error('no')", nil)
	n.wait(t, 0, 6)
	if _, l := n.take(); !cmp.Equal(l, []string{"info started", "info completed", "info started", "notice paused", "info started", "error failed"}) {
		t.Errorf("logs at info: %q", l)
	}
	setLevel(mcp.LoggingLevelError)
	run("1 + 1", nil)
	run("throw new Error('no')", nil)
	n.wait(t, 0, 1)
	if _, l := n.take(); !cmp.Equal(l, []string{"error failed"}) {
		t.Errorf("logs at error: %q", l)
	}
}

// TestWrongArgumentTypesNameTheField: a tool error naming the field, not
// an internal error.
func TestWrongArgumentTypesNameTheField(t *testing.T) {
	c := connect(t, newServerWith(t, server.Options{}), nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"codemode", map[string]any{"code": 42}, "/code"},
		{"codemode_reject", map[string]any{"executionId": "exec_1", "seq": "two"}, "/seq"},
		{"codemode_executions", map[string]any{"limit": true}, "/limit"},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name = tc.tool
		req.Params.Arguments = tc.args
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Errorf("%s %v: protocol error %v", tc.tool, tc.args, err)
			continue
		}
		text := res.Content[0].(mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, tc.want) || strings.Contains(text, "internal") {
			t.Errorf("%s %v: isError %v, %q; want a tool error naming %s", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
}

// Over streamable HTTP with the session's GET stream open (as the
// TypeScript SDK's client keeps it), every run's log notifications reach
// the client, from whichever of the two streams took them (mcp-go's
// session has one channel of notifications that both drain; see
// sentCounter). The client reads the two streams on two goroutines, so the
// order of arrival is not asserted: the transport cannot promise it
// (measured: a run's two events arrive swapped about 2 times in 100
// whether or not the server waits for each to be flushed before sending
// the next).
func TestLogNotificationsOverStreamableHTTPWithAGetStream(t *testing.T) {
	base := serve(t, newServerWith(t, server.Options{}), server.TransportHTTP)
	tr, err := transport.NewStreamableHTTP(base+server.PathMCP, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, client.NewClient(tr), mcp.ClientCapabilities{})
	ctx := context.Background()
	var mu sync.Mutex
	got := map[string][]string{} // execution: its events as they came
	n := 0
	arrived := make(chan struct{}, 1024)
	c.OnNotification(func(m mcp.JSONRPCNotification) {
		if m.Method != string(mcp.MethodNotificationMessage) {
			return
		}
		b, _ := json.Marshal(m.Params.AdditionalFields)
		var f struct {
			Data struct{ Event, ExecutionID string }
		}
		_ = json.Unmarshal(b, &f)
		mu.Lock()
		got[f.Data.ExecutionID] = append(got[f.Data.ExecutionID], f.Data.Event)
		n++
		mu.Unlock()
		select {
		case arrived <- struct{}{}:
		default: // more than the test waits for: the comparison below tells
		}
	})
	lvl := mcp.SetLevelRequest{}
	lvl.Params.Level = mcp.LoggingLevelInfo
	if err := c.SetLevel(ctx, lvl); err != nil {
		t.Fatal(err)
	}
	const runs = 40
	want := map[string][]string{}
	for i := range runs {
		code, events := "1 + 1", []string{"completed", "started"}
		if i%2 == 1 {
			code, events = "throw new Error('no')", []string{"failed", "started"}
		}
		out, _ := call(t, c, "codemode", map[string]any{"code": code})
		id, _ := out["executionId"].(string)
		if id == "" {
			t.Fatalf("run %d: %v", i, out)
		}
		want[id] = events
	}
	for range 2 * runs {
		fixture.Wait(t, "the log events of every run", arrived)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range got {
		slices.Sort(got[id])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log events per execution (-want +got):\n%s", diff)
	}
}
