package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// fixtureTools is what the fixture server lists, in its order.
type toolSummary struct {
	Name, SourceName string
	RequiresApproval bool
	HasOutputSchema  bool
}

func summarizeTools(tools []connectors.Tool) []toolSummary {
	out := make([]toolSummary, len(tools))
	for i, t := range tools {
		out[i] = toolSummary{t.Name, t.SourceName, t.RequiresApproval, t.OutputSchema != nil}
	}
	return out
}

func toolByName(t *testing.T, tools []connectors.Tool, name string) connectors.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool named %q", name)
	return connectors.Tool{}
}

func TestToolsOverEveryTransport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			tools, err := c.Tools(context.Background())
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			want := []toolSummary{
				{"add_tool", "add-tool", false, false},
				{"ask", "ask", false, false},
				{"counter", "counter", false, false},
				{"crash", "crash", false, false},
				{"delete_thing", "delete-thing", true, false},
				{"echo", "echo", false, false},
				{"environ", "environ", false, false},
				{"fail", "fail", false, false},
				{"get_sum", "get-sum", false, false},
				{"image", "image", false, false},
				{"lookup", "lookup", false, false},
				{"record_sum", "record-sum", false, false},
				{"slow", "slow", false, false},
				{"structured", "structured", false, true},
				{"uncount", "uncount", false, false},
			}
			if diff := cmp.Diff(want, summarizeTools(tools)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}

			sum := toolByName(t, tools, "get_sum")
			jsonEqual(t, sum.InputSchema, json.RawMessage(`{"type":"object","properties":{
				"a":{"type":"number","description":"first addend"},
				"b":{"type":"number","description":"second addend"}},"required":["a","b"]}`))
			if sum.Annotations.ReadOnly == nil || !*sum.Annotations.ReadOnly {
				t.Errorf("get_sum readOnlyHint = %v, want true", sum.Annotations.ReadOnly)
			}
			if sum.Description != "Adds two numbers." {
				t.Errorf("get_sum description = %q", sum.Description)
			}

			// Top-level keywords survive byte for byte (compacted).
			lookup := toolByName(t, tools, "lookup")
			if got, want := string(lookup.InputSchema), `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"Look up a thing by id or by name.","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"anyOf":[{"required":["id"]},{"required":["name"]}],"additionalProperties":false}`; got != want {
				t.Errorf("lookup input schema\n got %s\nwant %s", got, want)
			}

			structured := toolByName(t, tools, "structured")
			jsonEqual(t, structured.OutputSchema, json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["greeting","count"]}`))

			del := toolByName(t, tools, "delete_thing")
			if del.Annotations.Destructive == nil || !*del.Annotations.Destructive {
				t.Errorf("delete_thing destructiveHint = %v, want true", del.Annotations.Destructive)
			}

			name, version := c.ServerInfo()
			if name != "fixture-mcpserver" || version != "1.0.0" {
				t.Errorf("ServerInfo = %q, %q", name, version)
			}
			if got := c.Name(); got != "fx" {
				t.Errorf("Name = %q", got)
			}
			if got := c.Capabilities().Diagnostics; len(got) != 0 {
				t.Errorf("Diagnostics = %v, want none", got)
			}
		})
	}
}

func TestCallOverEveryTransport(t *testing.T) {
	tests := []struct {
		tool, args string
		want       connectors.Result
	}{
		{"get-sum", `{"a":40,"b":2}`, connectors.Result{Value: json.RawMessage(`42`)}},
		{"get-sum", `{"a":0.5,"b":0.25}`, connectors.Result{Value: json.RawMessage(`0.75`)}},
		{"echo", `{"message":"hello world"}`, connectors.Result{Value: json.RawMessage(`"hello world"`)}},
		{"echo", `{"message":" [1, {\"a\": true}] "}`, connectors.Result{Value: json.RawMessage(`[1,{"a":true}]`)}},
		{"echo", `{"message":""}`, connectors.Result{Value: json.RawMessage(`""`)}},
		{"structured", `{"name":"bob"}`, connectors.Result{Value: json.RawMessage(`{"count":2,"greeting":"hello bob","tags":["a","b"]}`)}},
		{"fail", `{"reason":"bad input"}`, connectors.Result{IsError: true, Message: "boom: bad input"}},
		{"delete-thing", `{"id":"t1"}`, connectors.Result{Value: json.RawMessage(`"deleted t1"`)}},
		{"image", ``, connectors.Result{Value: json.RawMessage(`[{"type":"text","text":"a red dot"},{"type":"image","mimeType":"image/png","data":"<96 bytes base64>"}]`)}},
		{"image", `null`, connectors.Result{Value: json.RawMessage(`[{"type":"text","text":"a red dot"},{"type":"image","mimeType":"image/png","data":"<96 bytes base64>"}]`)}},
		{"lookup", `{"id":7}`, connectors.Result{Value: json.RawMessage(`{"found":true,"query":{"id":7}}`)}},
		{"slow", `{"ms":1}`, connectors.Result{Value: json.RawMessage(`"slept 1ms"`)}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			for _, tt := range tests {
				got, err := c.Call(context.Background(), tt.tool, json.RawMessage(tt.args))
				if err != nil {
					t.Errorf("Call(%s, %s): %v", tt.tool, tt.args, err)
					continue
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Call(%s, %s) (-want +got):\n%s", tt.tool, tt.args, diff)
				}
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	tests := []struct {
		tool, args string
		unknown    bool
		wantErr    string
	}{
		{"nope", `{}`, true, `unknown tool "nope"`},
		{"get_sum", `{}`, true, `unknown tool "get_sum"`}, // Call takes source names
		{"echo", `[1]`, false, "arguments must be a JSON object"},
		{"echo", `"x"`, false, "arguments must be a JSON object"},
		{"echo", `{`, false, "arguments must be a JSON object"},
		{"echo", `{} {}`, false, "arguments must be a JSON object"},
		{"echo", ` {"a": 1} x`, false, "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		_, err := c.Call(context.Background(), tt.tool, json.RawMessage(tt.args))
		if err == nil {
			t.Errorf("Call(%s, %s) succeeded, want error", tt.tool, tt.args)
			continue
		}
		if got := errors.Is(err, connectors.ErrUnknownTool); got != tt.unknown {
			t.Errorf("Call(%s, %s): errors.Is(ErrUnknownTool) = %v, want %v (%v)", tt.tool, tt.args, got, tt.unknown, err)
		}
		if !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Call(%s, %s) error %q, want it to contain %q", tt.tool, tt.args, err, tt.wantErr)
		}
	}
}

func TestIncludeExclude(t *testing.T) {
	bin := fixture.MCPServer(t)
	tests := []struct {
		include, exclude []string
		want             []string
	}{
		{nil, nil, []string{"add_tool", "ask", "counter", "crash", "delete_thing", "echo", "environ", "fail", "get_sum", "image", "lookup", "record_sum", "slow", "structured", "uncount"}},
		{[]string{"get-*", "echo"}, nil, []string{"echo", "get_sum"}},
		{nil, []string{"*-*", "c*"}, []string{"ask", "echo", "environ", "fail", "image", "lookup", "slow", "structured", "uncount"}},
		{[]string{"*e*"}, []string{"delete-thing", "echo"}, []string{"counter", "environ", "get_sum", "image", "record_sum", "structured"}},
		{[]string{"no-such-tool"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.include, tt.exclude), func(t *testing.T) {
			c := dial(t, Config{Name: "fx", Command: bin, Include: tt.include, Exclude: tt.exclude})
			tools, err := c.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if !contains(tt.want, "fail") {
				// A tool left out cannot be called either.
				if _, err := c.Call(context.Background(), "fail", nil); !errors.Is(err, connectors.ErrUnknownTool) {
					t.Errorf("Call(excluded fail) = %v, want ErrUnknownTool", err)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPaginationIsFollowed(t *testing.T) {
	bin := fixture.MCPServer(t)
	all := dial(t, Config{Name: "fx", Command: bin})
	paged := dial(t, Config{Name: "fx", Command: bin, Args: []string{"-page-size", "3"}})
	want, err := all.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := paged.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 15 {
		t.Errorf("paged listing has %d tools, want 15", len(got))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged tools differ from unpaged (-unpaged +paged):\n%s", diff)
	}
	if err := paged.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	again, _ := paged.Tools(context.Background())
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("tools after Refresh differ (-before +after):\n%s", diff)
	}
}

func TestCallTimeout(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cfg := tr.config(t)
			cfg.CallTimeout = 300 * time.Millisecond
			c := dial(t, cfg)
			// Were the timeout not applied, the call would return its
			// answer after 10 s, without an error.
			_, err := c.Call(context.Background(), "slow", json.RawMessage(`{"ms":10000}`))
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Call(slow) error = %v, want DeadlineExceeded", err)
			}
			if !strings.Contains(err.Error(), "timed out after 300ms") {
				t.Errorf("error %q does not say it timed out after 300ms", err)
			}
			// The connection is still usable.
			got, err := c.Call(context.Background(), "get-sum", json.RawMessage(`{"a":1,"b":2}`))
			if err != nil || string(got.Value) != "3" {
				t.Errorf("Call(get-sum) after a timeout = %s, %v; want 3", got.Value, err)
			}
		})
	}
}

func TestCallHonoursContext(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the server works on the call (it reports "started");
	// were the cancellation not noticed, the call would return its
	// answer after 10 s.
	ctx = connectors.WithCallHook(ctx, &connectors.CallHook{OnProgress: func(msg string) {
		if msg == "started" {
			cancel()
		}
	}})
	_, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":10000}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Call(slow) error = %v, want context.Canceled", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for i := range 20 {
				wg.Go(func() {
					got, err := c.Call(context.Background(), "get-sum", json.RawMessage(fmt.Sprintf(`{"a":%d,"b":1000}`, i)))
					if err != nil {
						errs <- err
						return
					}
					if want := fmt.Sprint(i + 1000); string(got.Value) != want {
						errs <- fmt.Errorf("get-sum(%d) = %s, want %s", i, got.Value, want)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestEnvAndDirReachTheChild(t *testing.T) {
	dir := t.TempDir()
	c := dial(t, Config{
		Name:    "fx",
		Command: fixture.MCPServer(t),
		Env:     map[string]string{"FIXTURE_SIDE_EFFECTS": "effects.txt"}, // relative to Dir
		Dir:     dir,
	})
	for i, name := range []string{"x", "y", "x"} {
		got, err := c.Call(context.Background(), "counter", json.RawMessage(`{"name":"`+name+`"}`))
		if err != nil {
			t.Fatalf("Call(counter): %v", err)
		}
		if want := []string{"1", "1", "2"}[i]; string(got.Value) != want || got.IsError {
			t.Errorf("counter(%s) = %+v, want %s", name, got, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "effects.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "x\ny\nx\n"; got != want {
		t.Errorf("side-effect file = %q, want %q", got, want)
	}
}

func TestHTTPEnvIsInherited(t *testing.T) {
	file := filepath.Join(t.TempDir(), "effects.txt")
	c := dial(t, Config{Name: "fx", URL: fixture.StartHTTP(t, false, "FIXTURE_SIDE_EFFECTS="+file)})
	got, err := c.Call(context.Background(), "counter", json.RawMessage(`{"name":"h"}`))
	if err != nil || string(got.Value) != "1" {
		t.Fatalf("counter = %+v, %v; want 1", got, err)
	}
}

func TestStderrIsLoggedAtDebug(t *testing.T) {
	rec := &recorder{}
	c, err := Dial(context.Background(), Config{
		Name:    "fx",
		Command: fixture.MCPServer(t),
		Logger:  slog.New(rec),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Close waits for the child's stderr to be read to the end.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := rec.find(func(r map[string]string) bool { return r["msg"] == "server stderr" })
	want := []map[string]string{{
		"msg": "server stderr", "level": "DEBUG", "connector": "fx",
		"line": "fixture mcpserver starting on stdio",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stderr records (-want +got):\n%s", diff)
	}
}

func TestToolListChanges(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			cfg := tr.config(t)
			cfg.OnToolsChanged = func() { changed <- struct{}{} }
			c := dial(t, cfg)
			if _, err := c.Call(context.Background(), "added-later", nil); !errors.Is(err, connectors.ErrUnknownTool) {
				t.Fatalf("Call(added-later) before it exists = %v, want ErrUnknownTool", err)
			}
			got, err := c.Call(context.Background(), "add-tool", json.RawMessage(`{"name":"added-later"}`))
			if err != nil || string(got.Value) != `"added added-later"` {
				t.Fatalf("Call(add-tool) = %+v, %v", got, err)
			}
			fixture.Wait(t, "the call of OnToolsChanged", changed)
			if err := c.Refresh(context.Background()); err != nil {
				t.Fatalf("Refresh: %v", err)
			}
			tools, _ := c.Tools(context.Background())
			toolByName(t, tools, "added_later")
			got, err = c.Call(context.Background(), "added-later", nil)
			if err != nil || string(got.Value) != `"I am added-later"` {
				t.Errorf("Call(added-later) = %+v, %v", got, err)
			}
		})
	}
}

func TestCloseDuringACall(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cfg := tr.config(t)
			cfg.Logger = testLogger(t)
			c, err := Dial(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			started := make(chan struct{})
			var once sync.Once
			ctx := connectors.WithCallHook(context.Background(), &connectors.CallHook{OnProgress: func(string) { once.Do(func() { close(started) }) }})
			go func() {
				_, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":20000}`))
				errc <- err
			}()
			<-started // the server works on the call
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := fixture.Wait(t, "the end of the call in flight after Close", errc); err == nil {
				t.Error("the call in flight succeeded")
			}
		})
	}
}

// ForwardUnknown calls a tool the server did not list by name, unless
// Include or Exclude leave the name out or it is not a plausible name.
func TestForwardUnknown(t *testing.T) {
	c := dial(t, Config{Name: "fx", Command: fixture.MCPServer(t), ForwardUnknown: true, Exclude: []string{"fail", "secret*"}})
	ctx := context.Background()
	if _, err := c.Call(ctx, "add-tool", json.RawMessage(`{"name":"late"}`)); err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, "late", nil)
	if err != nil || res.IsError || string(res.Value) != `"I am late"` {
		t.Fatalf("Call(late) = %+v, %v", res, err)
	}
	// A name the server lacks reaches it; its answer is the tool's error.
	res, err = c.Call(ctx, "nope", nil)
	if err == nil && !res.IsError {
		t.Errorf("Call(nope) = %+v, want the server's error", res)
	}
	for _, name := range []string{"fail", "secret_x", "bad\nname", strings.Repeat("x", 200)} {
		if _, err := c.Call(ctx, name, nil); !errors.Is(err, connectors.ErrUnknownTool) {
			t.Errorf("Call(%q) = %v, want ErrUnknownTool", name, err)
		}
	}
}

// A server that answers server/discover, a method it does not know, with
// an empty result (as some test servers answer every unknown method) is
// not taken for a 2026-07-28 server: the connector performs the
// initialize handshake and sees the server's name.
func TestEmptyDiscoverMeansTheHandshake(t *testing.T) {
	f, url := startFake(t, map[string]string{"": `{"tools":[]}`}, nil)
	f.mu.Lock()
	f.discover = `{}`
	f.mu.Unlock()
	c := dial(t, Config{Name: "fake", URL: url})
	if name, _ := c.ServerInfo(); name != "fake" {
		t.Errorf("server name %q, want fake (from initialize)", name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.methods, "initialize") {
		t.Errorf("methods sent: %v, want an initialize", f.methods)
	}
}

// A part of an error's message repeated at once (mcp-go's client and its
// transport both say "transport error") is said once, and the error still
// wraps the original.
func TestSaidOnce(t *testing.T) {
	base := errors.New("transport closed")
	err := saidOnce(fmt.Errorf("initialize: transport error: transport error: %w", base))
	if err.Error() != "initialize: transport error: transport closed" || !errors.Is(err, base) {
		t.Fatalf("saidOnce = %q (wraps the original: %v)", err, errors.Is(err, base))
	}
	if plain := errors.New("a: b: a"); saidOnce(plain) != plain {
		t.Error("an error with nothing repeated at once was changed")
	}
}
