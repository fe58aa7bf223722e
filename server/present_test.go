package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	codemode "github.com/codemode-mcp/codemode-mcp"
	"github.com/codemode-mcp/codemode-mcp/server"
)

// callRaw calls a tool and returns its text content, which must be JSON,
// decoded as an outcome, with the whole response's size in bytes.
func callRaw(t *testing.T, c *client.Client, tool string, args map[string]any) (codemode.Outcome, int) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	resp, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	var o codemode.Outcome
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		t.Fatalf("%s: text is not an outcome: %v: %.200s", tool, err, text)
	}
	return o, len(resp)
}

// The acceptance test of issue 4: 200,000 console lines or a 5 MB result
// reach the client as a response under 200 KB, still valid JSON, with a
// visible truncation marker.
func TestLargeOutputReachesTheClientCut(t *testing.T) {
	const maxChars = 24000
	c := connect(t, newServerTimeout(t, server.Options{MaxResultChars: maxChars}, 0, 2*time.Minute), nil)
	for _, tc := range []struct {
		name, code string
		check      func(t *testing.T, o codemode.Outcome)
	}{
		{"200,000 console lines", `async () => {
			for (let i = 0; i < 200000; i++) console.log("processing item " + i + " of 200000");
			return "done";
		}`, func(t *testing.T, o codemode.Outcome) {
			if string(o.Result) != `"done"` || o.Logs[0] != "processing item 0 of 200000" {
				t.Errorf("result %s, first line %q", o.Result, o.Logs[0])
			}
			if last := o.Logs[len(o.Logs)-1]; !strings.HasPrefix(last, "… ") || !strings.HasSuffix(last, " more log lines truncated") {
				t.Errorf("last line %q, want the truncation marker", last)
			}
			if n := len(o.Logs) - 1; n < 500 {
				t.Errorf("only %d lines kept", n)
			}
		}},
		{"5 MB result", `async () => Array.from({ length: 50000 }, (_, i) => ({ id: i, name: "item-" + i, text: "x".repeat(80) }))`,
			func(t *testing.T, o codemode.Outcome) {
				var items []json.RawMessage
				if err := json.Unmarshal(o.Result, &items); err != nil {
					t.Fatalf("result is not an array: %v", err)
				}
				if len(items) < 50 || !strings.HasSuffix(string(items[len(items)-1]), ` more items"`) {
					t.Errorf("%d items kept, the last %s; want the truncation marker", len(items), items[len(items)-1])
				}
				var first struct{ Text string }
				if err := json.Unmarshal(items[0], &first); err != nil || first.Text != strings.Repeat("x", 80) {
					t.Errorf("first item %s is not whole", items[0])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, size := callRaw(t, c, "codemode", map[string]any{"code": tc.code})
			if o.Status != codemode.StatusCompleted {
				t.Fatalf("status %s: %s", o.Status, o.Error)
			}
			if size >= 200_000 {
				t.Errorf("tool response is %d bytes, want under 200 KB", size)
			}
			if n := measure(t, o.Result) + measure(t, o.Logs) + len(o.Error); n > maxChars {
				t.Errorf("outcome measures %d characters, budget %d", n, maxChars)
			}
			tc.check(t, o)
		})
	}
}

// An outcome within MaxResultChars is untouched, and 0 shows everything.
func TestResultLimitLeavesSmallOutcomes(t *testing.T) {
	code := `async () => { console.log("a", {b: 1}); return {items: [1, 2, 3], text: "x".repeat(5000)} }`
	for _, maxChars := range []int{0, 24000} {
		o, _ := callRaw(t, connect(t, newServerLimited(t, maxChars), nil), "codemode", map[string]any{"code": code})
		want := `{"items":[1,2,3],"text":"` + strings.Repeat("x", 5000) + `"}`
		if string(o.Result) != want || len(o.Logs) != 1 || o.Logs[0] != `a {"b":1}` {
			t.Errorf("maxChars %d: outcome changed: %.100s %q", maxChars, o.Result, o.Logs)
		}
	}
}

// Error messages are cut with the console lines; approvals and rollbacks
// return cut outcomes too; the arguments of a pending action are shown
// cut, like results (valid JSON of the same shape, with a marker), in the
// paused outcome and in codemode_pending, and approving runs the call with
// the whole arguments as logged.
func TestResultLimitOnEveryOutcome(t *testing.T) {
	c := connect(t, newServerLimited(t, 500), nil)
	o, _ := callRaw(t, c, "codemode", map[string]any{"code": `async () => { throw new Error("bad " + "y".repeat(5000)) }`})
	if o.Status != codemode.StatusError || len(o.Error) > 500 || !strings.Contains(o.Error, "…[truncated ") {
		t.Errorf("status %s, error of %d bytes: %.80q…", o.Status, len(o.Error), o.Error)
	}

	o, _ = callRaw(t, c, "codemode", map[string]any{"code": `async () => {
		for (let i = 0; i < 100; i++) console.log("line " + i);
		const n = await notes.createNote({ text: "v".repeat(100000) });
		return { length: n.text.length, padding: "z".repeat(5000) };
	}`})
	if o.Status != codemode.StatusPaused {
		t.Fatalf("status %s: %s", o.Status, o.Error)
	}
	if n := measure(t, o.Logs); n > 500 || !strings.HasSuffix(o.Logs[len(o.Logs)-1], "more log lines truncated") {
		t.Errorf("paused outcome logs measure %d: %q", n, o.Logs)
	}
	listed, _ := call(t, c, "codemode_pending", map[string]any{})
	b, _ := json.Marshal(listed["pending"])
	var pending []codemode.PendingAction
	if err := json.Unmarshal(b, &pending); err != nil {
		t.Fatal(err)
	}
	for what, ps := range map[string][]codemode.PendingAction{"outcome": o.Pending, "codemode_pending": pending} {
		if len(ps) != 1 {
			t.Fatalf("%s: %d pending actions", what, len(ps))
		}
		var v struct{ Text string }
		if err := json.Unmarshal(ps[0].Args, &v); err != nil {
			t.Fatalf("%s: args are not JSON: %v: %.100s", what, err, ps[0].Args)
		}
		if measure(t, ps[0].Args) > 500 || !strings.Contains(v.Text, "truncated") {
			t.Errorf("%s: args of %d bytes: %.120s", what, len(ps[0].Args), ps[0].Args)
		}
	}
	a, _ := callRaw(t, c, "codemode_approve", map[string]any{"executionId": o.ExecutionID})
	if a.Status != codemode.StatusCompleted {
		t.Fatalf("approve: status %s: %s", a.Status, a.Error)
	}
	if n := measure(t, a.Result) + measure(t, a.Logs); n > 500 {
		t.Errorf("approved outcome measures %d", n)
	}
	var got struct{ Length int }
	if err := json.Unmarshal(a.Result, &got); err != nil || got.Length != 100000 {
		t.Errorf("the approved call stored a note of %d characters, want the whole 100000 (%v)", got.Length, err)
	}
	rb, _ := callRaw(t, c, "codemode_rollback", map[string]any{"executionId": o.ExecutionID})
	if n := measure(t, rb.Logs); rb.Status != codemode.StatusRolledBack || n > 500 {
		t.Errorf("rollback: status %s, logs measure %d", rb.Status, n)
	}
}
