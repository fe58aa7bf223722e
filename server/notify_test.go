package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

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

// wait waits until p progress and l log notifications have come (or 10 s).
func (n *notifications) wait(t *testing.T, p, l int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		n.mu.Lock()
		done := len(n.progress) >= p && len(n.logs) >= l
		n.mu.Unlock()
		if done {
			return
		}
		select {
		case <-n.more:
		case <-timeout:
			t.Fatalf("waited for %d progress and %d log notifications", p, l)
		}
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
