package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// brokenServer writes a script that runs the fixture server unless the
// returned file exists, when it fails at start with a message on stderr.
func brokenServer(t *testing.T) (script, broken string) {
	t.Helper()
	dir := t.TempDir()
	script = filepath.Join(dir, "server.sh")
	broken = filepath.Join(dir, "broken")
	body := "#!/bin/sh\nif [ -e '" + broken + "' ]; then echo 'cannot start: broken' >&2; exit 1; fi\nexec '" + fixture.MCPServer(t) + "'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return script, broken
}

// open is dial with Open: the connector may start down.
func open(t *testing.T, cfg Config) *Connector {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// A server down at start: Open succeeds with no tools, calls fail at once
// with an error naming the connector and the reason, and the connector
// brings the server up by itself once it can start, listing its tools and
// calling OnToolsChanged.
func TestOpenStartsDownAndComesUp(t *testing.T) {
	script, broken := brokenServer(t)
	up := make(chan struct{}, 1)
	c := open(t, Config{Name: "fx", Command: script, RestartDelay: 20 * time.Millisecond, MaxRestartDelay: 40 * time.Millisecond,
		OnToolsChanged: func() { up <- struct{}{} }})
	if err := c.Down(); err == nil || !strings.Contains(err.Error(), "cannot start: broken") {
		t.Fatalf("Down() = %v, want the start failure with its stderr", err)
	}
	if tools, err := c.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot start: broken") || len(tools) != 0 {
		t.Fatalf("Tools() = %v, %v; want no tools and why while down", tools, err)
	}
	_, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":"x"}`))
	for _, want := range []string{"fx: the MCP server is unavailable", "cannot start: broken", "in the background"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Call while down: error %v does not contain %q", err, want)
		}
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	<-up
	if err := c.Down(); err != nil {
		t.Errorf("Down() after coming up = %v", err)
	}
	tools, err := c.Tools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools() after coming up = %v, %v", tools, err)
	}
	echo(t, c, "up")
}

// Close during the backoff of a connector that started down ends its
// recovery goroutine and returns (goleak checks nothing is left).
func TestCloseDuringBackoff(t *testing.T) {
	script, _ := brokenServer(t)
	c, err := Open(context.Background(), Config{Name: "fx", Command: script, RestartDelay: time.Hour, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Down() == nil {
		t.Fatal("the server started although it is broken")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
}

// A configuration error still fails Open.
func TestOpenConfigError(t *testing.T) {
	if _, err := Open(context.Background(), Config{Name: "fx"}); err == nil {
		t.Fatal("Open without a command or URL succeeded")
	}
}

// Open's context ending while the server is starting (a shutdown's
// signal) stops the start: the connector is down saying why, and the log
// says the start was stopped, not that the server could not be reached
// (it warned so); so does a call's context ending while it starts a new
// session (it warned that the server could not be reconnected).
func TestStoppedStartSaysSo(t *testing.T) {
	f, url := startFake(t, map[string]string{"": `{"tools":[{"name":"t"}]}`}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.hang, f.onHang = "initialize", cancel
	f.mu.Unlock()
	rec := &recorder{}
	first, err := Open(ctx, Config{Name: "slow", URL: url, StartTimeout: time.Hour, RestartDelay: time.Hour, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })
	if err := first.Down(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Down() = %v, want the start stopped (context canceled)", err)
	}
	said := func(r map[string]string) bool {
		return strings.HasPrefix(r["msg"], "the MCP server's start was stopped before it finished")
	}
	unreachable := func(r map[string]string) bool { return strings.HasPrefix(r["msg"], "the MCP server could not be") }
	if len(rec.find(unreachable)) > 0 || len(rec.find(said)) != 1 {
		t.Errorf("logged %v\nwant that the start was stopped, not that the server could not be reached", rec.find(func(map[string]string) bool { return true }))
	}

	rec = &recorder{}
	f.mu.Lock()
	f.hang = ""
	f.mu.Unlock()
	c := dial(t, Config{Name: "slow", URL: url, Logger: slog.New(rec)})
	ctx, cancel = context.WithCancel(context.Background())
	f.mu.Lock()
	f.hang, f.onHang = "initialize", cancel
	f.mu.Unlock()
	c.mu.RLock()
	s := c.sess
	c.mu.RUnlock()
	c.retire(s, false)
	if _, err := c.Call(ctx, "t", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want the start stopped (context canceled)", err)
	}
	if len(rec.find(unreachable)) > 0 || len(rec.find(said)) != 1 {
		t.Errorf("logged %v\nwant that the start was stopped, not that the server could not be reached", rec.find(func(map[string]string) bool { return true }))
	}
}
