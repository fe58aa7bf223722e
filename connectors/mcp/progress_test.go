package mcp

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/codemode-mcp/codemode-mcp/connectors"
	"github.com/codemode-mcp/codemode-mcp/internal/scrub"
)

// heard returns a context whose CallHook wants progress, and what it has
// heard so far.
func heard() (context.Context, func() []string) {
	var mu sync.Mutex
	var got []string
	ctx := connectors.WithCallHook(context.Background(), &connectors.CallHook{OnProgress: func(msg string) {
		mu.Lock()
		got = append(got, msg)
		mu.Unlock()
	}})
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// TestDownstreamProgressIsRelayed: a call made with a connectors.CallHook
// that wants progress
// in its context goes out with a progress token, and the server's
// notifications/progress about it come back, over every transport.
func TestDownstreamProgressIsRelayed(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			ctx, got := heard()
			if _, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":100}`)); err != nil {
				t.Fatal(err)
			}
			if got := got(); !slices.Equal(got, []string{"started", "halfway"}) {
				t.Errorf("progress %q, want started and halfway", got)
			}
			// Without a receiver, no token goes out and nothing is relayed.
			if _, err := c.Call(context.Background(), "slow", json.RawMessage(`{"ms":10}`)); err != nil {
				t.Fatal(err)
			}
			c.progress.mu.Lock()
			left := len(c.progress.by)
			c.progress.mu.Unlock()
			if left != 0 {
				t.Errorf("%d progress registrations left", left)
			}
		})
	}
}

// A server's progress message reaches the client that started the run,
// so it is scrubbed of secrets and bounded, as any text a server sends.
func TestDownstreamProgressIsScrubbedAndBounded(t *testing.T) {
	cfg := transports[0].config(t) // stdio
	cfg.Scrubber = scrub.New("halfway")
	c := dial(t, cfg)
	ctx, got := heard()
	if _, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":10}`)); err != nil {
		t.Fatal(err)
	}
	if got := got(); !slices.Equal(got, []string{"started", scrub.Placeholder}) {
		t.Errorf("progress %q, want started and the secret halfway scrubbed", got)
	}

	ctx, got = heard()
	ctx, unwatch := c.progress.watch(ctx, "fx")
	defer unwatch()
	n := mcpgo.JSONRPCNotification{}
	n.Params.AdditionalFields = map[string]any{"progressToken": tokenOf(ctx), "progress": 1.0, "message": strings.Repeat("x", 10*maxProgressMessage)}
	c.progress.deliver(n)
	if got := got(); len(got) != 1 || len(got[0]) > maxProgressMessage+len("…") {
		t.Errorf("a progress message of %d bytes was relayed as %d messages of %d bytes, want one of at most %d", 10*maxProgressMessage, len(got), len(strings.Join(got, "")), maxProgressMessage)
	}
}

// TestDownstreamProgressFloodIsCoalesced calls a stdio server that sends
// 10,000 progress reports about the call before answering: they reach the
// client at most one per progressInterval, the latest winning, so the
// last one heard is the server's last, and none out of order.
func TestDownstreamProgressFloodIsCoalesced(t *testing.T) {
	const sent = 10_000
	c := dial(t, Config{Name: "chatty", Command: os.Args[0], Env: map[string]string{progressEnv: strconv.Itoa(sent)}})
	ctx, got := heard()
	began := time.Now()
	if _, err := c.Call(ctx, "flood", nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	heard := got()
	if most := 2 + int(took/progressInterval); len(heard) > most {
		t.Errorf("%d of %d progress reports relayed in %v, want at most %d (one per %v, and the last)", len(heard), sent, took, most, progressInterval)
	}
	last := 0
	for _, msg := range heard {
		n, err := strconv.Atoi(msg)
		if err != nil || n <= last {
			t.Fatalf("relayed %q after %d, want the reports in order", msg, last)
		}
		last = n
	}
	if last != sent {
		t.Errorf("the last report relayed is %d, want the server's last, %d", last, sent)
	}
}

func TestWithMeta(t *testing.T) {
	for _, tc := range []struct{ meta, want string }{
		{"", `{"progressToken":"t-1"}`},
		{"{}", `{"progressToken":"t-1"}`},
		{`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"t-1"}`},
	} {
		if got := string(withMeta(json.RawMessage(tc.meta), "progressToken", "t-1")); got != tc.want {
			t.Errorf("withMeta(%s, progressToken) = %s, want %s", tc.meta, got, tc.want)
		}
	}
}

// TestStdioCallReportsSent: over stdio the connector reports Sent through
// the call's connectors.CallHook once its request is written, before it
// waits for the answer (the server's "halfway", 200 ms after it took the
// call, comes after it), exactly once a call; over HTTP, where mcp-go's
// client sends the request, it reports nothing, and the runtime writes its
// log once the call returns.
func TestStdioCallReportsSent(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := dial(t, tr.config(t))
			var mu sync.Mutex
			var got []string
			note := func(s string) {
				mu.Lock()
				got = append(got, s)
				mu.Unlock()
			}
			ctx := connectors.WithCallHook(context.Background(), &connectors.CallHook{
				OnSent:     func() { note("sent") },
				OnProgress: note,
			})
			if _, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":400}`)); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			got = slices.DeleteFunc(got, func(s string) bool { return s == "started" }) // (it may beat Sent)
			want := []string{"halfway"}
			if tr.name == "stdio" {
				want = []string{"sent", "halfway"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("the hook heard %q (besides \"started\"), want %q", got, want)
			}
		})
	}
}
