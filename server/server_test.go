package server_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// The runtime is the engine the server drives.
var _ server.Engine = (*rt.Runtime)(nil)

// newServer builds a server on a real SQLite file with the notes connector
// and the in-process sandbox; everything is closed when the test ends.
func newServer(t testing.TB, elicitation bool) *server.Server {
	t.Helper()
	return newServerWith(t, server.Options{Elicitation: elicitation})
}

func newServerWith(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	return newServerRT(t, opts, 0)
}

// newServerLimited is a server with MaxResultChars maxChars.
func newServerLimited(t testing.TB, maxChars int) *server.Server {
	t.Helper()
	return newServerRT(t, server.Options{}, maxChars)
}

// newServerRT builds a server; prepare, if given, runs on the store and
// the notes connector before the runtime starts (as a process that wrote
// the database earlier).
func newServerRT(t testing.TB, opts server.Options, maxChars int, prepare ...func(*sqlite.Store, *notes.Notes)) *server.Server {
	t.Helper()
	return newServerTimeout(t, opts, maxChars, 5*time.Second, prepare...)
}

// newServerTimeout is newServerRT with passes bounded by timeout.
func newServerTimeout(t testing.TB, opts server.Options, maxChars int, timeout time.Duration, prepare ...func(*sqlite.Store, *notes.Notes)) *server.Server {
	t.Helper()
	return newServerOf(t, opts, maxChars, rt.Options{Limits: sandbox.Limits{Timeout: timeout}}, prepare...)
}

// newServerOf is newServerRT over a runtime with ro's options (its store,
// executor and sources are the test's).
func newServerOf(t testing.TB, opts server.Options, maxChars int, ro rt.Options, prepare ...func(*sqlite.Store, *notes.Notes)) *server.Server {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "codemode.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := notes.New(notes.Name, st)
	for _, p := range prepare {
		p(st, n)
	}
	ex := pass.NewInProcess(pass.InProcessOptions{})
	ro.Store, ro.Executor, ro.Sources = st, ex, []catalog.Source{{Connector: n}}
	r, err := rt.New(ctx, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		ex.Close()
		n.Close()
		st.Close()
	})
	opts.Version = "test"
	// An Options.Runtime that wraps an engine (a recording one) is given
	// the real runtime to wrap.
	if w, ok := opts.Runtime.(interface{ wrap(server.Engine) }); ok {
		w.wrap(r)
	} else {
		opts.Runtime = r
	}
	// A real console (consoleOf) is built over the real runtime.
	if c, ok := opts.Console.(interface{ build(*rt.Runtime) }); ok {
		c.build(r)
	}
	if maxChars != 0 {
		opts.MaxResultChars = maxChars
	}
	return server.New(opts)
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

// connect starts an in-process MCP client; with an elicitation handler it
// declares the capability.
func connect(t testing.TB, s *server.Server, h elicitFunc) *client.Client {
	t.Helper()
	var opts []client.ClientOption
	caps := mcp.ClientCapabilities{}
	if h != nil {
		opts = append(opts, client.WithElicitationHandler(h))
		caps.Elicitation = &mcp.ElicitationCapability{}
	}
	c, err := client.NewInProcessClientWithOptions(s.MCP(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c, caps)
}

// start starts c, initializes its session declaring caps, and closes it
// when the test ends.
func start(t testing.TB, c *client.Client, caps mcp.ClientCapabilities) *client.Client {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	init.Params.Capabilities = caps
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// call invokes a tool and decodes its structured outcome.
func call(t testing.TB, c *client.Client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one text content, got %d", tool, len(res.Content))
	}
	text := res.Content[0].(mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s: text is not JSON: %v: %s", tool, err, text)
	}
	// structuredContent carries the same object as the text.
	sb, _ := json.Marshal(res.StructuredContent)
	var structured map[string]any
	if err := json.Unmarshal(sb, &structured); err != nil || len(structured) != len(out) {
		t.Fatalf("%s: structuredContent %s differs from text %s", tool, sb, text)
	}
	return out, res.IsError
}

func TestToolsAndDescription(t *testing.T) {
	c := connect(t, newServer(t, false), nil)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	want := map[string]struct{ readOnly, destructive bool }{
		"codemode":              {false, false},
		"codemode_pending":      {true, false},
		"codemode_approve":      {false, true},
		"codemode_reject":       {false, false},
		"codemode_rollback":     {false, true},
		"codemode_executions":   {true, false},
		"codemode_snippets":     {true, false},
		"codemode_save_snippet": {false, false},
	}
	if len(byName) != len(want) {
		t.Errorf("tools: got %d, want %d", len(byName), len(want))
	}
	for name, w := range want {
		tl, ok := byName[name]
		if !ok {
			t.Errorf("tool %s missing", name)
			continue
		}
		ro := tl.Annotations.ReadOnlyHint != nil && *tl.Annotations.ReadOnlyHint
		de := tl.Annotations.DestructiveHint != nil && *tl.Annotations.DestructiveHint
		if ro != w.readOnly || de != w.destructive {
			t.Errorf("%s: readOnly=%v destructive=%v, want %v %v", name, ro, de, w.readOnly, w.destructive)
		}
		wire, _ := json.Marshal(tl)
		var decoded struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(wire, &decoded); err != nil {
			t.Fatal(err)
		}
		schema := decoded.InputSchema
		if schema["type"] != "object" {
			t.Errorf("%s: input schema %v is not an object schema", name, schema)
		}
		if _, ok := schema["$schema"]; ok {
			t.Errorf("%s: input schema carries $schema", name)
		}
	}
	d := byName["codemode"].Description
	for _, s := range []string{"codemode.search", "codemode.step", "- notes (3 methods)", "declare const notes", "Math.random()"} {
		if !strings.Contains(d, s) {
			t.Errorf("codemode description lacks %q:\n%s", s, d)
		}
	}
}

func TestCodemodeOutcomes(t *testing.T) {
	c := connect(t, newServer(t, false), nil)
	out, isErr := call(t, c, "codemode", map[string]any{"code": "async () => { console.log({a: 1}); return (await notes.listNotes({})).notes.length }"})
	if isErr || out["status"] != "completed" || out["result"] != float64(0) || !strings.HasPrefix(out["executionId"].(string), "exec_") {
		t.Fatalf("completed outcome: %v (isError %v)", out, isErr)
	}
	if logs, _ := out["logs"].([]any); len(logs) != 1 || logs[0] != `{"a":1}` {
		t.Errorf("logs: %v", out["logs"])
	}
	out, isErr = call(t, c, "codemode", map[string]any{"code": "async () => {\n  throw new Error('boom')\n}"})
	if !isErr || out["status"] != "error" || !strings.Contains(out["error"].(string), "boom") {
		t.Fatalf("error outcome: %v (isError %v)", out, isErr)
	}
	out, isErr = call(t, c, "codemode", map[string]any{"code": "  "})
	if !isErr || !strings.Contains(out["error"].(string), `"code" is required`) {
		t.Fatalf("empty code: %v", out)
	}
}

func TestApprovalFlowThroughTools(t *testing.T) {
	c := connect(t, newServer(t, false), nil)
	out, isErr := call(t, c, "codemode", map[string]any{"code": "async () => (await notes.createNote({text: 'hello'})).text"})
	if isErr || out["status"] != "paused" {
		t.Fatalf("want paused, got %v", out)
	}
	id := out["executionId"].(string)
	pending := out["pending"].([]any)
	if len(pending) != 1 || pending[0].(map[string]any)["method"] != "createNote" {
		t.Fatalf("pending: %v", pending)
	}
	listed, _ := call(t, c, "codemode_pending", map[string]any{})
	if p := listed["pending"].([]any); len(p) != 1 || p[0].(map[string]any)["executionId"] != id {
		t.Fatalf("codemode_pending: %v", listed)
	}
	out, isErr = call(t, c, "codemode_approve", map[string]any{"executionId": id})
	if isErr || out["status"] != "completed" || out["result"] != "hello" {
		t.Fatalf("approve: %v", out)
	}
	out, isErr = call(t, c, "codemode_approve", map[string]any{"executionId": id})
	if !isErr || out["status"] != "completed" || !strings.Contains(out["error"].(string), "completed") {
		t.Fatalf("second approve must be a safe error naming the status: %v", out)
	}
	ex, _ := call(t, c, "codemode_executions", map[string]any{"limit": 5})
	first := ex["executions"].([]any)[0].(map[string]any)
	calls := first["calls"].([]any)
	if first["executionId"] != id || len(calls) != 1 || calls[0].(map[string]any)["state"] != "applied" {
		t.Fatalf("executions: %v", first)
	}
	saved, isErr := call(t, c, "codemode_save_snippet", map[string]any{"name": "hello_note", "executionId": id, "description": "creates a hello note"})
	if isErr {
		t.Fatalf("save snippet: %v", saved)
	}
	sn, _ := call(t, c, "codemode_snippets", map[string]any{})
	if s := sn["snippets"].([]any); len(s) != 1 || s[0].(map[string]any)["name"] != "hello_note" {
		t.Fatalf("snippets: %v", sn)
	}
	out, isErr = call(t, c, "codemode_rollback", map[string]any{"executionId": id})
	if isErr || out["status"] != "rolled_back" {
		t.Fatalf("rollback: %v", out)
	}
	left, _ := call(t, c, "codemode", map[string]any{"code": "(await notes.listNotes({})).notes.length"})
	if left["result"] != float64(0) {
		t.Fatalf("rollback left notes: %v", left)
	}
}

func TestRejectThroughTools(t *testing.T) {
	c := connect(t, newServer(t, false), nil)
	out, _ := call(t, c, "codemode", map[string]any{"code": "await notes.createNote({text: 'x'})"})
	id := out["executionId"].(string)
	out, isErr := call(t, c, "codemode_reject", map[string]any{"executionId": id})
	if isErr || out["status"] != "rejected" {
		t.Fatalf("reject: %v", out)
	}
	out, isErr = call(t, c, "codemode_approve", map[string]any{"executionId": id})
	if !isErr || out["status"] != "rejected" {
		t.Fatalf("approve after reject: %v", out)
	}
	out, isErr = call(t, c, "codemode_approve", map[string]any{"executionId": "exec_nope"})
	if !isErr || !strings.Contains(out["error"].(string), `unknown execution "exec_nope" (list them with codemode_executions)`) {
		t.Fatalf("unknown id: %v", out)
	}
}

func TestElicitation(t *testing.T) {
	for _, tc := range []struct {
		action mcp.ElicitationResponseAction
		status string
	}{
		{mcp.ElicitationResponseActionAccept, "completed"},
		{mcp.ElicitationResponseActionDecline, "rejected"},
		{mcp.ElicitationResponseActionCancel, "rejected"},
	} {
		t.Run(string(tc.action), func(t *testing.T) {
			var asked string
			c := connect(t, newServer(t, true), func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				asked = r.Params.Message
				return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: tc.action}}, nil
			})
			out, _ := call(t, c, "codemode", map[string]any{"code": "(await notes.createNote({text: 'via elicitation'})).text"})
			if out["status"] != tc.status {
				t.Fatalf("status %v, want %s: %v", out["status"], tc.status, out)
			}
			if !strings.Contains(asked, "notes.createNote") || !strings.Contains(asked, "via elicitation") {
				t.Errorf("elicitation message must name connector, method and arguments: %q", asked)
			}
			if tc.status == "completed" && out["result"] != "via elicitation" {
				t.Errorf("result: %v", out["result"])
			}
		})
	}
	t.Run("arguments too long to show are not approved here", func(t *testing.T) {
		var asked string
		c := connect(t, newServer(t, true), func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			asked = r.Params.Message
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
		})
		out, _ := call(t, c, "codemode", map[string]any{"code": "await notes.createNote({text: 'é'.repeat(5000) + 'tail'})"})
		if out["status"] != "paused" {
			t.Errorf("accepting arguments the user was not shown whole: status %v, want paused", out["status"])
		}
		if !utf8.ValidString(asked) || utf8.RuneCountInString(asked) > 1200 || strings.Contains(asked, "tail") ||
			!strings.Contains(asked, "10015 bytes, sha256 ") || !strings.Contains(asked, "approvals approve "+out["executionId"].(string)) {
			t.Errorf("elicitation message of %d bytes (valid UTF-8: %v): %q", len(asked), utf8.ValidString(asked), asked)
		}
	})
	t.Run("invisible characters are shown escaped", func(t *testing.T) {
		var asked string
		c := connect(t, newServer(t, true), func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			asked = r.Params.Message
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
		})
		// A right-to-left override makes "exe.txt" read as "txt.exe"; a
		// zero-width space and a terminal escape hide in plain sight.
		call(t, c, "codemode", map[string]any{"code": "await notes.createNote({text: 'a\u202Eexe.txt b\u200Bc \u001b[2J d\U000E0001'})"})
		for _, r := range asked {
			if r == '\u202E' || r == '\u200B' || r == 0x1b || r == 0xE0001 {
				t.Errorf("elicitation message holds %U: %q", r, asked)
			}
		}
		for _, want := range []string{`a\u202Eexe.txt b\u200Bc \u001b[2J d\uDB40\uDC01`} {
			if !strings.Contains(asked, want) {
				t.Errorf("elicitation message %q lacks %s", asked, want)
			}
		}
	})
	t.Run("client without elicitation pauses", func(t *testing.T) {
		c := connect(t, newServer(t, true), nil)
		out, _ := call(t, c, "codemode", map[string]any{"code": "await notes.createNote({text: 'x'})"})
		if out["status"] != "paused" {
			t.Fatalf("want paused: %v", out)
		}
	})
}
