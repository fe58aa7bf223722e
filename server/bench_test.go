package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/catalog"
	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/connectors/notes"
	rt "github.com/codemode-mcp/codemode-mcp/runtime"
	"github.com/codemode-mcp/codemode-mcp/sandbox/pass"
	"github.com/codemode-mcp/codemode-mcp/server"
	"github.com/codemode-mcp/codemode-mcp/store/sqlite"
)

// BenchmarkCodemode is one tools/call of the codemode tool through an
// in-process mcp-go client: request decoding, a new execution record, a
// sandbox pass, the outcome and its JSON, with no transport in between.
// The server runs on a runtime with the built-in notes connector, a SQLite
// store (synchronous NORMAL) in a temporary directory and the default
// retention (max_executions, paused_ttl), as `codemode-mcp serve` would;
// retention=off keeps every execution, which shows what the housekeeping
// done at the start of each run costs.
func BenchmarkCodemode(b *testing.B) {
	for _, bc := range []struct {
		name      string
		retention bool
		code      string
		want      string // the outcome's result, as JSON
	}{
		{"code=trivial/retention=default", true, "1 + 1", "2"},
		{"code=trivial/retention=off", false, "1 + 1", "2"},
		{"code=listNotes/retention=default", true, `async () => { await notes.listNotes({}); return "ok" }`, `"ok"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newBenchClient(b, bc.retention)
			ctx := context.Background()
			req := mcp.CallToolRequest{}
			req.Params.Name = "codemode"
			req.Params.Arguments = map[string]any{"code": bc.code}
			for b.Loop() {
				res, err := c.CallTool(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if got := benchResult(b, res); got != bc.want {
					b.Fatalf("result %s, want %s", got, bc.want)
				}
			}
		})
	}
}

// newBenchClient starts a server on a fresh runtime, with the default
// retention or none, and returns an initialized in-process client for it.
// Cleanups close everything; TestMain checks that no goroutine outlives
// them.
func newBenchClient(b *testing.B, retention bool) *client.Client {
	b.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Synchronous: "normal", Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeOrFail(b, "store", st.Close) })
	n := notes.New(notes.Name, st)
	exec := pass.NewInProcess(pass.InProcessOptions{})
	b.Cleanup(func() { closeOrFail(b, "executor", exec.Close) })
	opts := rt.Options{
		Store:    st,
		Executor: exec,
		Sources:  []catalog.Source{{Connector: n}},
		Logger:   log,
	}
	if retention {
		opts.MaxExecutions, opts.PausedTTL = config.DefaultMaxExecutions, config.DefaultPausedTTL
	}
	r, err := rt.New(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeOrFail(b, "runtime", r.Close) })

	srv := server.New(server.Options{Runtime: r, Version: "bench", Logger: log})
	c, err := client.NewInProcessClient(srv.MCP())
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeOrFail(b, "client", c.Close) })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchResult returns the result of a completed outcome as JSON.
func benchResult(b *testing.B, res *mcp.CallToolResult) string {
	b.Helper()
	if len(res.Content) != 1 {
		b.Fatalf("%d content items, want 1", len(res.Content))
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		b.Fatalf("content is %T, want text", res.Content[0])
	}
	var o struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal([]byte(tc.Text), &o); err != nil {
		b.Fatalf("decode outcome %q: %v", tc.Text, err)
	}
	if res.IsError || o.Status != "completed" {
		b.Fatalf("outcome %s: %s", o.Status, o.Error)
	}
	return string(o.Result)
}

func closeOrFail(b *testing.B, what string, close func() error) {
	if err := close(); err != nil {
		b.Errorf("close %s: %v", what, err)
	}
}
